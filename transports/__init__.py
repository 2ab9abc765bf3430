"""Trio drivers for mcpcore: stdio, Streamable HTTP (h11) and WebSocket (wsproto).

Needs the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers only move
bytes: every protocol decision is made by `mcpcore.Connection`. `serve_folder` (the
``mcpcore serve`` command) serves a folder's files over any of them.
"""

import typing

from transports import _extra

try:
    from transports._admission import MAX_WAITING_BYTES, MAX_WAITING_REQUESTS
    from transports._busypoll import DEFAULT_BUSY_POLL
    from transports._client_calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT, ProgressCallback
    from transports._client_errors import ConnectionClosedError, ServerExitedError
    from transports._client_notifications import (
        MAX_LISTEN_BACKLOG,
        MAX_QUEUED_NOTIFICATIONS,
        NotificationCallback,
        Subscription,
    )
    from transports._client_routing import MAX_SERVER_REQUESTS
    from transports._client_transport import ClientTransport
    from transports._folder import (
        DEFAULT_MAX_FILE_SIZE,
        LISTING_PAGE_SIZE,
        MAX_LISTED_FILES,
        MAX_WATCHED_FOLDERS,
        Folder,
        FolderTransport,
        build_folder_server,
        serve_folder,
        watch_folder,
    )
    from transports._httpclient import (
        CONNECT_TIMEOUT,
        MAX_CLIENT_CONNECTIONS,
        MAX_IDLE_CONNECTIONS,
        HttpAuth,
        HttpClient,
        HttpStatusError,
        open_http_client,
    )
    from transports._httpserver import (
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
    from transports._partial import MAX_PARTIAL_BYTES, PARTIAL_FLOOR
    from transports._serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
    from transports._stdio_client import StderrOption, StdioClient, open_stdio_client
    from transports._stdio_server import serve_stdio
    from transports._websocket import (
        WebSocketClient,
        WebSocketLimits,
        open_websocket_client,
        serve_websocket,
    )
    from transports._writer import MAX_QUEUED_MESSAGES
    from transports.client import Client
except ImportError as _error:
    # Installed without the trio extra: `import transports` still works, so that the
    # `mcpcore` command (transports.cli) can say what to install instead of crashing;
    # any name asked of the package raises an ImportError that says it.
    if not _extra.missing_extra(_error):
        raise
    _MISSING = _error

    if not typing.TYPE_CHECKING:

        def __getattr__(name: str) -> object:
            message = _extra.missing_extra_message(f"transports.{name}", _MISSING)
            raise ImportError(message, name=_MISSING.name) from _MISSING


__all__ = [
    "BODY_TIMEOUT",
    "CONNECT_TIMEOUT",
    "DEFAULT_BUSY_POLL",
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_TIMEOUT",
    "HEADER_TIMEOUT",
    "KEEPALIVE_TIMEOUT",
    "LISTING_PAGE_SIZE",
    "MAX_BODY_SIZE",
    "MAX_CLIENT_CONNECTIONS",
    "MAX_CONCURRENT_HANDLERS",
    "MAX_CONNECTIONS",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_SIZE",
    "MAX_IDLE_CONNECTIONS",
    "MAX_LISTED_FILES",
    "MAX_LISTEN_BACKLOG",
    "MAX_PARTIAL_BYTES",
    "MAX_QUEUED_MESSAGES",
    "MAX_QUEUED_NOTIFICATIONS",
    "MAX_SERVER_REQUESTS",
    "MAX_SESSIONS",
    "MAX_TOTAL_TIMEOUT",
    "MAX_WAITING_BYTES",
    "MAX_WAITING_REQUESTS",
    "MAX_WATCHED_FOLDERS",
    "PARTIAL_FLOOR",
    "SESSION_HANDSHAKE_TIMEOUT",
    "SESSION_IDLE_TIMEOUT",
    "SHUTDOWN_GRACE",
    "SSE_KEEPALIVE_INTERVAL",
    "BearerAuth",
    "Client",
    "ClientTransport",
    "ConnectionClosedError",
    "EventStore",
    "Folder",
    "FolderTransport",
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
    "build_folder_server",
    "open_http_client",
    "open_stdio_client",
    "open_websocket_client",
    "serve_folder",
    "serve_http",
    "serve_stdio",
    "serve_websocket",
    "watch_folder",
]
