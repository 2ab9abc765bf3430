"""The 2024-11-05 HTTP+SSE transport, on the same endpoint as Streamable HTTP.

"The server MUST provide an SSE endpoint (GET) and a POST endpoint. On connect the
server MUST send ``event: endpoint`` whose data is the URI for POSTs. Server messages
are ``event: message``" (2024-11-05 basic/transports). A 2025 client that finds no
Streamable HTTP server falls back to this: "GET the URL and expect an endpoint event"
(2025-03-26 backwards compatibility).

A ``GET`` without ``Mcp-Session-Id`` opens such a connection: a session whose every
message to the client goes on that one stream, and whose POST URI is the endpoint path
with ``?sessionId=<id>`` (the convention of the official SDKs). A POST there gets 202
and its answers come on the stream; malformed JSON gets 400. The session ends with its
stream. The stream is the only way to the client, so a handler writing to a client
that does not read waits (backpressure, bounded by `HttpLimits.max_stream_backlog`).
"""

from __future__ import annotations

import contextlib
from typing import Final

from mcpcore import jsonrpc
from mcpcore.framing import encode_event
from mcpcore.http import is_json, names, peek_message
from mcpcore.server import Server
from mcpcore.types import RequestId
from transports._http.server.sessions import Answer, Call, Session, SessionTable
from transports._net.limits import HttpLimits
from transports._net.reply import Reply
from transports._net.request import HttpRequest
from transports._runtime import primitives
from transports._runtime.requestlog import log_protocol_error
from transports._runtime.workers import WorkerPool

__all__ = ["SESSION_PARAMETER", "Sse2024Endpoint", "Sse2024Session"]

#: The query parameter naming the session in the POST URI.
SESSION_PARAMETER: Final = "sessionId"
_MESSAGE: Final = "message"
_PLAIN: Final = [(b"content-type", b"text/plain; charset=utf-8")]


class Sse2024Session(Session):
    """An HTTP+SSE session: its messages queue for its one stream."""

    def __init__(
        self,
        session_id: str,
        server: Server,
        pool: WorkerPool[Call],
        *,
        principal: str | None,
        max_handlers: int,
        backlog: int,
    ) -> None:
        super().__init__(session_id, server, pool, principal=principal, max_handlers=max_handlers)
        channel: tuple[primitives.AnySendChannel[bytes], primitives.AnyReceiveChannel[bytes]]
        channel = primitives.open_channel(backlog)
        self.outgoing, self.incoming = channel

    async def emit(self, message: bytes) -> None:
        """Queue a message for the stream (waits while the client is behind)."""
        try:
            await self.outgoing.send(encode_event(message, event=_MESSAGE))
        except primitives.GONE:
            raise ConnectionError("the client's stream is closed") from None

    # The session is its own `mcpcore.server.Outbound` (connection-level messages) and
    # every request's `CallOutbound`: everything goes on the one stream.

    #: (`CallOutbound.finish_waits`: a full stream makes the answer wait.)
    finish_waits = True

    async def send(self, data: bytes) -> None:
        """Write a notification (see `emit`)."""
        await self.emit(data)

    async def request(self, request_id: RequestId, data: bytes) -> Answer:
        """Ask the client, on the stream."""
        return await self.ask(request_id, data, self.emit)

    async def finish(self, request_id: RequestId, reply: bytes | None) -> None:
        """Deliver a request's answer."""
        if reply is not None and not self.closed:
            with contextlib.suppress(ConnectionError):  # (the stream is gone, and the session)
                await self.emit(reply)

    def close(self) -> None:
        """End the session and its stream."""
        super().close()
        self.outgoing.close()


class Sse2024Endpoint:
    """Serves 2024-11-05 HTTP+SSE clients (see the module docstring)."""

    def __init__(
        self, server: Server, pool: WorkerPool[Call], limits: HttpLimits, *, id_prefix: str = ""
    ) -> None:
        self._server = server
        self._pool = pool
        self._limits = limits
        self.sessions: SessionTable[Sse2024Session] = SessionTable(
            limit=limits.max_sessions, idle_timeout=limits.session_idle_timeout, id_prefix=id_prefix
        )

    async def get(
        self, request: HttpRequest, reply: Reply, principal: str | None, path: str
    ) -> None:
        """Open a connection: the endpoint event, then every message, until the client leaves."""
        if not names(request.headers.get("accept"), "text/event-stream"):
            # (An EventSource names the type; a curl probe's */* is not left hanging.)
            await reply.refuse(406, "Not Acceptable: accept text/event-stream")
            return
        sessions = self.sessions
        if not sessions.has_room():
            await reply.refuse(503, "Service Unavailable: too many sessions")
            return
        limits = self._limits
        session = Sse2024Session(
            sessions.new_id(),
            self._server,
            self._pool,
            principal=principal,
            max_handlers=limits.max_session_handlers,
            backlog=limits.max_stream_backlog,
        )
        sessions.add(session)
        session.attached = 1  # (never idle while its stream is open)
        self._server.attach(session.connection, session)
        endpoint = encode_event(f"{path}?{SESSION_PARAMETER}={session.id}", event="endpoint")
        try:
            await reply.start_stream(first=endpoint)
            async for data in session.incoming:
                await reply.send_raw(data)
        finally:
            with primitives.CancelScope(shield=True):
                await sessions.close(session)
            session.incoming.close()
        await reply.end_stream()

    async def post(self, request: HttpRequest, reply: Reply, principal: str | None) -> None:
        """Take one message for a session; 202, the answers go on its stream."""
        session_id = request.query_parameter(SESSION_PARAMETER) or ""
        session = self.sessions.get(session_id, principal)
        if session is None:
            await reply.refuse(404, "Not Found: no such session")
            return
        if not is_json(request.headers.get("content-type")):
            await reply.refuse(415, "Unsupported Media Type: the body must be application/json")
            return
        session.touch()
        requests, replies = await session.route(session.connection.receive(request.body))
        for refused in replies:
            log_protocol_error(refused)
        for error in replies:
            code = peek_message(error).error_code
            if code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST) and not requests:
                # Unreadable: a bad message is a 400 (the official SDKs' answer).
                await reply.respond_json(400, error)
                return
            try:
                await session.emit(error)
            except ConnectionError:
                await reply.refuse(404, "Not Found: the session's stream is closed")
                return
        await session.start_all(requests, session)
        await reply.respond(202, _PLAIN, b"Accepted")
