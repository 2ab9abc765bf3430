"""Drivers for mcpcore: stdio, Streamable HTTP and WebSocket on trio, and an ASGI app.

The trio drivers need the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers
only move bytes: every protocol decision is made by `mcpcore.Connection`. The folder
server of ``mcpcore serve`` lives in `mcpcore_cli.folder`, on top of these.

Names are imported when first used (PEP 562), so that what runs without trio (the ASGI
app, the asyncio stdio server) can be imported where trio is not installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from transports._asgi.app import AsgiApp
    from transports._asgi.connections import MAX_POOLED_CONNECTIONS
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
    from transports._deploy.deployment import DEFAULT_NAMESPACE, Deployment
    from transports._deploy.orphans import ORPHAN_GRACE
    from transports._deploy.relay import (
        LIVENESS_INTERVAL,
        MAX_FORWARDED_REQUESTS,
        RELAY_BACKLOG,
        RELAY_CHUNK_SIZE,
        WORKER_NAME_BYTES,
    )
    from transports._deploy.shared import RECHECK_INTERVAL as REDIS_RECHECK_INTERVAL
    from transports._deploy.task_store import MAX_SHARED_TASKS
    from transports._http.client import (
        CONNECT_TIMEOUT,
        MAX_CLIENT_CONNECTIONS,
        MAX_IDLE_CONNECTIONS,
        HttpAuth,
        HttpClient,
        HttpStatusError,
        InMemoryTokenStorage,
        OAuth,
        TokenStorage,
        open_http_client,
    )
    from transports._http.client.oauth import (
        MAX_AUTHORIZATIONS,
        MAX_CHALLENGE_RETRIES,
        MAX_REMEMBERED_CLIENTS,
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
    )
    from transports._http.server.listener import DEFAULT_PATH as DEFAULT_HTTP_PATH
    from transports._http.server.listener import serve_http
    from transports._http.server.modern import MAX_REMEMBERED_REQUESTS
    from transports._net.gate import MAX_REMEMBERED_ORIGINS
    from transports._net.introspection import (
        INTROSPECTION_CACHE_SIZE,
        INTROSPECTION_CACHE_TTL,
        INTROSPECTION_LEEWAY,
        INTROSPECTION_REFUSAL_CACHE_SIZE,
        INTROSPECTION_REFUSAL_TTL,
        INTROSPECTION_TIMEOUT,
        MAX_INTROSPECTION_SIZE,
        IntrospectionVerifier,
    )
    from transports._net.jwt_verifier import (
        JWKS_CACHE_TTL,
        JWKS_FETCH_TIMEOUT,
        JWKS_REFETCH_INTERVAL,
        JWT_LEEWAY,
        MAX_JWKS_SIZE,
        JwtVerifier,
    )
    from transports._net.partial import MAX_PARTIAL_BYTES, PARTIAL_FLOOR
    from transports._redis import COMMAND_TIMEOUT as REDIS_COMMAND_TIMEOUT
    from transports._redis import CONNECT_TIMEOUT as REDIS_CONNECT_TIMEOUT
    from transports._redis import MAX_BUFFERED_MESSAGES as REDIS_MAX_BUFFERED_MESSAGES
    from transports._redis import MAX_PENDING_COMMANDS as REDIS_MAX_PENDING_COMMANDS
    from transports._redis import RedisUnavailableError
    from transports._runtime.admission import MAX_WAITING_BYTES, MAX_WAITING_REQUESTS
    from transports._runtime.busypoll import RECOMMENDED_BUSY_POLL, BusyPolling
    from transports._runtime.serving import MAX_CONCURRENT_HANDLERS, SECRET_SIZE, SHUTDOWN_GRACE
    from transports._runtime.writer import MAX_QUEUED_MESSAGES
    from transports._stdio.asyncio_server import serve_stdio_asyncio
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

#: Where each public name lives: (module, name there).
_EXPORTS: Final[dict[str, tuple[str, str]]] = {
    "AsgiApp": ("transports._asgi.app", "AsgiApp"),
    "MAX_POOLED_CONNECTIONS": ("transports._asgi.connections", "MAX_POOLED_CONNECTIONS"),
    "MAX_REMEMBERED_ORIGINS": ("transports._net.gate", "MAX_REMEMBERED_ORIGINS"),
    "MAX_REMEMBERED_REQUESTS": ("transports._http.server.modern", "MAX_REMEMBERED_REQUESTS"),
    "BODY_TIMEOUT": ("transports._http.server", "BODY_TIMEOUT"),
    "BearerAuth": ("transports._http.server", "BearerAuth"),
    "BusyPolling": ("transports._runtime.busypoll", "BusyPolling"),
    "CONNECT_TIMEOUT": ("transports._http.client", "CONNECT_TIMEOUT"),
    "Client": ("transports._client.client", "Client"),
    "ClientTransport": ("transports._client.transport", "ClientTransport"),
    "ConnectionClosedError": ("transports._client.errors", "ConnectionClosedError"),
    "DEFAULT_NAMESPACE": ("transports._deploy.deployment", "DEFAULT_NAMESPACE"),
    "Deployment": ("transports._deploy.deployment", "Deployment"),
    "LIVENESS_INTERVAL": ("transports._deploy.relay", "LIVENESS_INTERVAL"),
    "MAX_FORWARDED_REQUESTS": ("transports._deploy.relay", "MAX_FORWARDED_REQUESTS"),
    "RELAY_BACKLOG": ("transports._deploy.relay", "RELAY_BACKLOG"),
    "MAX_SHARED_TASKS": ("transports._deploy.task_store", "MAX_SHARED_TASKS"),
    "ORPHAN_GRACE": ("transports._deploy.orphans", "ORPHAN_GRACE"),
    "RedisUnavailableError": ("transports._redis", "RedisUnavailableError"),
    "REDIS_COMMAND_TIMEOUT": ("transports._redis", "COMMAND_TIMEOUT"),
    "REDIS_CONNECT_TIMEOUT": ("transports._redis", "CONNECT_TIMEOUT"),
    "REDIS_MAX_BUFFERED_MESSAGES": ("transports._redis", "MAX_BUFFERED_MESSAGES"),
    "REDIS_MAX_PENDING_COMMANDS": ("transports._redis", "MAX_PENDING_COMMANDS"),
    "REDIS_RECHECK_INTERVAL": ("transports._deploy.shared", "RECHECK_INTERVAL"),
    "WORKER_NAME_BYTES": ("transports._deploy.relay", "WORKER_NAME_BYTES"),
    "RELAY_CHUNK_SIZE": ("transports._deploy.relay", "RELAY_CHUNK_SIZE"),
    "DEFAULT_HTTP_PATH": ("transports._http.server.listener", "DEFAULT_PATH"),
    "DEFAULT_TIMEOUT": ("transports._client.calls", "DEFAULT_TIMEOUT"),
    "DEFAULT_WEBSOCKET_PATH": ("transports._websocket.listener", "DEFAULT_PATH"),
    "EventStore": ("transports._http.server", "EventStore"),
    "HEADER_TIMEOUT": ("transports._http.server", "HEADER_TIMEOUT"),
    "HttpAuth": ("transports._http.client", "HttpAuth"),
    "HttpClient": ("transports._http.client", "HttpClient"),
    "HttpLimits": ("transports._http.server", "HttpLimits"),
    "HttpStatusError": ("transports._http.client", "HttpStatusError"),
    "InMemoryTokenStorage": ("transports._http.client", "InMemoryTokenStorage"),
    "MAX_AUTHORIZATIONS": ("transports._http.client.oauth", "MAX_AUTHORIZATIONS"),
    "MAX_CHALLENGE_RETRIES": ("transports._http.client.oauth", "MAX_CHALLENGE_RETRIES"),
    "MAX_REMEMBERED_CLIENTS": ("transports._http.client.oauth", "MAX_REMEMBERED_CLIENTS"),
    "OAuth": ("transports._http.client", "OAuth"),
    "TokenStorage": ("transports._http.client", "TokenStorage"),
    "KEEPALIVE_TIMEOUT": ("transports._http.server", "KEEPALIVE_TIMEOUT"),
    "MAX_BODY_SIZE": ("transports._http.server", "MAX_BODY_SIZE"),
    "MAX_CLIENT_CONNECTIONS": ("transports._http.client", "MAX_CLIENT_CONNECTIONS"),
    "MAX_CONCURRENT_HANDLERS": ("transports._runtime.serving", "MAX_CONCURRENT_HANDLERS"),
    "MAX_CONNECTIONS": ("transports._http.server", "MAX_CONNECTIONS"),
    "MAX_HEADER_COUNT": ("transports._http.server", "MAX_HEADER_COUNT"),
    "MAX_HEADER_SIZE": ("transports._http.server", "MAX_HEADER_SIZE"),
    "MAX_IDLE_CONNECTIONS": ("transports._http.client", "MAX_IDLE_CONNECTIONS"),
    "MAX_LISTEN_BACKLOG": ("transports._client.notifications", "MAX_LISTEN_BACKLOG"),
    "MAX_PARTIAL_BYTES": ("transports._net.partial", "MAX_PARTIAL_BYTES"),
    "MAX_QUEUED_MESSAGES": ("transports._runtime.writer", "MAX_QUEUED_MESSAGES"),
    "MAX_QUEUED_NOTIFICATIONS": ("transports._client.notifications", "MAX_QUEUED_NOTIFICATIONS"),
    "MAX_SERVER_REQUESTS": ("transports._client.routing", "MAX_SERVER_REQUESTS"),
    "MAX_SESSIONS": ("transports._http.server", "MAX_SESSIONS"),
    "MAX_TOTAL_TIMEOUT": ("transports._client.calls", "MAX_TOTAL_TIMEOUT"),
    "MAX_WAITING_BYTES": ("transports._runtime.admission", "MAX_WAITING_BYTES"),
    "MAX_WAITING_REQUESTS": ("transports._runtime.admission", "MAX_WAITING_REQUESTS"),
    "MAX_WEBSOCKET_MESSAGE_SIZE": ("transports._websocket", "MAX_MESSAGE_SIZE"),
    "MemoryEventStore": ("transports._http.server", "MemoryEventStore"),
    "NotificationCallback": ("transports._client.notifications", "NotificationCallback"),
    "PARTIAL_FLOOR": ("transports._net.partial", "PARTIAL_FLOOR"),
    "Principal": ("transports._http.server", "Principal"),
    "ProgressCallback": ("transports._client.calls", "ProgressCallback"),
    "RECOMMENDED_BUSY_POLL": ("transports._runtime.busypoll", "RECOMMENDED_BUSY_POLL"),
    "ReplyMode": ("transports._http.server", "ReplyMode"),
    "SESSION_HANDSHAKE_TIMEOUT": ("transports._http.server", "SESSION_HANDSHAKE_TIMEOUT"),
    "SESSION_IDLE_TIMEOUT": ("transports._http.server", "SESSION_IDLE_TIMEOUT"),
    "SECRET_SIZE": ("transports._runtime.serving", "SECRET_SIZE"),
    "SHUTDOWN_GRACE": ("transports._runtime.serving", "SHUTDOWN_GRACE"),
    "SSE_KEEPALIVE_INTERVAL": ("transports._http.server", "SSE_KEEPALIVE_INTERVAL"),
    "ServerExitedError": ("transports._client.errors", "ServerExitedError"),
    "StderrOption": ("transports._stdio.client", "StderrOption"),
    "StdioClient": ("transports._stdio.client", "StdioClient"),
    "StoredEvent": ("transports._http.server", "StoredEvent"),
    "Subscription": ("transports._client.notifications", "Subscription"),
    "TokenVerifier": ("transports._http.server", "TokenVerifier"),
    "JwtVerifier": ("transports._net.jwt_verifier", "JwtVerifier"),
    "JWKS_CACHE_TTL": ("transports._net.jwt_verifier", "JWKS_CACHE_TTL"),
    "JWKS_FETCH_TIMEOUT": ("transports._net.jwt_verifier", "JWKS_FETCH_TIMEOUT"),
    "JWKS_REFETCH_INTERVAL": ("transports._net.jwt_verifier", "JWKS_REFETCH_INTERVAL"),
    "JWT_LEEWAY": ("transports._net.jwt_verifier", "JWT_LEEWAY"),
    "MAX_JWKS_SIZE": ("transports._net.jwt_verifier", "MAX_JWKS_SIZE"),
    "IntrospectionVerifier": ("transports._net.introspection", "IntrospectionVerifier"),
    "INTROSPECTION_CACHE_SIZE": ("transports._net.introspection", "INTROSPECTION_CACHE_SIZE"),
    "INTROSPECTION_CACHE_TTL": ("transports._net.introspection", "INTROSPECTION_CACHE_TTL"),
    "INTROSPECTION_LEEWAY": ("transports._net.introspection", "INTROSPECTION_LEEWAY"),
    "INTROSPECTION_REFUSAL_CACHE_SIZE": (
        "transports._net.introspection",
        "INTROSPECTION_REFUSAL_CACHE_SIZE",
    ),
    "INTROSPECTION_REFUSAL_TTL": ("transports._net.introspection", "INTROSPECTION_REFUSAL_TTL"),
    "INTROSPECTION_TIMEOUT": ("transports._net.introspection", "INTROSPECTION_TIMEOUT"),
    "MAX_INTROSPECTION_SIZE": ("transports._net.introspection", "MAX_INTROSPECTION_SIZE"),
    "WebSocketClient": ("transports._websocket", "WebSocketClient"),
    "WebSocketLimits": ("transports._websocket", "WebSocketLimits"),
    "open_http_client": ("transports._http.client", "open_http_client"),
    "open_stdio_client": ("transports._stdio.client", "open_stdio_client"),
    "open_websocket_client": ("transports._websocket", "open_websocket_client"),
    "serve_http": ("transports._http.server.listener", "serve_http"),
    "serve_stdio": ("transports._stdio.server", "serve_stdio"),
    "serve_stdio_asyncio": ("transports._stdio.asyncio_server", "serve_stdio_asyncio"),
    "serve_websocket": ("transports._websocket", "serve_websocket"),
}
#: What the drivers need installed (the extras install it).
_EXTRA_MODULES: Final = frozenset(
    {"trio", "wsproto", "anyio", "sniffio", "hiredis", "jwt", "cryptography"}
)
#: The names that run without trio: the asgi extra is enough for them.
_ASGI_NAMES: Final = frozenset(
    {
        "AsgiApp",
        "MAX_POOLED_CONNECTIONS",
        "MAX_REMEMBERED_ORIGINS",
        "MAX_REMEMBERED_REQUESTS",
        "serve_stdio_asyncio",
    }
)


def __getattr__(name: str) -> object:
    """Import a public name on first use (PEP 562)."""
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'transports' has no attribute {name!r}") from None
    try:
        module = importlib.import_module(module_name)
    except ImportError as missing:
        # Say which extra to install, not just which module is missing (`pip install
        # mcpcore` installs the core alone: msgspec).
        if missing.name in _EXTRA_MODULES:
            extra = "asgi" if name in _ASGI_NAMES else "trio"
            if missing.name == "hiredis":
                extra = "redis"
            elif missing.name in ("jwt", "cryptography"):
                extra = "oauth"
            raise ImportError(
                f"transports.{name} needs {missing.name}, which is not installed: "
                f"pip install 'mcpcore[{extra}]'",
                name=missing.name,
            ) from missing
        raise
    value = getattr(module, attribute)
    globals()[name] = value  # (found directly next time)
    return value


def __dir__() -> list[str]:
    """The public names (PEP 562)."""
    return sorted(__all__)


__all__ = [
    "BODY_TIMEOUT",
    "CONNECT_TIMEOUT",
    "DEFAULT_HTTP_PATH",
    "DEFAULT_NAMESPACE",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WEBSOCKET_PATH",
    "HEADER_TIMEOUT",
    "INTROSPECTION_CACHE_SIZE",
    "INTROSPECTION_CACHE_TTL",
    "INTROSPECTION_LEEWAY",
    "INTROSPECTION_REFUSAL_CACHE_SIZE",
    "INTROSPECTION_REFUSAL_TTL",
    "INTROSPECTION_TIMEOUT",
    "JWKS_CACHE_TTL",
    "JWKS_FETCH_TIMEOUT",
    "JWKS_REFETCH_INTERVAL",
    "JWT_LEEWAY",
    "KEEPALIVE_TIMEOUT",
    "LIVENESS_INTERVAL",
    "MAX_AUTHORIZATIONS",
    "MAX_BODY_SIZE",
    "MAX_CHALLENGE_RETRIES",
    "MAX_CLIENT_CONNECTIONS",
    "MAX_CONCURRENT_HANDLERS",
    "MAX_CONNECTIONS",
    "MAX_FORWARDED_REQUESTS",
    "MAX_HEADER_COUNT",
    "MAX_HEADER_SIZE",
    "MAX_IDLE_CONNECTIONS",
    "MAX_INTROSPECTION_SIZE",
    "MAX_JWKS_SIZE",
    "MAX_LISTEN_BACKLOG",
    "MAX_PARTIAL_BYTES",
    "MAX_POOLED_CONNECTIONS",
    "MAX_QUEUED_MESSAGES",
    "MAX_QUEUED_NOTIFICATIONS",
    "MAX_REMEMBERED_CLIENTS",
    "MAX_REMEMBERED_ORIGINS",
    "MAX_REMEMBERED_REQUESTS",
    "MAX_SERVER_REQUESTS",
    "MAX_SESSIONS",
    "MAX_SHARED_TASKS",
    "MAX_TOTAL_TIMEOUT",
    "MAX_WAITING_BYTES",
    "MAX_WAITING_REQUESTS",
    "MAX_WEBSOCKET_MESSAGE_SIZE",
    "ORPHAN_GRACE",
    "PARTIAL_FLOOR",
    "RECOMMENDED_BUSY_POLL",
    "REDIS_COMMAND_TIMEOUT",
    "REDIS_CONNECT_TIMEOUT",
    "REDIS_MAX_BUFFERED_MESSAGES",
    "REDIS_MAX_PENDING_COMMANDS",
    "REDIS_RECHECK_INTERVAL",
    "RELAY_BACKLOG",
    "RELAY_CHUNK_SIZE",
    "SECRET_SIZE",
    "SESSION_HANDSHAKE_TIMEOUT",
    "SESSION_IDLE_TIMEOUT",
    "SHUTDOWN_GRACE",
    "SSE_KEEPALIVE_INTERVAL",
    "WORKER_NAME_BYTES",
    "AsgiApp",
    "BearerAuth",
    "BusyPolling",
    "Client",
    "ClientTransport",
    "ConnectionClosedError",
    "Deployment",
    "EventStore",
    "HttpAuth",
    "HttpClient",
    "HttpLimits",
    "HttpStatusError",
    "InMemoryTokenStorage",
    "IntrospectionVerifier",
    "JwtVerifier",
    "MemoryEventStore",
    "NotificationCallback",
    "OAuth",
    "Principal",
    "ProgressCallback",
    "RedisUnavailableError",
    "ReplyMode",
    "ServerExitedError",
    "StderrOption",
    "StdioClient",
    "StoredEvent",
    "Subscription",
    "TokenStorage",
    "TokenVerifier",
    "WebSocketClient",
    "WebSocketLimits",
    "open_http_client",
    "open_stdio_client",
    "open_websocket_client",
    "serve_http",
    "serve_stdio",
    "serve_stdio_asyncio",
    "serve_websocket",
]
