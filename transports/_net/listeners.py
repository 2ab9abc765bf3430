"""`open_listeners`: the listening sockets of `serve_http` and `serve_websocket`.

Either bound here (``trio.open_tcp_listeners``: every address ``host`` resolves to), or
handed over already listening: a supervisor binds once and its worker processes accept
on the same socket (``mcpcore serve --workers``), or a service manager passes one in.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

import trio

__all__ = ["open_listeners"]


async def open_listeners(
    host: str, port: int | None, sockets: Sequence[socket.socket] | None
) -> list[trio.SocketListener]:
    """Listeners on ``sockets`` when given (they become trio's), else bound to ``host``.

    Raises:
        ValueError: Neither ``port`` nor ``sockets`` is given, or ``sockets`` is empty.
        OSError: ``host`` and ``port`` can't be bound.
    """
    if sockets is None:
        if port is None:
            raise ValueError("a port to bind (0: any free one) or listening sockets are needed")
        return await trio.open_tcp_listeners(port, host=host)
    if not sockets:
        raise ValueError("no listening socket given")
    # (SocketListener checks each is a listening SOCK_STREAM socket, and says so.)
    return [trio.SocketListener(trio.socket.from_stdlib_socket(each)) for each in sockets]
