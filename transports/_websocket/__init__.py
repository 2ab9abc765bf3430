"""MCP over WebSocket on trio and wsproto (private: `transports` re-exports its API).

WebSocket is not part of the MCP specification (SEP-1288 is a draft, CHECKLIST §14.5);
this is the shape the TypeScript SDK v1 client and the Python SDK 1.x speak: the
subprotocol ``mcp``, one JSON-RPC message per text frame, stdio's semantics.

One concept per module: `listener` (``serve_websocket``), `upgrade` (accepting a
handshake, also for ``serve_http``), `session` (the server runtime on a WebSocket),
`channel` (frames in, frames out, pings, closing), `frames` (building text frames),
`handshake` and `client` (``open_websocket_client``), `limits`.
"""

from transports._websocket.client import WebSocketClient, open_websocket_client
from transports._websocket.limits import (
    CLOSE_TIMEOUT,
    HANDSHAKE_TIMEOUT,
    MAX_MESSAGE_SIZE,
    PING_INTERVAL,
    PONG_TIMEOUT,
    WebSocketLimits,
)
from transports._websocket.listener import serve_websocket
from transports._websocket.upgrade import SUBPROTOCOL

__all__ = [
    "CLOSE_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "MAX_MESSAGE_SIZE",
    "PING_INTERVAL",
    "PONG_TIMEOUT",
    "SUBPROTOCOL",
    "WebSocketClient",
    "WebSocketLimits",
    "open_websocket_client",
    "serve_websocket",
]
