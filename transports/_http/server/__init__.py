"""The Streamable HTTP server on trio and h11 (private: `transports` re-exports its API).

One concept per module: `_listener` (``serve_http``), `_connection` (one TCP connection,
HTTP/1.1), `_reply` (writing a response), `_router` (protection and era routing),
`_auth`, `_modern` (2026-07-28), `_legacy` and `_streams` (2025-03-26 … 2025-11-25
sessions and resumable streams), `_sse2024` (2024-11-05 HTTP+SSE), `_sessions`,
`_event_store`, `_limits`.
"""

from transports._http.server.event_store import EventStore, MemoryEventStore, StoredEvent
from transports._http.server.listener import serve_http
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
    "serve_http",
]
