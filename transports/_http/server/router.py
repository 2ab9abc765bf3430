"""Which part of the server answers a request: protection first, then the era.

For every request, in order:

1-3. ``Host`` and ``Origin`` (421, 403) "in both eras", the path (the endpoint, the
   protected-resource metadata, else 404), the bearer token (401, 403):
   `transports._net.gate.EndpointGate`, shared with `serve_websocket`;
4. the era, by method and ``MCP-Protocol-Version`` (CONFORMANCE §4.2): a POST with the
   2024-11-05 ``sessionId`` goes to HTTP+SSE; a POST whose header is a handshake
   revision, or absent, to the legacy session transport; any other POST to the
   2026-07-28 handler. ``GET`` and ``DELETE`` exist only in the legacy eras: with an
   ``Mcp-Session-Id`` they are the session's, a ``GET`` without one opens a 2024-11-05
   HTTP+SSE connection. When the legacy eras are switched off, or the header names a
   modern revision, they get 405 ("a modern-only (S) SHOULD answer them with 405").

In a deployment whose workers share their sessions
(`transports._http.server.sharing`), a legacy request naming a session another worker
owns is forwarded to that worker after steps 1-3, and its answer relayed; while the
shared store is unreachable, legacy requests get 503 (the 2026-07-28 era goes on).

A ``GET`` asking for ``Upgrade: websocket`` goes, once checked by steps 1-3, to the
WebSocket handler when there is one (`transports._websocket.upgrade`: it answers 101
and takes the connection over), whatever the era. Without one, or for any other
``Upgrade``, it is served as the plain request it also is, which for a handshake (a GET
without a session) is a 400.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from mcpcore.http import OriginPolicy, route_for
from mcpcore.server import Server
from mcpcore.versions import Era
from transports._http.server.event_store import EventStore
from transports._http.server.legacy import LegacyEndpoint
from transports._http.server.modern import ModernEndpoint
from transports._http.server.sessions import Call, abandon_call, call_key, run_call
from transports._http.server.sharing import (
    OWNER_SEPARATOR,
    SharedSessions,
    SharedStoreError,
    session_owner,
)
from transports._http.server.sse2024 import SESSION_PARAMETER, Sse2024Endpoint
from transports._net.auth import BearerAuth
from transports._net.gate import EndpointGate
from transports._net.limits import HttpLimits
from transports._net.reply import Reply, ReplyMode, ResponseWriter
from transports._net.request import HttpRequest
from transports._runtime.primitives import AnyTaskGroup
from transports._runtime.workers import WorkerPool

__all__ = ["DEFAULT_PATH", "Router", "UpgradeHandler"]

#: The endpoint path the conformance suite and the SDK examples use (``serve_http``'s
#: and the ASGI app's default).
DEFAULT_PATH: Final = "/mcp"

#: Takes a checked ``Upgrade: websocket`` request (and the bearer token's principal)
#: over: answers it, and serves the connection until it ends.
UpgradeHandler = Callable[[HttpRequest, Reply, ResponseWriter, "str | None"], Awaitable[None]]

_ALLOW_LEGACY: Final = [(b"allow", b"GET, POST, DELETE")]
_ALLOW_MODERN: Final = [(b"allow", b"POST")]
_UNREACHABLE: Final = "Service Unavailable: the shared session store is unreachable"


class Router:
    """The application every connection hands its requests to (see the module docstring).

    Args:
        server: What to serve.
        path: The MCP endpoint's path.
        origins: The hosts and origins served.
        auth: Bearer-token authorization, or None.
        legacy: Serve the legacy eras (2024-11-05 … 2025-11-25) too.
        tasks: Where the router's tasks run: the workers of legacy requests and the
            expiry of idle sessions (cancelling it ends them).
        store: The event store of legacy streams.
        limits: The server's limits.
        websocket: What takes WebSocket upgrades of the endpoint over, if any.
        replies: How POSTed requests are answered (`ReplyMode`).
        sharing: The sessions shared with the deployment's other workers, if any.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str,
        origins: OriginPolicy,
        auth: BearerAuth | None,
        legacy: bool,
        tasks: AnyTaskGroup,
        store: EventStore,
        limits: HttpLimits,
        websocket: UpgradeHandler | None = None,
        replies: ReplyMode = "auto",
        sharing: SharedSessions | None = None,
    ) -> None:
        self._path = path
        self._sharing = sharing
        prefix = ""
        if sharing is not None:
            prefix = sharing.worker + OWNER_SEPARATOR
        self._websocket = websocket
        self._gate = EndpointGate(path=path, origins=origins, auth=auth)
        self._legacy_on = legacy
        self.modern = ModernEndpoint(
            server, stream_backlog=limits.max_stream_backlog, replies=replies
        )
        pool: WorkerPool[Call] = WorkerPool(tasks, run_call, call_key, abandon=abandon_call)
        self.legacy = LegacyEndpoint(server, pool, store, limits, replies, id_prefix=prefix)
        self.sse2024 = Sse2024Endpoint(server, pool, limits, id_prefix=prefix)
        tasks.start_soon(self.legacy.sessions.expire_forever)
        if sharing is not None:
            sharing.serve(self)

    async def __call__(self, request: HttpRequest, reply: Reply, http: ResponseWriter) -> None:
        """Answer one request."""
        passed = self._gate.passes(request)
        if passed is None:
            passed = await self._gate.check(request, reply)  # Host, Origin, path, token
            if passed is None:
                return
        principal = passed.principal
        headers = request.headers
        method = request.method
        if (
            method == "GET"
            and self._websocket is not None
            and "websocket" in headers.get("upgrade", "").lower()
        ):
            await self._websocket(request, reply, http, principal)
            return
        sharing = self._sharing
        if sharing is None:
            await self.dispatch(request, reply, http, principal)
        else:
            await self._shared(sharing, request, reply, http, principal)

    def serves_modern_post(
        self, path: str, host: str | None, origin: str | None, protocol_version: str | None
    ) -> bool:
        """Whether a POST with this path and these headers goes straight to `modern`.

        True when it passes the gate needing no token (steps 1-3) and its era is
        2026-07-28 (step 4), so that a driver may hand it to ``modern.post`` itself,
        without building the whole request first (`transports._asgi.app`). False decides
        nothing: the request is then served the usual way.
        """
        return self._gate.admits(path, host, origin) and (
            not self._legacy_on or route_for(protocol_version) is Era.MODERN
        )

    async def dispatch(
        self, request: HttpRequest, reply: Reply, http: ResponseWriter, principal: str | None
    ) -> None:
        """Answer a request that passed the gate, as this worker's own."""
        method = request.method
        era = route_for(request.headers.get("mcp-protocol-version"))
        if method == "POST":
            if era is Era.MODERN or not self._legacy_on:
                await self.modern.post(request, reply, http, principal)
            else:
                await self._legacy_post(request, reply, principal)
        elif era is Era.MODERN or not self._legacy_on:
            await reply.refuse(405, "Method Not Allowed", headers=_ALLOW_MODERN)
        elif method == "GET":
            await self._get(request, reply, principal)
        elif method == "DELETE":
            await self.legacy.delete(request, reply, principal)
        else:
            await reply.refuse(405, "Method Not Allowed", headers=_ALLOW_LEGACY)

    async def _shared(
        self,
        sharing: SharedSessions,
        request: HttpRequest,
        reply: Reply,
        http: ResponseWriter,
        principal: str | None,
    ) -> None:
        """In a shared deployment: legacy requests need the store, and go to their owner."""
        headers = request.headers
        if not self._legacy_on or route_for(headers.get("mcp-protocol-version")) is Era.MODERN:
            await self.dispatch(request, reply, http, principal)
            return
        if not sharing.available and not await sharing.check():
            await reply.refuse(503, _UNREACHABLE)
            return
        session_id = headers.get("mcp-session-id")
        if session_id is None and request.method == "POST":
            session_id = request.query_parameter(SESSION_PARAMETER)
        owner = None if session_id is None else session_owner(session_id)
        try:
            if owner is None or owner == sharing.worker:
                await self.dispatch(request, reply, http, principal)
            else:
                await sharing.forward(owner, request, reply, http, principal)
        except SharedStoreError:
            # Redis went away while this request used it.
            if not reply.started:
                await reply.refuse(503, _UNREACHABLE)
            elif reply.streaming:
                await reply.end_stream()  # (its client resumes once Redis is back)

    async def _legacy_post(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """A legacy POST: 2024-11-05's carries its session in the query."""
        if request.query_parameter(SESSION_PARAMETER) is not None:
            await self.sse2024.post(request, reply, principal)
        else:
            await self.legacy.post(request, reply, principal)

    async def _get(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """A legacy GET: a session's stream (2025-03-26 on), or a 2024-11-05 SSE stream."""
        headers = request.headers
        if "mcp-session-id" in headers:
            await self.legacy.get(request, reply, principal)
        elif "upgrade" in headers:
            await reply.refuse(400, "Bad Request: no upgrade is served here")
        else:
            await self.sse2024.get(request, reply, principal, request.root + self._path)
