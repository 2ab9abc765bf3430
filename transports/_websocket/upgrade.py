"""Accepting a WebSocket upgrade on an HTTP connection, then serving MCP on it.

Both listeners use this: `transports.serve_websocket` (whose HTTP side only upgrades)
and `transports.serve_http` (whose endpoint also takes the upgrade, so that one port
serves both, as SEP-1288's draft proposes). By the time `WebSocketUpgrade` is called,
the HTTP side has checked the path, ``Host`` and ``Origin`` (DNS-rebinding protection)
and the bearer token, exactly as for any request: a handshake that fails them gets
its 421, 403 or 401 and is never upgraded.

Here wsproto checks the handshake itself (``Connection: Upgrade``, ``Upgrade:
websocket``, ``Sec-WebSocket-Version: 13``, a key; 400 or 426 otherwise) and builds the
101 answer. The subprotocol ``mcp`` is selected whenever the client offers it: the
TypeScript SDK's client (a browser-style ``WebSocket``) fails a handshake that selects
none of the protocols it offered. A client offering none (or only others) is served
all the same, with no subprotocol selected. No extension is accepted (no
permessage-deflate): messages are small, and compression would let a peer make us
inflate far more than the size limit it sends (CHECKLIST §16).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection, Request
from wsproto.utilities import RemoteProtocolError

from mcpcore.server import Server
from transports._net.reply import Reply, ResponseWriter
from transports._net.request import HttpRequest
from transports._net.server_connection import HttpConnection
from transports._websocket.limits import WebSocketLimits
from transports._websocket.session import serve_channel

__all__ = ["SUBPROTOCOL", "WebSocketUpgrade", "is_websocket_upgrade"]

#: The subprotocol the TypeScript SDK v1 and the Python SDK 1.x ask for.
SUBPROTOCOL: Final = "mcp"
_CODEC: Final = "latin-1"  # (header values as HttpRequest decoded them)


def is_websocket_upgrade(headers: Mapping[str, str]) -> bool:
    """Whether a request asks to become a WebSocket (``Upgrade: websocket``)."""
    return "websocket" in headers.get("upgrade", "").lower()


class WebSocketUpgrade:
    """Takes a checked handshake request over and serves MCP on the WebSocket.

    Args:
        server: What to serve.
        limits: Each connection's limits.
    """

    def __init__(self, server: Server, limits: WebSocketLimits) -> None:
        self._server = server
        self._limits = limits

    async def __call__(
        self, request: HttpRequest, reply: Reply, http: ResponseWriter, principal: str | None
    ) -> None:
        """Upgrade (or refuse with 400/426) and serve until the WebSocket ends."""
        # (Only `serve_http`'s own TCP connections are handed upgrades: they own a socket.)
        assert isinstance(http, HttpConnection)
        handshake = WSConnection(ConnectionType.SERVER)
        target = f"{request.path}?{request.query}" if request.query else request.path
        fields = [
            (name.encode(_CODEC), value.encode(_CODEC)) for name, value in request.headers.items()
        ]
        try:
            handshake.initiate_upgrade_connection(fields, target)
            [opening] = [event for event in handshake.events() if isinstance(event, Request)]
        except RemoteProtocolError as exc:
            hint = exc.event_hint
            status, headers = 400, []
            if isinstance(hint, RejectConnection):
                status, headers = hint.status_code, list(hint.headers)
            await reply.refuse(status, f"Bad WebSocket handshake: {exc}", headers=headers)
            return
        subprotocol = SUBPROTOCOL if SUBPROTOCOL in opening.subprotocols else None
        accepted = handshake.send(AcceptConnection(subprotocol=subprotocol))
        stream, buffered = await http.take_over()
        protocol = handshake.connection
        assert protocol is not None  # (accepting opened it)
        try:
            with trio.fail_after(self._limits.write_timeout):
                await stream.send_all(accepted)
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError):
            return  # the client left before the 101: nothing to serve
        if buffered:
            protocol.receive_data(buffered)
        await serve_channel(self._server, stream, protocol, self._limits, principal=principal)
