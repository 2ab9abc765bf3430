"""Trio drivers for mcpcore: stdio, Streamable HTTP and WebSocket (wsproto).

Needs the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers only move
bytes: every protocol decision is made by `mcpcore.Connection`. The folder server of
``mcpcore serve`` lives in `mcpcore_cli.folder`, on top of these.
"""

# Say which extra to install, not just which module is missing (`pip install mcpcore`
# installs the core alone: msgspec).
try:
    import trio  # noqa: F401 (imported to be checked; the modules below use them)
    import wsproto  # noqa: F401
except ImportError as _missing:
    raise ImportError(
        f"transports needs {_missing.name}, which is not installed: pip install 'mcpcore[trio]'",
        name=_missing.name,
    ) from _missing

from transports._client.calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT, ProgressCallback
from transports._client.client import Client
from transports._client.errors import ConnectionClosedError, ServerExitedError
from transports._client.notifications import (
    MAX_LISTEN_BACKLOG,
    MAX_QUEUED_NOTIFICATIONS,
    NotificationCallback,
    Subscription,
)
from transports._client.routing import MAX_SERVER_REQUESTS
from transports._client.transport import ClientTransport
from transports._http.client import (
    CONNECT_TIMEOUT,
    MAX_CLIENT_CONNECTIONS,
    MAX_IDLE_CONNECTIONS,
    HttpAuth,
    HttpClient,
    HttpStatusError,
    open_http_client,
)
from transports._http.server import (
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
    BearerAuth,
    EventStore,
    HttpLimits,
    MemoryEventStore,
    Principal,
    ReplyMode,
    StoredEvent,
    TokenVerifier,
    serve_http,
)
from transports._http.server.listener import DEFAULT_PATH as DEFAULT_HTTP_PATH
from transports._net.partial import MAX_PARTIAL_BYTES, PARTIAL_FLOOR
from transports._runtime.admission import MAX_WAITING_BYTES, MAX_WAITING_REQUESTS
from transports._runtime.busypoll import RECOMMENDED_BUSY_POLL, BusyPolling
from transports._runtime.serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
from transports._runtime.writer import MAX_QUEUED_MESSAGES
from transports._stdio.client import StderrOption, StdioClient, open_stdio_client
from transports._stdio.server import serve_stdio
from transports._websocket import MAX_MESSAGE_SIZE as MAX_WEBSOCKET_MESSAGE_SIZE
from transports._websocket import (
    WebSocketClient,
    WebSocketLimits,
    open_websocket_client,
    serve_websocket,
)
from transports._websocket.listener import DEFAULT_PATH as DEFAULT_WEBSOCKET_PATH

__all__ = [
    "BODY_TIMEOUT",
    "CONNECT_TIMEOUT",
    "DEFAULT_HTTP_PATH",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WEBSOCKET_PATH",
    "HEADER_TIMEOUT",
    "KEEPALIVE_TIMEOUT",
    "MAX_BODY_SIZE",
    "MAX_CLIENT_CONNECTIONS",
    "MAX_CONCURRENT_HANDLERS",
    "MAX_CONNECTIONS",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_SIZE",
    "MAX_IDLE_CONNECTIONS",
    "MAX_LISTEN_BACKLOG",
    "MAX_PARTIAL_BYTES",
    "MAX_QUEUED_MESSAGES",
    "MAX_QUEUED_NOTIFICATIONS",
    "MAX_SERVER_REQUESTS",
    "MAX_SESSIONS",
    "MAX_TOTAL_TIMEOUT",
    "MAX_WAITING_BYTES",
    "MAX_WAITING_REQUESTS",
    "MAX_WEBSOCKET_MESSAGE_SIZE",
    "PARTIAL_FLOOR",
    "RECOMMENDED_BUSY_POLL",
    "SESSION_HANDSHAKE_TIMEOUT",
    "SESSION_IDLE_TIMEOUT",
    "SHUTDOWN_GRACE",
    "SSE_KEEPALIVE_INTERVAL",
    "BearerAuth",
    "BusyPolling",
    "Client",
    "ClientTransport",
    "ConnectionClosedError",
    "EventStore",
    "HttpAuth",
    "HttpClient",
    "HttpLimits",
    "HttpStatusError",
    "MemoryEventStore",
    "NotificationCallback",
    "Principal",
    "ProgressCallback",
    "ReplyMode",
    "ServerExitedError",
    "StderrOption",
    "StdioClient",
    "StoredEvent",
    "Subscription",
    "TokenVerifier",
    "WebSocketClient",
    "WebSocketLimits",
    "open_http_client",
    "open_stdio_client",
    "open_websocket_client",
    "serve_http",
    "serve_stdio",
    "serve_websocket",
]
