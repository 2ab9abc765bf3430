"""Every limit of the HTTP server, named, with the reason for its value.

`HttpLimits` groups them so that `transports.serve_http` takes one argument for all of
them; each default is the constant of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from transports._net.partial import MAX_PARTIAL_BYTES

__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "KEEPALIVE_TIMEOUT",
    "MAX_BODY_SIZE",
    "MAX_CONNECTIONS",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_SIZE",
    "MAX_PARTIAL_BYTES",
    "MAX_PIPELINED_BYTES",
    "MAX_SESSIONS",
    "MAX_SESSION_HANDLERS",
    "MAX_STREAM_BACKLOG",
    "NUDGE_DELAY",
    "READ_SIZE",
    "SESSION_HANDSHAKE_TIMEOUT",
    "SESSION_IDLE_TIMEOUT",
    "SSE_KEEPALIVE_INTERVAL",
    "SSE_RETRY_MS",
    "WATCH_DELAY",
    "WRITE_TIMEOUT",
    "HttpLimits",
]

#: Bytes of request body accepted (413 past it): the TypeScript SDK's limit. A JSON-RPC
#: request is rarely over a few kilobytes; this leaves room for large tool arguments.
#: Bodies being received also share the process's budget for partial messages
#: (`transports.MAX_PARTIAL_BYTES`): past it a large one gets 413 with Retry-After.
MAX_BODY_SIZE: Final = 4 * 1024 * 1024
#: Bytes of request line and headers together (431 past it): h11's default, and about
#: what nginx (8 KiB per line, 4 lines) and node (16 KiB) allow.
MAX_HEADER_SIZE: Final = 16 * 1024
#: Header fields per request (431 past it): node's default (``maxHeadersCount``).
MAX_HEADER_COUNT: Final = 100
#: Seconds a client has to send a whole request head, from the connection's start or
#: the request's first byte (408 and close past it): the slowloris defence. Apache's
#: ``RequestReadTimeout`` default is 20-40 s; real clients send a head in one packet.
HEADER_TIMEOUT: Final = 10.0
#: Seconds a client has to send a request body once its head arrived (408 past it).
#: 4 MiB at a slow 1 Mbit/s takes ~34 s.
BODY_TIMEOUT: Final = 60.0
#: Seconds an idle keep-alive connection is kept (then closed, as HTTP/1.1 allows).
#: Idle connections count against `MAX_CONNECTIONS`; MCP clients reconnect cheaply.
KEEPALIVE_TIMEOUT: Final = 30.0
#: Seconds a write may wait for a client that reads nothing before the connection is
#: treated as dead (the runtime's `transports._runtime.writer.WRITE_TIMEOUT`).
WRITE_TIMEOUT: Final = 30.0
#: TCP connections served at once; past it new ones get 503 and are closed. Each costs
#: two tasks and the connection's buffers (~20 KB).
MAX_CONNECTIONS: Final = 1024
#: Bytes of pipelined requests read ahead while a response is in progress; past it the
#: connection is not read until the response is done (HTTP/1.1 answers in order).
MAX_PIPELINED_BYTES: Final = 64 * 1024
#: Bytes asked of the socket per read: a burst of pipelined requests in one call.
READ_SIZE: Final = 64 * 1024
#: Seconds without a message before an event stream gets a keep-alive comment, so that
#: proxies with idle timeouts (nginx: 60 s) don't cut it, which 2026-07-28 would read
#: as a cancellation (CHECKLIST G5).
SSE_KEEPALIVE_INTERVAL: Final = 15.0
#: The ``retry:`` (milliseconds) of the priming event that opens a legacy stream
#: (2025-11-25 SSE polling): how long a client waits before resuming a closed stream.
SSE_RETRY_MS: Final = 1000
#: Legacy sessions held at once: the Python SDK bounds them too (``max_sessions``).
#: Each holds a Connection and its streams' events. At the cap a new client still gets
#: a session: an idle one (no open stream, nothing in flight) is evicted for it, those
#: whose handshake never completed first, then the least recently used; only when
#: every session is busy does a new client get 503. An evicted session's id gets 404,
#: which tells its client to start a new session (2025-03-26 basic/transports).
MAX_SESSIONS: Final = 1024
#: Seconds a legacy session may stay unused (no request, no open stream) before it
#: expires (404 afterwards): clients that vanish without DELETE free their session.
SESSION_IDLE_TIMEOUT: Final = 30 * 60.0
#: Seconds a legacy session may wait for its handshake to complete, that is for its
#: client to come back with its id (``notifications/initialized``, or any request),
#: before it expires. SDK clients send ``notifications/initialized`` as soon as the
#: ``initialize`` answer arrives; sessions opened by a flood of ``initialize`` requests
#: and never used are gone within this, instead of holding the table for
#: `SESSION_IDLE_TIMEOUT`.
SESSION_HANDSHAKE_TIMEOUT: Final = 30.0
#: Requests of one legacy session handled at once; past it, further request POSTs wait
#: (backpressure, as the stdio runtime stops reading).
MAX_SESSION_HANDLERS: Final = 64
#: Messages waiting for one event stream's client to read them; a client that falls
#: this far behind loses the connection and resumes from the event store.
MAX_STREAM_BACKLOG: Final = 256


#: Seconds after a request began when the answer's `ResponseWriter.nudge` is called, if
#: it is still running: a hundredth of a second is "immediately" for a client waiting
#: for an answer stream's first event (SEP-1699 priming), and most calls are answered
#: sooner, in one write.
NUDGE_DELAY: Final = 0.01
#: Seconds a request may run before the watcher starts reading the connection. A client
#: that hangs up during a request is noticed this late at worst; a request answered
#: sooner never pays for the watching.
WATCH_DELAY: Final = 0.05


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The limits of `transports.serve_http` (each default is the constant of its name).

    Attributes:
        max_body_size: See `MAX_BODY_SIZE`.
        max_partial_bytes: Bytes all connections of the process together may hold in
            bodies (and WebSocket messages) not yet complete, beyond 64 KiB each
            (`transports.MAX_PARTIAL_BYTES`; one budget per process, the smallest
            setting of the servers running applies).
        max_header_size: See `MAX_HEADER_SIZE`.
        max_header_count: See `MAX_HEADER_COUNT`.
        header_timeout: See `HEADER_TIMEOUT`.
        body_timeout: See `BODY_TIMEOUT`.
        keepalive_timeout: See `KEEPALIVE_TIMEOUT`.
        write_timeout: See `WRITE_TIMEOUT`.
        max_connections: See `MAX_CONNECTIONS`.
        sse_keepalive_interval: See `SSE_KEEPALIVE_INTERVAL`.
        sse_retry_ms: See `SSE_RETRY_MS`.
        max_sessions: See `MAX_SESSIONS`.
        session_idle_timeout: See `SESSION_IDLE_TIMEOUT`.
        session_handshake_timeout: See `SESSION_HANDSHAKE_TIMEOUT`.
        max_session_handlers: See `MAX_SESSION_HANDLERS`.
        max_stream_backlog: See `MAX_STREAM_BACKLOG`.
    """

    max_body_size: int = MAX_BODY_SIZE
    max_partial_bytes: int = MAX_PARTIAL_BYTES
    max_header_size: int = MAX_HEADER_SIZE
    max_header_count: int = MAX_HEADER_COUNT
    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    keepalive_timeout: float = KEEPALIVE_TIMEOUT
    write_timeout: float = WRITE_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    sse_keepalive_interval: float = SSE_KEEPALIVE_INTERVAL
    sse_retry_ms: int = SSE_RETRY_MS
    max_sessions: int = MAX_SESSIONS
    session_idle_timeout: float = SESSION_IDLE_TIMEOUT
    session_handshake_timeout: float = SESSION_HANDSHAKE_TIMEOUT
    max_session_handlers: int = MAX_SESSION_HANDLERS
    max_stream_backlog: int = MAX_STREAM_BACKLOG

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
