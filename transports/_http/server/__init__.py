"""The Streamable HTTP server (private: `transports` re-exports its API).

One concept per module: `listener` (``serve_http``), `router` (protection and era
routing), `modern` (2026-07-28), `legacy` and `streams` (2025-03-26 … 2025-11-25
sessions and resumable streams), `sse2024` (2024-11-05 HTTP+SSE), `sessions`,
`event_store`. Only `listener` needs trio (the rest also serves the ASGI app,
`transports._asgi`), so this package does not import it. The HTTP/1.1 connection,
replies, the gate, bearer auth and the limits are `transports._net`'s, shared with the
WebSocket server.
"""

from transports._http.server.event_store import EventStore, MemoryEventStore, StoredEvent
from transports._net.auth import BearerAuth, Principal, TokenVerifier
from transports._net.limits import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    KEEPALIVE_TIMEOUT,
    MAX_BODY_SIZE,
    MAX_CONNECTIONS,
    MAX_HEADER_COUNT,
    MAX_HEADER_SIZE,
    MAX_SESSIONS,
    SESSION_HANDSHAKE_TIMEOUT,
    SESSION_IDLE_TIMEOUT,
    SSE_KEEPALIVE_INTERVAL,
    HttpLimits,
)
from transports._net.reply import ReplyMode

__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "KEEPALIVE_TIMEOUT",
    "MAX_BODY_SIZE",
    "MAX_CONNECTIONS",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_SIZE",
    "MAX_SESSIONS",
    "SESSION_HANDSHAKE_TIMEOUT",
    "SESSION_IDLE_TIMEOUT",
    "SSE_KEEPALIVE_INTERVAL",
    "BearerAuth",
    "EventStore",
    "HttpLimits",
    "MemoryEventStore",
    "Principal",
    "ReplyMode",
    "StoredEvent",
    "TokenVerifier",
]
