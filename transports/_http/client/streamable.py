"""The Streamable HTTP client transport: each message its own POST, answers as JSON or SSE.

This is the `ClientTransport` of `open_http_client`. Per request:

1. the headers come from the message itself (`mcpcore.http.message_headers`): the
   2026-07-28 ones (version, method, name, ``Mcp-Param-*``), or the legacy session's;
2. the POST goes out on a pooled keep-alive connection;
3. the answer is read in the calling task, no task switch on the way: a JSON body, or
   an event stream (`transports._http.client.answers`: progress reported between its
   events, a broken legacy stream resumed);
4. an error status is judged by `mcpcore.http.judge_refusal`: a fresh token, a new
   legacy session, the 2024-11-05 HTTP+SSE transport, the JSON-RPC error in the body,
   or `HttpStatusError`.

Giving up on a request (timeout, cancellation) is done "the way each era requires":
2026-07-28 closes the response stream ("closing the request's SSE response stream IS
the cancellation"); legacy sends ``notifications/cancelled`` ("a disconnect SHOULD NOT
be interpreted as cancellation", 2025-03-26 basic/transports).

A 2026-07-28 answer stream that ends before the answer loses the request: "(C) MUST
re-issue it with a new id" (2026-07-28 basic/transports), done once. A -32020
(HeaderMismatch) answering a ``tools/call`` means our idea of its ``x-mcp-header``
declarations is stale: "(C) SHOULD refetch tools/list and retry", done once too.
"""

from __future__ import annotations

import contextlib
from contextlib import aclosing
from typing import Any, Final

import msgspec
import trio

from mcpcore import ErrorReceived, Phase, ResponseReceived, jsonrpc
from mcpcore.client import ClientSession, Outcome
from mcpcore.framing import SSEParser
from mcpcore.http import (
    HeaderParam,
    OutgoingMessage,
    Refusal,
    ToolHeaderRegistry,
    describe_message,
    error_in_body,
    judge_refusal,
    message_headers,
)
from mcpcore.types import Error, ListToolsResult, RequestId
from mcpcore.versions import Era
from transports._client.calls import CallOptions, PendingCall, options_of
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import NotificationDispatcher, Subscription
from transports._http.client.answers import AnswerReader, Call, StreamLostError
from transports._http.client.events import pump
from transports._http.client.exchange import BodyTooLargeError, Response, Sender, drain
from transports._http.client.http_sse import HttpSseTransport, open_http_sse
from transports._http.client.legacy import LegacySession
from transports._http.client.outcomes import close_request, give_up_reason, invalid, status_error
from transports._http.client.router import Router
from transports._net.errors import HttpStatusError
from transports._net.url import HttpUrl

__all__ = ["CANCEL_SEND_TIMEOUT", "StreamableTransport"]

#: Seconds a ``notifications/cancelled`` may take to POST. It is sent shielded (a
#: cancelled caller still sends it), so it needs its own bound.
CANCEL_SEND_TIMEOUT: Final = 5.0

_ACCEPT_BOTH: Final = (b"accept", b"application/json, text/event-stream")
_JSON: Final = (b"content-type", b"application/json")
_SSE: Final = "text/event-stream"
_PROBES: Final = frozenset({"server/discover", "initialize"})
_CREDENTIALS: Final = (Refusal.FORBIDDEN, Refusal.REAUTHENTICATE)


class StreamableTransport:
    """The `ClientTransport` of a Streamable HTTP client (and of its HTTP+SSE fallback).

    Args:
        url: The MCP endpoint.
        sender: Sends requests to the server.
        nursery: Where answer streams, the GET stream and the server's requests run.
        timeout: Seconds a request waits when the session passes no timeout.
        notifications: Where notifications outside listen streams go, if anywhere.
        max_message_size: The largest JSON answer accepted, in bytes.
        max_event_size: The largest event of an event stream accepted, in bytes.
        get_stream: Legacy: open the standalone GET stream for the server's messages.
        terminate: Legacy: DELETE the session on close.
    """

    def __init__(
        self,
        url: HttpUrl,
        sender: Sender,
        nursery: trio.Nursery,
        *,
        timeout: float,
        notifications: NotificationDispatcher | None,
        max_message_size: int,
        max_event_size: int,
        get_stream: bool = True,
        terminate: bool = True,
    ) -> None:
        self._url = url
        self._target = url.target.encode("ascii")
        self._sender = sender
        self._nursery = nursery
        self._timeout = timeout
        self._max_message_size = max_message_size
        self._max_event_size = max_event_size
        self._terminate = terminate
        self._router = Router(nursery, self._post_reply, notifications=notifications)
        self._legacy = LegacySession(
            self._target,
            sender,
            self._router,
            nursery,
            version=self._negotiated_version,
            max_message_size=max_message_size,
            max_event_size=max_event_size,
            get_stream=get_stream,
        )
        self._answers = AnswerReader(
            self._router, self._legacy, nursery, max_event_size=max_event_size
        )
        #: The ``x-mcp-header`` declarations of the tools listed (2026-07-28).
        self.tools = ToolHeaderRegistry()
        self._readers: dict[RequestId, trio.CancelScope] = {}
        self._http_sse: HttpSseTransport | None = None
        self._closing = False
        self._closed = trio.Event()

    def bind(self, session: ClientSession) -> None:
        """Attach the session this transport carries."""
        self._router.bind(session)

    @property
    def session(self) -> ClientSession:
        """The session this transport carries."""
        return self._router.session

    @property
    def failure(self) -> ConnectionClosedError | None:
        """Why the conversation is over, once it is."""
        return self._router.failure

    @property
    def session_id(self) -> str | None:
        """The legacy session's id, when the server issued one."""
        return self._legacy.session_id

    @property
    def uses_http_sse(self) -> bool:
        """Whether the server turned out to speak the 2024-11-05 HTTP+SSE transport."""
        return self._http_sse is not None

    def _negotiated_version(self) -> str | None:
        connection = self.session.connection
        return connection.protocol_version if connection.era is Era.LEGACY else None

    # ----------------------------------------------------------------- requests

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """POST a request; return the event that ends it (see the module docstring)."""
        if self._http_sse is not None:
            wait = self._timeout if timeout is None else timeout
            return await self._http_sse.request(request_id, data, timeout=wait)
        router = self._router
        if router.failure is not None:
            raise router.failure
        message = describe_message(data)
        started = trio.current_time()
        wait = self._timeout if timeout is None else timeout
        deadline = started + wait
        reissued = False
        original = request_id
        try:
            while True:
                try:
                    outcome = await self._attempt(
                        request_id, message, data, deadline, started, options=options_of(timeout)
                    )
                except StreamLostError:
                    if reissued:
                        raise
                    reissued = True
                    request_id, data = self._reissue(request_id, data)
                    continue
                if (
                    not reissued
                    and message.method == "tools/call"
                    and message.is_modern
                    and isinstance(outcome, ErrorReceived)
                    and outcome.error.code == jsonrpc.HEADER_MISMATCH
                    and await self._relist_tools(message.name, deadline)
                ):
                    reissued = True
                    request_id, data = self._reissue(request_id, data)
                    message = describe_message(data)
                    continue
                break
        except BaseException as exc:
            await self._abandon(request_id, message, exc)
            raise
        if request_id != original:
            outcome = msgspec.structs.replace(outcome, request_id=original)
        return self._learn(message, outcome)

    async def _attempt(
        self,
        request_id: RequestId,
        message: OutgoingMessage,
        data: bytes,
        deadline: float,
        started: float,
        *,
        options: CallOptions,
    ) -> Outcome:
        """One POST of a request, its answer read in this task, JSON or event stream."""
        router = self._router
        pending = PendingCall(options)
        router.calls[request_id] = pending
        try:
            with trio.CancelScope(deadline=deadline) as scope:
                answer = await self._post_request(request_id, message, data, deadline)
                if not isinstance(answer, Response):
                    return answer
                if answer.media_type == _SSE:
                    call = Call(request_id, message, pending, scope, started)
                    await self._answers.read(answer, call)
                else:
                    outcome = await self._read_json(request_id, message, answer, pending)
                    if outcome is not None:
                        return outcome
            if scope.cancelled_caught and not pending.done:
                raise TimeoutError(f"no answer within {deadline - started:g} s")
            outcome = pending.settled()
            if outcome is not None:
                return outcome
            # The outcome (or the failure), once the last progress is reported.
            return await pending.wait(scope.deadline - started, started=started)
        finally:
            del router.calls[request_id]

    async def _post_request(
        self, request_id: RequestId, message: OutgoingMessage, data: bytes, deadline: float
    ) -> Response | Outcome:
        """POST a request until it has a 2xx answer, or an outcome without one."""
        renewed = False
        while True:
            generation = self._legacy.generation
            response = await self._post(message, data)
            if response.status // 100 == 2:
                if message.method == "initialize":
                    self._legacy.initialize = data
                    self._legacy.adopt(response)
                if response.status == 202:
                    response.close()
                    return self._invalid(request_id, message, "the server answered 202 Accepted")
                return response
            body = await drain(response)
            found = error_in_body(body) if body else None
            verdict = judge_refusal(
                response.status,
                method=message.method,
                had_session=self._legacy.session_id is not None,
                error_code=None if found is None else found.error.code,
                reauthenticated=response.reauthenticated,
            )
            if verdict is Refusal.SESSION_EXPIRED and not renewed:
                renewed = True
                await self._legacy.renew(generation)
                continue
            if verdict is Refusal.TRY_HTTP_SSE:
                outcome = await self._try_http_sse(request_id, data, deadline)
                if outcome is not None:
                    return outcome
            if found is not None:
                return await self._error_outcome(request_id, message, body, found.error)
            # (REAUTHENTICATE: the sender already tried a fresh token, or had none to try.)
            if verdict in _CREDENTIALS or message.method not in _PROBES:
                self._close_request(request_id)
                raise status_error(response, message.method)
            # The probe and the handshake need an outcome: "any other error → legacy".
            return self._invalid(
                request_id, message, f"HTTP {response.status} {response.head.reason}"
            )

    async def _post(self, message: OutgoingMessage, data: bytes) -> Response:
        """POST one message with its headers."""
        legacy = self._legacy
        params: tuple[HeaderParam, ...] = ()
        if message.method == "tools/call" and message.is_modern and message.name is not None:
            params = self.tools.params_for(message.name)
        mcp = message_headers(
            message,
            negotiated_version=self._negotiated_version(),
            session_id=legacy.session_id,
            header_params=params,
        )
        headers = [_ACCEPT_BOTH, _JSON]
        headers.extend((name.encode("ascii"), value.encode("ascii")) for name, value in mcp)
        return await self._sender.send(b"POST", self._target, headers, data)

    async def _read_json(
        self,
        request_id: RequestId,
        message: OutgoingMessage,
        response: Response,
        pending: PendingCall,
    ) -> Outcome | None:
        """Read a JSON answer into the router; the outcome if it is not the answer."""
        try:
            body = await response.read_body(self._max_message_size)
        except BodyTooLargeError as exc:
            return self._invalid(request_id, message, str(exc))
        except BaseException:
            response.abandon()
            raise
        response.close()
        await self._router.receive(body)
        if pending.done:
            return None
        found = error_in_body(body)
        if found is not None and found.request_id is None:
            return await self._error_outcome(request_id, message, body, found.error)
        return self._invalid(request_id, message, "the JSON answer does not answer the request")

    async def _error_outcome(
        self, request_id: RequestId, message: OutgoingMessage, body: bytes, error: Error
    ) -> Outcome:
        """The JSON-RPC error of an error response, as the outcome of ``request_id``."""
        pending = self._router.calls.get(request_id)
        await self._router.receive(body)
        if pending is not None and pending.done:
            return await pending.wait(0)
        # No id (the server could not tell which request), or another: it is ours.
        self._close_request(request_id)
        return ErrorReceived(request_id=request_id, method=message.method, error=error)

    def _invalid(self, request_id: RequestId, message: OutgoingMessage, why: str) -> Outcome:
        """End ``request_id`` with an unusable answer (a local verdict)."""
        return invalid(self.session.connection, request_id, message.method, why)

    def _close_request(self, request_id: RequestId) -> None:
        close_request(self.session.connection, request_id)

    # --------------------------------------------------------------- giving up

    async def _abandon(
        self, request_id: RequestId, message: OutgoingMessage, exc: BaseException
    ) -> None:
        """Give up on a request whose call ended without its answer."""
        scope = self._readers.pop(request_id, None)
        if scope is not None:
            scope.cancel()  # 2026-07-28: closing the stream IS the cancellation
        if self._router.failure is not None:
            return
        connection = self.session.connection
        if request_id not in connection.pending_requests:
            return
        if message.method == "initialize":
            # "The client MUST NOT attempt to cancel its initialize request".
            self._router.fail(
                ConnectionClosedError(f"initialize was abandoned: {give_up_reason(exc)}")
            )
            return
        cancel = connection.cancel(request_id, give_up_reason(exc))
        if cancel is not None and connection.phase is not Phase.MODERN:
            await self._send_shielded(cancel)

    async def _send_shielded(self, data: bytes) -> None:
        """POST a cancellation even from a cancelled task (bounded, failures ignored)."""
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(CANCEL_SEND_TIMEOUT),
            contextlib.suppress(ConnectionClosedError, HttpStatusError),
        ):
            await self._notify(describe_message(data), data)

    # ------------------------------------------------------------ notifications

    async def send(self, data: bytes) -> None:
        """POST a notification (legacy: ``initialized``, ``cancelled``, roots changes).

        Raises:
            HttpStatusError: The server refused it.
            ConnectionClosedError: The connection broke.
            TimeoutError: The server did not accept it within the client's timeout.
        """
        if self._router.failure is not None:
            raise self._router.failure
        message = describe_message(data)
        if self.session.connection.phase is Phase.MODERN:
            # 2026-07-28 HTTP has no client notifications: a cancellation is the
            # closing of the stream, which happened when the request was abandoned.
            return
        with trio.move_on_after(self._timeout) as waited:
            if self._http_sse is not None:
                await self._http_sse.send(data)
            else:
                await self._notify(message, data)
        if waited.cancelled_caught:
            raise TimeoutError(f"{message.method}: no answer within {self._timeout:g} s")
        if message.method == "notifications/initialized" and self._http_sse is None:
            await self._legacy.open_get_stream()

    async def _notify(self, message: OutgoingMessage, data: bytes) -> None:
        response = await self._post(message, data)
        await drain(response)
        # "Tolerate an HTTP 200 JSON body (without id) answering a notification."
        if response.status // 100 != 2:
            raise status_error(response, message.method)

    async def _post_reply(self, data: bytes) -> None:
        """POST our answer to the server's request (legacy); any status is accepted."""
        with trio.move_on_after(self._timeout):
            if self._http_sse is not None:
                await self._http_sse.send(data)
                return
            response = await self._post(describe_message(data), data)
            await drain(response)

    # ---------------------------------------------------------- listen streams

    async def open_listen(
        self, subscription: Subscription, request_id: RequestId, data: bytes
    ) -> None:
        """Start a ``subscriptions/listen`` request; its answer stream is read by a task."""
        router = self._router
        if router.failure is not None:
            raise router.failure
        router.streams[request_id] = subscription
        scope = trio.CancelScope()
        self._readers[request_id] = scope
        self._nursery.start_soon(self._run_listen, request_id, data, subscription, scope)

    async def _run_listen(
        self,
        request_id: RequestId,
        data: bytes,
        subscription: Subscription,
        scope: trio.CancelScope,
    ) -> None:
        message = describe_message(data)
        try:
            with scope:
                try:
                    answer = await self._post_request(
                        request_id, message, data, trio.current_time()
                    )
                except (ConnectionClosedError, HttpStatusError) as exc:
                    subscription.fail(exc)
                    return
                if not isinstance(answer, Response):
                    subscription.finish(answer)
                    return
                try:
                    if answer.media_type != _SSE:
                        await self._router.receive(await answer.read_body(self._max_message_size))
                    else:
                        await pump(answer, SSEParser(self._max_event_size), self._router)
                except (ConnectionClosedError, BodyTooLargeError) as exc:
                    subscription.fail(exc)
                finally:
                    answer.abandon()
                if not subscription.ended:
                    # "A transport close without a result means an abrupt end."
                    subscription.fail(ConnectionClosedError("the server closed the listen stream"))
                self._close_request(request_id)
        finally:
            if self._readers.get(request_id) is scope:
                del self._readers[request_id]

    async def close_listen(self, request_id: RequestId) -> None:
        """End a listen stream: "close the SSE stream (HTTP)"; stop routing it."""
        subscription = self._router.streams.pop(request_id, None)
        scope = self._readers.pop(request_id, None)
        if scope is not None:
            scope.cancel()
        if subscription is not None and not subscription.ended:
            subscription.finish(None)
        if self._router.failure is None:
            self._close_request(request_id)

    # ------------------------------------------------------------------- helpers

    async def _try_http_sse(
        self, request_id: RequestId, data: bytes, deadline: float
    ) -> Outcome | None:
        """The 2024-11-05 fallback: the outcome of ``initialize`` there, or None if none."""
        transport = await open_http_sse(
            self._url,
            self._sender,
            self._router,
            self._nursery,
            max_event_size=self._max_event_size,
            deadline=deadline,
        )
        if transport is None:
            return None
        self._http_sse = transport
        return await transport.request_pending(request_id, data, deadline)

    def _reissue(self, request_id: RequestId, data: bytes) -> tuple[RequestId, bytes]:
        """The same request with a new id, the old one forgotten ("MUST use a new id")."""
        connection = self.session.connection
        envelope = jsonrpc.decode_envelope(data)
        assert isinstance(envelope, jsonrpc.WireMessage)
        assert isinstance(envelope.method, str)
        spec = connection.methods[envelope.method]
        params: Any = None
        if isinstance(envelope.params, msgspec.Raw):
            params = jsonrpc.decoder_for(spec.params_type).decode(envelope.params)
        self._close_request(request_id)
        return connection.send_request(envelope.method, params)

    async def _relist_tools(self, name: str | None, deadline: float) -> bool:
        """List the tools again, to learn ``name``'s current declarations; whether found."""
        if name is None:
            return False
        pages = self.session.iter_pages("tools/list", fresh=True)
        with trio.move_on_at(deadline):
            async with aclosing(pages):  # type: ignore[type-var]
                async for page in pages:
                    if any(tool.name == name for tool in page.tools):
                        return True
        return False

    def _learn(self, message: OutgoingMessage, outcome: Outcome) -> Outcome:
        """Drop tools with invalid ``x-mcp-header`` annotations from a 2026-07-28 listing."""
        if (
            message.is_modern
            and isinstance(outcome, ResponseReceived)
            and isinstance(outcome.result, ListToolsResult)
        ):
            result = self.tools.learn(outcome.result)
            if result is not outcome.result:
                return msgspec.structs.replace(outcome, result=result)
        return outcome

    # ------------------------------------------------------------------- closing

    async def aclose(self) -> None:
        """Fail what is pending, end the legacy session, stop every task. Always closes."""
        with trio.CancelScope(shield=True):
            if self._closing:
                await self._closed.wait()
                return
            self._closing = True
            try:
                self._router.fail(ConnectionClosedError("the client closed the connection"))
                for scope in self._readers.values():
                    scope.cancel()
                if self._http_sse is not None:
                    self._http_sse.close()
                elif self._terminate:
                    await self._legacy.terminate()
                else:
                    self._legacy.stop_get_stream()
            finally:
                self._nursery.cancel_scope.cancel()
                self._closed.set()
