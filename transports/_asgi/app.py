"""`AsgiApp`: an MCP server's Streamable HTTP endpoint as an ASGI 3 application.

It serves exactly what ``serve_http`` serves, through the same `Router` (protection,
eras, sessions, streams, replies), on whatever ASGI server runs it: uvicorn, hypercorn
(its asyncio and trio workers), granian. What ``serve_http`` does per TCP connection is
done per request here (`transports._asgi.reading`, `~transports._asgi.writer`,
`~transports._asgi.watching`); what it does per server (the legacy eras' workers and
session expiry, the watcher, the partial-message budget) lives in the app's lifespan.

The lifespan: run as the top-level app, the ASGI ``lifespan`` protocol starts and stops
it. Mounted in a framework (Starlette's ``Mount``, FastAPI's ``app.mount``), which does
not pass the lifespan on to mounted apps, the framework's own lifespan must enter
`AsgiApp.lifespan` (``Starlette(..., lifespan=mcp.lifespan)``, or ``async with
mcp.lifespan(app):`` inside one's own). A request arriving while it is not running is
refused with 500 and a message saying so: nothing would run its legacy requests.

The ASGI server owns the connections: how many, their timeouts, their header limits
(`HttpLimits.max_connections`, ``header_timeout`` and ``keepalive_timeout`` do not apply
here; set the server's own). WebSocket scopes are refused (``serve_http`` serves MCP
over WebSocket on its endpoint; over ASGI, use ``serve_websocket``).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterable, MutableMapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

import anyio

from mcpcore.http import DEFAULT_ALLOWED_HOSTS, OriginPolicy
from mcpcore.server import Server
from transports._asgi.connections import ConnectionPool
from transports._asgi.known import KnownHeads
from transports._asgi.posted import Shortcut
from transports._asgi.reading import TIMED_OUT as _TIMED_OUT
from transports._asgi.reading import (
    Receive,
    Refusal,
    Scope,
    check_head,
    read_body,
    request_of,
)
from transports._asgi.watching import Watch, Watcher
from transports._asgi.writer import AsgiWriter, Send
from transports._http.server.event_store import EventStore, MemoryEventStore
from transports._http.server.router import DEFAULT_PATH, Router
from transports._http.server.sharing import SessionSharing, SharedSessions
from transports._net.auth import BearerAuth
from transports._net.limits import HttpLimits
from transports._net.partial import PARTIAL_BUDGET
from transports._net.reply import REPLY_MODES, Reply, ReplyMode
from transports._runtime import primitives
from transports._runtime.requestlog import LOGGER_NAME
from transports._runtime.serving import SECRET_SIZE
from transports._runtime.tasks import GroupTaskRunner, new_task_id

__all__ = ["DEFAULT_PATH", "AsgiApp"]


_log = logging.getLogger(LOGGER_NAME)
_NOT_RUNNING: Final = (
    "the MCP app's lifespan is not running: run it as the top-level ASGI app, or enter "
    "AsgiApp.lifespan from the framework's lifespan (Starlette(lifespan=app.lifespan))"
)


class _Running:
    """What the app holds while its lifespan runs."""

    __slots__ = ("clock", "interruptible", "known", "router", "shortcut", "watcher")

    def __init__(self, router: Router, watcher: Watcher, limits: HttpLimits) -> None:
        self.router = router
        self.shortcut = Shortcut(router)
        self.known = KnownHeads(router.modern.fast, limits)
        self.watcher = watcher
        # (The lifespan and its requests run in one library: its clock is read per
        # request without choosing the library each time.)
        self.clock = primitives.clock()
        self.interruptible = primitives.interruptible()


class AsgiApp:
    """Serves ``server`` over Streamable HTTP as an ASGI 3 application.

    Both eras on the one endpoint, as ``serve_http`` serves them: 2026-07-28 requests
    statelessly; 2025-03-26 … 2025-11-25 as sessions (with the ``GET`` stream,
    resumption from ``event_store``, requests to the client); 2024-11-05 clients over
    HTTP+SSE.

    Args:
        server: What to serve. It gets a random key and the wall clock if it has none
            (for its cursors and 2026-07-28 requestState). Several workers or hosts
            serving one deployment must share one key: give them a ``deployment``, or
            configure one key on the server.
        path: The endpoint's path below the app's mount point.
        allowed_hosts: ``Host`` names served (any port), or ``name:port``, or ``"*"``;
            the loopback names by default (DNS-rebinding protection). Behind a proxy,
            name the public host.
        allowed_origins: ``Origin`` values served besides those on an allowed host.
        auth: Require bearer tokens (see `transports.BearerAuth`).
        legacy: Serve the eras before 2026-07-28 too (else ``GET`` and ``DELETE`` get
            405 and every POST is a 2026-07-28 request).
        event_store: Where legacy streams keep their events for resumption (a bounded
            `transports.MemoryEventStore` by default).
        limits: Sizes, counts and timeouts (`transports.HttpLimits`; the connection
            limits are the ASGI server's, see the module docstring).
        replies: How a POST carrying requests is answered (as ``serve_http``'s).
        deployment: Serve as one worker of a `transports.Deployment` (``uvicorn
            --workers N``, several hosts: processes sharing one Redis), joined while
            the lifespan runs: its key, and its legacy sessions served from any worker.

    Raises:
        ValueError: ``replies`` is not one of ``"auto"``, ``"json"``, ``"stream"``.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = DEFAULT_PATH,
        allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS,
        allowed_origins: Iterable[str] = (),
        auth: BearerAuth | None = None,
        legacy: bool = True,
        event_store: EventStore | None = None,
        limits: HttpLimits | None = None,
        replies: ReplyMode = "auto",
        deployment: SessionSharing | None = None,
    ) -> None:
        if replies not in REPLY_MODES:
            raise ValueError(f"replies must be one of {', '.join(REPLY_MODES)}")
        self.server = server
        self.path = path
        self.limits = limits or HttpLimits()
        self._origins = OriginPolicy(allowed_hosts, allowed_origins)
        self._auth = auth
        self._legacy = legacy
        self._store = event_store or MemoryEventStore()
        self._replies: ReplyMode = replies
        self._deployment = deployment
        self._running: _Running | None = None
        self._connections = ConnectionPool(server)

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """Run the app's server-wide parts for the duration of the block.

        ``app`` is ignored: the argument is there so that this method is a Starlette
        or FastAPI ``lifespan`` as it is.

        Raises:
            RuntimeError: The lifespan is running already.
        """
        if self._running is not None:
            raise RuntimeError("the MCP app's lifespan is running already")
        limits = self.limits
        async with AsyncExitStack() as stack:
            sharing = None
            if self._deployment is not None:  # (first: it gives the deployment's key)
                sharing = await stack.enter_async_context(
                    self._deployment.open(self.server, limits)
                )
            self.server.configure(secret=secrets.token_bytes(SECRET_SIZE), clock=time.time)
            async with self._serving(sharing):
                yield

    @asynccontextmanager
    async def _serving(self, sharing: SharedSessions | None) -> AsyncIterator[None]:
        """The server-wide parts (router, watcher, budget) while the block runs."""
        limits = self.limits
        async with anyio.create_task_group() as group:
            with PARTIAL_BUDGET.limited_to(limits.max_partial_bytes):
                router = Router(
                    self.server,
                    path=self.path,
                    origins=self._origins,
                    auth=self._auth,
                    legacy=self._legacy,
                    tasks=group,
                    store=self._store,
                    limits=limits,
                    replies=self._replies,
                    sharing=sharing,
                )
                watcher = Watcher(group, limits)
                group.start_soon(watcher.run)
                if sharing is None:
                    # Tasks (2026-07-28 tasks extension) run in the lifespan's group:
                    # they outlive the request that created them. In a deployment,
                    # joining gave the server shared ones (see serve_http).
                    runner = GroupTaskRunner(group)
                    self.server.configure(task_runner=runner, new_task_id=new_task_id)
                self._running = _Running(router, watcher, limits)
                try:
                    yield
                finally:
                    self._running = None
                    group.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI 3 entry point."""
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            # "websocket.close" before accepting: the server answers 403.
            await send({"type": "websocket.close", "code": 1000})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        running = self._running
        http1 = str(scope.get("http_version", "1.1")).startswith("1")
        clock = primitives.current_time if running is None else running.clock
        writer = AsgiWriter(send, clock, self._connections, http1=http1)
        reply = Reply(writer)
        if running is None:
            _log.error(_NOT_RUNNING)
            await reply.refuse(500, "Internal Server Error: " + _NOT_RUNNING)
            return
        # One cancel scope per request: the watcher cancels it when the body is late
        # (408), when the client hangs up, or when it stops reading.
        clean = False
        with running.interruptible() as cancel:
            watch = running.watcher.start(writer, reply, receive, cancel, writer.last_write)
            try:
                await self._serve(
                    scope, watch, running, receive=receive, reply=reply, writer=writer
                )
                clean = not cancel.cancel_called
            except primitives.GONE:
                pass  # the client is gone: nobody to answer
            finally:
                watch.end()
                writer.close(clean=clean)
        if watch.late_body:
            await reply.refuse(_TIMED_OUT.status, _TIMED_OUT.message, close=True)

    async def _serve(
        self,
        scope: Scope,
        watch: Watch,
        running: _Running,
        *,
        receive: Receive,
        reply: Reply,
        writer: AsgiWriter,
    ) -> None:
        """Read the request, then have the router answer it (a `Posted` the endpoint).

        A call with a head answered before is answered at once (`transports._asgi.known`):
        the head's checks passed then, with any ``Content-Length`` it takes.
        """
        known = running.known
        head, remembered = known.look(scope)
        fields: list[tuple[bytes, bytes]] = scope.get("headers", [])
        declared: int | None = None  # (a known head's: at most PARTIAL_FLOOR, read as it comes)
        if remembered is None:
            checked = check_head(fields, self.limits)
            if isinstance(checked, Refusal):
                await reply.refuse(checked.status, checked.message, close=True)
                return
            declared = checked
        body = await read_body(receive, self.limits, declared)
        if body is None:
            return  # the client left before its request was whole
        if isinstance(body, Refusal):
            await reply.refuse(body.status, body.message, headers=body.headers, close=True)
            return
        running.watcher.answering(watch, running.clock())
        call = None if remembered is None else known.call(remembered, body)
        if call is not None:
            await running.router.modern.answer_call(call, body, reply, writer, None)
            return
        post = running.shortcut.take(scope, fields) if scope.get("method") == "POST" else None
        if post is None:
            await running.router(request_of(scope, fields, body), reply, writer)
            return
        post.body = body
        answered = await running.router.modern.post(post, reply, writer, None)
        if answered is not None and head is not None:
            known.learn(head, answered)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan protocol, when the app is the top-level one."""
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        started = False
        try:
            async with self.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await _shutdown_asked(receive)
        except Exception as exc:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": f"{type(exc).__name__}: {exc}"})
            raise
        await send({"type": "lifespan.shutdown.complete"})


async def _shutdown_asked(receive: Receive) -> None:
    while True:
        message: MutableMapping[str, Any] = await receive()
        if message["type"] == "lifespan.shutdown":
            return
