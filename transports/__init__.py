"""Trio drivers for mcpcore: stdio, Streamable HTTP (h11) and WebSocket (wsproto).

Needs the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers only move
bytes: every protocol decision is made by `mcpcore.Connection`.
"""

from transports._client_calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT, ProgressCallback
from transports._client_errors import ConnectionClosedError, ServerExitedError
from transports._client_notifications import (
    MAX_LISTEN_BACKLOG,
    MAX_QUEUED_NOTIFICATIONS,
    NotificationCallback,
    Subscription,
)
from transports._client_stream import MAX_SERVER_REQUESTS
from transports._client_transport import ClientTransport
from transports._serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
from transports._stdio_client import StderrOption, StdioClient, open_stdio_client
from transports._stdio_server import serve_stdio
from transports._writer import MAX_QUEUED_MESSAGES
from transports.client import Client

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_CONCURRENT_HANDLERS",
    "MAX_LISTEN_BACKLOG",
    "MAX_QUEUED_MESSAGES",
    "MAX_QUEUED_NOTIFICATIONS",
    "MAX_SERVER_REQUESTS",
    "MAX_TOTAL_TIMEOUT",
    "SHUTDOWN_GRACE",
    "Client",
    "ClientTransport",
    "ConnectionClosedError",
    "NotificationCallback",
    "ProgressCallback",
    "ServerExitedError",
    "StderrOption",
    "StdioClient",
    "Subscription",
    "open_stdio_client",
    "serve_stdio",
]
