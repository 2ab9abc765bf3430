"""The loopback ports the bench and the tests give their server processes (`bench._ports`).

A port picked by binding port 0 and closing it could be handed to another process before
the server bound it (a CI run's bench client reached another server that way). A reserved
port is held for the server it is given to: other binds are refused, and only a server
binding it with ``SO_REUSEADDR`` takes it.
"""

from __future__ import annotations

import errno
import socket

import pytest

from bench._ports import HOST, reserve_port

#: Reservations made in a row by the test of their being distinct (a deployment's test
#: cluster reserves one per worker, in a row).
IN_A_ROW = 50


def test_nothing_listens_on_a_reserved_port() -> None:
    port = reserve_port()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((HOST, port), timeout=5).close()


def test_a_reserved_port_refuses_a_bind_without_reuse() -> None:
    port = reserve_port()
    with socket.socket() as other, pytest.raises(OSError, match="in use") as caught:
        other.bind((HOST, port))
    assert caught.value.errno == errno.EADDRINUSE


def test_a_server_binding_with_reuse_takes_the_port_and_is_reached() -> None:
    port = reserve_port()
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((HOST, port))
        server.listen(1)
        with socket.create_connection((HOST, port), timeout=5) as client:
            accepted, peer = server.accept()
            with accepted:
                assert peer == client.getsockname()
                client.sendall(b"ping")
                assert accepted.recv(4) == b"ping"


def test_reservations_in_a_row_are_distinct() -> None:
    ports = [reserve_port() for _ in range(IN_A_ROW)]
    assert len(set(ports)) == IN_A_ROW
