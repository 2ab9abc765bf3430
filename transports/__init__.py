"""Trio drivers for mcpcore: stdio, Streamable HTTP (h11) and WebSocket (wsproto).

Needs the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers only move
bytes: every protocol decision is made by `mcpcore.Connection`.
"""

from transports._serving import MAX_CONCURRENT_HANDLERS, SHUTDOWN_GRACE
from transports._stdio_server import serve_stdio
from transports._writer import MAX_QUEUED_MESSAGES

__all__ = ["MAX_CONCURRENT_HANDLERS", "MAX_QUEUED_MESSAGES", "SHUTDOWN_GRACE", "serve_stdio"]
