"""`serve_websocket`: MCP over WebSocket on a listener of its own.

Each TCP connection starts as HTTP/1.1 (`transports._net.server_connection`, with the
handshake's own limits: its size, and `WebSocketLimits.handshake_timeout` to send it),
whose only business is the opening handshake. In order, as on Streamable HTTP (steps
1-3 are `transports._net.gate.EndpointGate`, shared with `serve_http`):

1. ``Host``, then ``Origin`` (DNS-rebinding protection, `mcpcore.http.OriginPolicy`):
   421 and 403, before anything else ("reject the handshake when Origin or Host is
   invalid", CHECKLIST §14.5);
2. the path: the WebSocket endpoint, or the RFC 9728 protected-resource metadata when
   authorization is configured, else 404;
3. the bearer token, when authorization is configured (401 and 403, with their
   ``WWW-Authenticate`` challenge);
4. anything but a ``GET`` asking for ``Upgrade: websocket`` gets 405 or 426;
5. the upgrade itself (`transports._websocket.upgrade`).

Past `WebSocketLimits.max_connections` connections a new one gets 503 and is closed. A
connection that fails with an unexpected error is closed and reported; the server and
its other connections go on.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Iterable, Sequence
from typing import Final

import trio

from mcpcore.http import DEFAULT_ALLOWED_HOSTS, OriginPolicy
from mcpcore.server import Server
from transports._net.accepting import ErrorReporter, accept_connections, print_error
from transports._net.auth import BearerAuth
from transports._net.gate import EndpointGate
from transports._net.limits import HttpLimits
from transports._net.listeners import open_listeners
from transports._net.partial import apply_budget
from transports._net.reply import Reply
from transports._net.request import HttpRequest
from transports._net.server_connection import HttpConnection
from transports._runtime.serving import SECRET_SIZE
from transports._websocket.limits import MAX_HANDSHAKE_SIZE, WebSocketLimits
from transports._websocket.upgrade import WebSocketUpgrade, is_websocket_upgrade

__all__ = ["DEFAULT_PATH", "serve_websocket"]

#: The endpoint path (``ws://127.0.0.1:PORT/ws``), as the Python SDK 1.x examples use.
DEFAULT_PATH: Final = "/ws"
_ALLOW_GET: Final = [(b"allow", b"GET")]
_UPGRADE_REQUIRED: Final = [(b"upgrade", b"websocket"), (b"connection", b"Upgrade")]


async def serve_websocket(
    server: Server,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    sockets: Sequence[socket.socket] | None = None,
    path: str = DEFAULT_PATH,
    allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS,
    allowed_origins: Iterable[str] = (),
    auth: BearerAuth | None = None,
    limits: WebSocketLimits | None = None,
    on_error: ErrorReporter | None = None,
    busy_poll: float = 0.0,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over WebSocket at ``ws://host:port/path`` until cancelled.

    One JSON-RPC message per text frame, subprotocol ``mcp``; both eras on each
    connection, with stdio's semantics (see `transports._websocket.session`).
    WebSocket is not part of the MCP specification (SEP-1288 is a draft); this is the
    shape the TypeScript SDK v1 client and the Python SDK 1.x speak. On cancellation
    every connection is closed with 1001 "going away".

    Args:
        server: What to serve. It gets a random key and the wall clock if it has none
            (for its cursors and 2026-07-28 requestState, as the other servers do).
        port: The TCP port (0: any free port; ``task_status.started`` reports it).
            Required unless ``sockets`` are given.
        host: The address to bind (loopback by default: "servers SHOULD bind to
            localhost when local").
        sockets: Serve these listening sockets instead of binding ``host`` and
            ``port`` (as `serve_http` does); closed when the server stops.
        path: The endpoint's path.
        allowed_hosts: ``Host`` names served (any port), ``name:port``, or ``"*"``;
            the loopback names by default (DNS-rebinding protection).
        allowed_origins: ``Origin`` values served besides those on an allowed host.
        auth: Require bearer tokens in the handshake (see `BearerAuth`).
        limits: Sizes, counts and timeouts (`WebSocketLimits`).
        on_error: Told about an unexpected error that ended a connection (default: the
            traceback goes to stderr).
        busy_poll: Seconds each connection spins, at most, waiting for the client's next
            message before the event loop sleeps; 0 (the default) never spins. Opt in
            with `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).
        task_status: Started with the bound port (the first socket's) once the server
            accepts connections.

    Raises:
        ValueError: Neither ``port`` nor ``sockets`` is given.
    """
    server.configure(secret=secrets.token_bytes(SECRET_SIZE), clock=time.time)
    limits = limits or WebSocketLimits()
    report = on_error or print_error
    handshake_limits = HttpLimits(
        max_body_size=MAX_HANDSHAKE_SIZE,
        max_header_size=MAX_HANDSHAKE_SIZE,
        header_timeout=limits.handshake_timeout,
        keepalive_timeout=limits.handshake_timeout,
        write_timeout=limits.write_timeout,
        max_connections=limits.max_connections,
    )
    application = HandshakeApplication(
        path=path,
        origins=OriginPolicy(allowed_hosts, allowed_origins),
        auth=auth,
        upgrade=WebSocketUpgrade(server, limits),
    )
    listeners = await open_listeners(host, port, sockets)
    async with trio.open_nursery() as nursery:
        await nursery.start(apply_budget, limits.max_partial_bytes)
        open_connections = trio.Semaphore(limits.max_connections)

        async def serve_one(stream: trio.SocketStream) -> None:
            try:
                await HttpConnection(
                    stream, application, handshake_limits, busy_poll=busy_poll
                ).serve()
            except Exception as exc:
                report(exc)
            finally:
                open_connections.release()

        for listener in listeners:
            nursery.start_soon(accept_connections, listener, nursery, open_connections, serve_one)
        task_status.started(listeners[0].socket.getsockname()[1])


class HandshakeApplication:
    """The HTTP side of `serve_websocket`: checks a handshake, then upgrades it.

    Args:
        path: The WebSocket endpoint's path.
        origins: The hosts and origins served.
        auth: Bearer-token authorization, or None.
        upgrade: What takes an accepted handshake over.
    """

    def __init__(
        self,
        *,
        path: str,
        origins: OriginPolicy,
        auth: BearerAuth | None,
        upgrade: WebSocketUpgrade,
    ) -> None:
        self._gate = EndpointGate(path=path, origins=origins, auth=auth)
        self._upgrade = upgrade

    async def __call__(self, request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        """Answer one request (see the module docstring for the order of the checks)."""
        passed = await self._gate.check(request, reply)  # Host, Origin, path, token
        if passed is None:
            return
        if request.method != "GET":
            await reply.refuse(405, "Method Not Allowed", headers=_ALLOW_GET)
        elif not is_websocket_upgrade(request.headers):
            # "426 Upgrade Required ... MUST send an Upgrade header" (RFC 9110 §15.5.22).
            await reply.refuse(426, "Upgrade Required: a WebSocket", headers=_UPGRADE_REQUIRED)
        else:
            await self._upgrade(request, reply, http, passed.principal)
