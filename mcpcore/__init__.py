"""mcpcore: the Model Context Protocol as a sans-IO state machine.

Bytes in, events out; actions in, bytes out. ``Connection(CLIENT)`` or
``Connection(SERVER)`` speaks both protocol eras (the 2024-11-05 … 2025-11-25
handshake, and the stateless 2026-07-28) with no IO at all, so any event loop (or
none) can drive it: `Connection.receive` turns the peer's bytes into the events
exported here (`RequestReceived`, `ResponseReceived`, ...), and each action
(`Connection.send_request`, `Connection.send_result`, ...) returns the bytes to write.
What goes wrong is a `LocalProtocolError` (our misuse) or a `RemoteProtocolError`
(the peer's); the limits the core enforces are the ``MAX_*`` constants.

The public subpackages and modules, each with its own ``__all__``:

- `mcpcore.types`: every MCP type of every revision, as msgspec Structs.
- `mcpcore.server` and `mcpcore.client`: a server's features and a client's session
  on top of the `Connection`, still without IO.
- `mcpcore.framing` (NDJSON lines, server-sent events) and `mcpcore.http` (the rules
  of Streamable HTTP), for drivers.
- `mcpcore.jsonrpc`, `mcpcore.methods`, `mcpcore.versions`, `mcpcore.events`,
  `mcpcore.errors`: the pieces re-exported here, and more detail.
- `mcpcore.jsonschema` and `mcpcore.uritemplate`: the validators tools and resource
  templates need.

Every other module has an underscore in its name: it is how mcpcore works, not what
it offers, and may change at any time.
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
