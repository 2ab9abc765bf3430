"""Loopback ports for the server processes that the bench and the tests start.

The usual way to find a free port, binding port 0 and closing the socket, leaves the
port free for anyone until the server binds it. Linux picks ports for a bind to port 0
at random, so another process starting a server at about the same time is, now and
then, handed the same one (about 1 pick in 440 repeated one of the previous 30, on the
CI machine). The wait for the server to listen then finds the other process's server
and the run talks to the wrong one. A CI run of ``python -m bench --quick`` failed that
way: mcpcore's client reached the ceiling's server and was answered a ``tools/call``
result to its ``initialize``.

`reserve_port` closes that window. It opens a connection to its own listener on the
port and closes the accepted side first, which leaves a socket in TIME_WAIT on the port
for a minute (Linux's ``TCP_TIMEWAIT_LEN``). While it lasts, Linux neither hands the
port to a bind to port 0 nor uses it as a connection's source port. A bind by number
is refused too, unless the binding socket sets ``SO_REUSEADDR``, as every server the
bench and the tests start does: trio, uvicorn, hypercorn, granian, nginx and
redis-server all set it. So only the server that is given the port can take it.
"""

from __future__ import annotations

import socket

__all__ = ["HOST", "reserve_port"]

#: Servers the bench and the tests start listen on loopback only.
HOST = "127.0.0.1"


def reserve_port() -> int:
    """A TCP port of `HOST` that only a server binding it with ``SO_REUSEADDR`` can take.

    Nothing listens on it (a connection to it is refused) until such a server binds it,
    which it must do within a minute.
    """
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, 0))
        listener.listen(1)
        address = listener.getsockname()
        with socket.create_connection(address):
            accepted, _ = listener.accept()
            # The side that closes first keeps the TIME_WAIT socket, here on the port.
            accepted.close()
        port: int = address[1]
        return port
