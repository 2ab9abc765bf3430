"""The 2024-11-05 HTTP+SSE transport, for servers that predate Streamable HTTP.

"The server MUST provide an SSE endpoint (GET) and a POST endpoint. On connect the
server MUST send ``event: endpoint`` whose data is the URI for POSTs. All client
messages MUST be POSTed there. Server messages are ``event: message`` with the JSON in
``data``" (2024-11-05 basic/transports). A dual-era client gets here when its
``initialize`` POST "fails with 400, 404 or 405 AND carries no recognized modern
JSON-RPC error → GET the URL and expect an endpoint event" (`open_http_sse`).

Like stdio, this is one conversation on one stream: every answer, notification and
server request arrives on the GET stream (read by one task into the `Router`), and
when that stream ends the conversation is over: every pending call fails. POSTs are
answered 202 with no body. The endpoint must be on the server's own origin.
"""

from __future__ import annotations

import contextlib
from typing import Final

import trio

from mcpcore.client import Outcome
from mcpcore.framing import SSEEvent, SSEParser
from mcpcore.http import describe_message, error_in_body
from mcpcore.types import RequestId
from transports._client.calls import PendingCall, options_of
from transports._client.errors import ConnectionClosedError
from transports._http.client.events import pump
from transports._http.client.exchange import BodyTooLargeError, Response, Sender, drain
from transports._http.client.outcomes import close_request, give_up_reason, invalid, status_error
from transports._http.client.router import Router
from transports._net.errors import HttpStatusError
from transports._net.url import HttpUrl

__all__ = ["CANCEL_SEND_TIMEOUT", "HttpSseTransport", "open_http_sse"]

#: Seconds a ``notifications/cancelled`` may take to POST (sent shielded).
CANCEL_SEND_TIMEOUT: Final = 5.0

_ACCEPT_SSE: Final = (b"accept", b"text/event-stream")
_POST_HEADERS: Final = [
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]
_ENDPOINT: Final = "endpoint"
_MESSAGE: Final = "message"


async def open_http_sse(
    url: HttpUrl,
    sender: Sender,
    router: Router,
    nursery: trio.Nursery,
    *,
    max_event_size: int,
    deadline: float,
) -> HttpSseTransport | None:
    """GET ``url`` and wait for its ``endpoint`` event; None if it is not an HTTP+SSE server.

    Args:
        url: The URL the client was given (the SSE endpoint, for such a server).
        sender: Sends requests to the server.
        router: Where the stream's messages go.
        nursery: Where the stream is read.
        max_event_size: The largest event accepted.
        deadline: When to stop waiting for the endpoint (`trio.current_time` clock).
    """
    response: Response | None = None
    with trio.move_on_at(deadline):
        try:
            response = await sender.send(b"GET", url.target.encode("ascii"), [_ACCEPT_SSE])
        except ConnectionClosedError:
            return None
        if response.status != 200 or response.media_type != "text/event-stream":
            await drain(response)
            return None
        parser = SSEParser(max_event_size)
        try:
            while (events := await response.read_events(parser)) is not None:
                for index, event in enumerate(events):
                    if event.event != _ENDPOINT:
                        continue
                    try:
                        endpoint = url.join(event.data.strip())
                    except ValueError:
                        break  # off-origin or not http(s): not a server to follow
                    transport = HttpSseTransport(endpoint, sender, router, response, parser)
                    nursery.start_soon(transport.run, events[index + 1 :])
                    return transport
        except (ConnectionClosedError, BodyTooLargeError):
            return None
        except BaseException:
            response.abandon()
            raise
    if response is not None:
        response.abandon()
    return None


class HttpSseTransport:
    """A conversation over the 2024-11-05 HTTP+SSE transport (see the module docstring)."""

    def __init__(
        self,
        endpoint: HttpUrl,
        sender: Sender,
        router: Router,
        stream: Response,
        parser: SSEParser,
    ) -> None:
        self._target = endpoint.target.encode("ascii")
        self._sender = sender
        self._router = router
        self._stream = stream
        self._parser = parser
        self._scope = trio.CancelScope()
        #: Where our messages go.
        self.endpoint = endpoint

    async def run(self, early: list[SSEEvent]) -> None:
        """Read the server's messages until the stream ends; then the conversation is over."""
        router = self._router
        reason = "the server closed its event stream"
        with self._scope:
            try:
                for event in early:
                    if event.data and event.event == _MESSAGE:
                        await router.receive(event.data.encode())
                await pump(self._stream, self._parser, router)
            except (ConnectionClosedError, BodyTooLargeError) as exc:
                reason = f"the server's event stream broke: {exc}"
            finally:
                self._stream.abandon()
        if not self._scope.cancelled_caught:
            router.fail(ConnectionClosedError(reason))

    async def request(self, request_id: RequestId, data: bytes, *, timeout: float) -> Outcome:
        """POST a request to the endpoint and wait for its answer on the stream."""
        router = self._router
        if router.failure is not None:
            raise router.failure
        started = trio.current_time()
        router.calls[request_id] = PendingCall(options_of(timeout))
        try:
            return await self.request_pending(request_id, data, started + timeout, started)
        except BaseException as exc:
            await self._abandon(request_id, data, exc)
            raise
        finally:
            del router.calls[request_id]

    async def request_pending(
        self,
        request_id: RequestId,
        data: bytes,
        deadline: float,
        started: float | None = None,
    ) -> Outcome:
        """POST a request whose `PendingCall` is registered; wait for its answer."""
        pending = self._router.calls[request_id]
        connection = self._router.session.connection
        started = trio.current_time() if started is None else started
        with trio.move_on_at(deadline):
            response = await self._sender.send(b"POST", self._target, list(_POST_HEADERS), data)
            if response.status // 100 != 2:
                body = await drain(response)
                method = describe_message(data).method
                found = error_in_body(body) if body else None
                if response.status in (401, 403):
                    close_request(connection, request_id)
                    raise status_error(response, method)
                if found is None:
                    return invalid(connection, request_id, method, f"HTTP {response.status}")
                await self._router.receive(body)
                if not pending.done:
                    return invalid(connection, request_id, method, found.error.message)
            else:
                await drain(response)
        return await pending.wait(deadline - started, started=started)

    async def send(self, data: bytes) -> None:
        """POST a notification (or a reply to the server's request).

        Raises:
            HttpStatusError: The server refused it.
        """
        router = self._router
        if router.failure is not None:
            raise router.failure
        response = await self._sender.send(b"POST", self._target, list(_POST_HEADERS), data)
        await drain(response)
        if response.status // 100 != 2:
            raise status_error(response, describe_message(data).method)

    async def _abandon(self, request_id: RequestId, data: bytes, exc: BaseException) -> None:
        router = self._router
        connection = router.session.connection
        if router.failure is not None or request_id not in connection.pending_requests:
            return
        if describe_message(data).method == "initialize":
            router.fail(ConnectionClosedError(f"initialize was abandoned: {give_up_reason(exc)}"))
            return
        cancel = connection.cancel(request_id, give_up_reason(exc))
        if cancel is None:
            return
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(CANCEL_SEND_TIMEOUT),
            contextlib.suppress(ConnectionClosedError, HttpStatusError),
        ):
            await self.send(cancel)

    def close(self) -> None:
        """Stop reading the stream (the conversation is being closed)."""
        self._scope.cancel()
