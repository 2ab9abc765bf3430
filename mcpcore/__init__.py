"""mcpcore: the Model Context Protocol as a sans-IO state machine.

Bytes in, events out; actions in, bytes out. `Connection` speaks both protocol eras
(the 2024-11-05 … 2025-11-25 handshake, and the stateless 2026-07-28) with no IO at
all, so any event loop (or none) can drive it. `mcpcore.types` holds every MCP type
as a msgspec Struct; `mcpcore.framing` splits byte streams into messages.

Everything public is re-exported here; the submodules behind it are private.
"""

from __future__ import annotations

from mcpcore._connection import (
    MAX_RECENTLY_CLOSED_IDS,
    MAX_REQUESTS_IN_FLIGHT,
    MAX_SUBSCRIPTIONS,
    Connection,
)
from mcpcore._state import Phase, Side
from mcpcore.errors import LocalProtocolError, McpError, ProtocolError, RemoteProtocolError
from mcpcore.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
)
from mcpcore.jsonrpc import MAX_JSON_DEPTH
from mcpcore.methods import DEFAULT_METHODS, Direction, MethodSpec, MethodTable
from mcpcore.versions import (
    ALL_VERSIONS,
    LATEST_LEGACY_VERSION,
    LATEST_MODERN_VERSION,
    LATEST_VERSION,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    Era,
)

__version__ = "0.1.0"

#: The client end of a conversation: ``Connection(CLIENT)``.
CLIENT = Side.CLIENT
#: The server end of a conversation: ``Connection(SERVER)``.
SERVER = Side.SERVER

__all__ = [
    "ALL_VERSIONS",
    "CLIENT",
    "DEFAULT_METHODS",
    "LATEST_LEGACY_VERSION",
    "LATEST_MODERN_VERSION",
    "LATEST_VERSION",
    "LEGACY_VERSIONS",
    "MAX_JSON_DEPTH",
    "MAX_RECENTLY_CLOSED_IDS",
    "MAX_REQUESTS_IN_FLIGHT",
    "MAX_SUBSCRIPTIONS",
    "MODERN_VERSIONS",
    "SERVER",
    "CancelRequested",
    "Connection",
    "Direction",
    "Era",
    "ErrorReceived",
    "Event",
    "InvalidMessage",
    "InvalidResponse",
    "LocalProtocolError",
    "McpError",
    "MethodSpec",
    "MethodTable",
    "NotificationReceived",
    "Phase",
    "ProgressReceived",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestReceived",
    "ResponseReceived",
    "Side",
    "SubscriptionEnded",
    "__version__",
]
