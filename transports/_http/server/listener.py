"""`serve_http`: the listening socket, a task per TCP connection, and the server-wide parts.

The server binds 127.0.0.1 unless told otherwise ("servers SHOULD bind to localhost
when local", 2025-03-26 … 2026-07-28 basic/transports). Past `HttpLimits.max_connections`
open connections a new one gets ``503`` and is closed at once, so that idle keep-alive
connections can't lock new clients out silently. A connection that fails with an
unexpected error is closed and reported; the server and its other connections go on.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Iterable, Sequence

import trio

from mcpcore.http import DEFAULT_ALLOWED_HOSTS, OriginPolicy
from mcpcore.server import Server
from transports._http.server.event_store import EventStore, MemoryEventStore
from transports._http.server.router import DEFAULT_PATH, Router
from transports._http.server.sharing import SessionSharing, SharedSessions
from transports._net.accepting import (
    REJECT_TIMEOUT,
    ErrorReporter,
    accept_connections,
    print_error,
)
from transports._net.auth import BearerAuth
from transports._net.limits import HttpLimits
from transports._net.listeners import open_listeners
from transports._net.partial import apply_budget
from transports._net.reply import REPLY_MODES, ReplyMode
from transports._net.server_connection import HttpConnection
from transports._runtime.serving import SECRET_SIZE
from transports._runtime.tasks import GroupTaskRunner, new_task_id
from transports._websocket.limits import WebSocketLimits
from transports._websocket.upgrade import WebSocketUpgrade

__all__ = ["DEFAULT_PATH", "REJECT_TIMEOUT", "ErrorReporter", "serve_http"]


async def serve_http(
    server: Server,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    sockets: Sequence[socket.socket] | None = None,
    path: str = DEFAULT_PATH,
    allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS,
    allowed_origins: Iterable[str] = (),
    auth: BearerAuth | None = None,
    legacy: bool = True,
    event_store: EventStore | None = None,
    limits: HttpLimits | None = None,
    on_error: ErrorReporter | None = None,
    websocket: WebSocketLimits | bool = True,
    replies: ReplyMode = "auto",
    busy_poll: float = 0.0,
    deployment: SessionSharing | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over Streamable HTTP at ``http://host:port/path`` until cancelled.

    Both eras are served on the one endpoint, routed by each request's
    ``MCP-Protocol-Version`` header: 2026-07-28 statelessly; 2025-03-26 … 2025-11-25 as
    sessions; 2024-11-05 clients over HTTP+SSE (a ``GET`` of the endpoint). The endpoint
    also accepts WebSocket upgrades (``ws://host:port/path``, as `serve_websocket`
    serves them), checked for ``Host``, ``Origin`` and the token first like any request.

    Args:
        server: What to serve. It gets a random key and the wall clock if it has none
            (for its cursors and 2026-07-28 requestState, as the stdio server does).
        port: The TCP port (0: any free port; ``task_status.started`` reports it).
            Required unless ``sockets`` are given.
        host: The address to bind (loopback by default).
        sockets: Serve these listening sockets instead of binding ``host`` and
            ``port`` (which are then unused): bound, ``listen()`` called, shared with
            other processes or not (several workers accepting on one socket). They
            become the server's and are closed when it stops.
        path: The endpoint's path.
        allowed_hosts: ``Host`` names served (any port), or ``name:port``, or ``"*"``;
            the loopback names by default (DNS-rebinding protection).
        allowed_origins: ``Origin`` values served besides those on an allowed host.
        auth: Require bearer tokens (see `BearerAuth`).
        legacy: Serve the eras before 2026-07-28 too. Without them, ``GET`` and
            ``DELETE`` get 405 and every POST is a 2026-07-28 request.
        event_store: Where legacy streams keep their events for resumption (a bounded
            `MemoryEventStore` by default).
        limits: Sizes, counts and timeouts (`HttpLimits`).
        on_error: Told about an unexpected error that ended a connection (default: the
            traceback goes to stderr).
        websocket: Accept WebSocket upgrades on the endpoint (with these limits, or
            the defaults for True); False answers them as plain GETs (400).
        replies: How a POST carrying requests is answered (the spec allows a JSON body
            or an event stream; clients must read both):

            * ``"auto"`` (default): 2025-03-26 … 2025-11-25 with an event stream, always
              (a 2025-11-25 one primed for resumption, its events kept in
              ``event_store``); 2026-07-28 with a JSON body, unless the handler sends
              something (progress, a log message) before its result: then a stream.
            * ``"json"``: a JSON body whenever nothing comes before the result, in both
              eras (legacy: no priming, nothing stored, nothing to resume). A handler
              that sends a notification or, in a session, a request to the client
              (elicitation, sampling) first gets a stream as with ``"auto"`` (primed
              then); no message is ever dropped.
            * ``"stream"``: an event stream always, in both eras (2026-07-28: the result
              as its one event), except a 2026-07-28 error whose status is not 200
              (400, 404), which stays a JSON body so that the status tells it.

            In every mode a request quiet for ``limits.sse_keepalive_interval`` with
            nothing written yet becomes a stream, for the keep-alive comment
            (CHECKLIST G5). 2024-11-05 HTTP+SSE answers on its GET stream regardless.
        busy_poll: Seconds each connection spins, at most, waiting for the client's next
            request before the event loop sleeps; 0 (the default) never spins. Opt in
            with `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).
        deployment: Serve as one worker of a `transports.Deployment` (several processes
            sharing one Redis): its key, and its legacy sessions served from any worker.
        task_status: Started with the bound port (the first socket's) once the server
            accepts connections.

    Raises:
        ValueError: ``replies`` is not one of ``"auto"``, ``"json"``, ``"stream"``, or
            neither ``port`` nor ``sockets`` is given.
    """
    if replies not in REPLY_MODES:
        raise ValueError(f"replies must be one of {', '.join(REPLY_MODES)}")
    limits = limits or HttpLimits()
    budget = limits.max_partial_bytes
    upgrade = None
    if websocket is not False:
        ws_limits = websocket if isinstance(websocket, WebSocketLimits) else WebSocketLimits()
        upgrade = WebSocketUpgrade(server, ws_limits)
        budget = min(budget, ws_limits.max_partial_bytes)  # (its upgrades draw on it too)
    report = on_error or print_error
    listeners = await open_listeners(host, port, sockets)
    async with trio.open_nursery() as nursery:
        sharing: SharedSessions | None = None
        if deployment is not None:  # (first: it gives the server the deployment's key)
            sharing = await nursery.start(_join, deployment, server, limits)
        server.configure(secret=secrets.token_bytes(SECRET_SIZE), clock=time.time)
        if deployment is None:
            # Tasks (2026-07-28 tasks extension, 2025-11-25 core tasks) run in this
            # nursery: they outlive the request that created them, not the server. In a
            # deployment, joining gave the server the shared task store and a runner
            # whose runs every worker reaches (`transports._deploy.task_runner`).
            server.configure(task_runner=GroupTaskRunner(nursery), new_task_id=new_task_id)
        await nursery.start(apply_budget, budget)
        router = Router(
            server,
            path=path,
            origins=OriginPolicy(allowed_hosts, allowed_origins),
            auth=auth,
            legacy=legacy,
            tasks=nursery,
            store=event_store or MemoryEventStore(),
            limits=limits,
            websocket=upgrade,
            replies=replies,
            sharing=sharing,
        )
        open_connections = trio.Semaphore(limits.max_connections)

        async def serve_one(stream: trio.SocketStream) -> None:
            try:
                await HttpConnection(stream, router, limits, busy_poll=busy_poll).serve()
            except Exception as exc:
                report(exc)
            finally:
                open_connections.release()

        for listener in listeners:
            nursery.start_soon(accept_connections, listener, nursery, open_connections, serve_one)
        task_status.started(listeners[0].socket.getsockname()[1])


async def _join(
    deployment: SessionSharing,
    server: Server,
    limits: HttpLimits,
    task_status: trio.TaskStatus[SharedSessions] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Be one of the deployment's workers until cancelled (started with its sessions)."""
    async with deployment.open(server, limits) as sharing:
        task_status.started(sharing)
        await trio.sleep_forever()
