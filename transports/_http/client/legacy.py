"""A legacy Streamable HTTP session (2025-03-26 … 2025-11-25): its id, its GET streams, its end.

* "(S) MAY assign Mcp-Session-Id on the InitializeResult response"; "(C) MUST echo it
  on all later requests" (`LegacySession.adopt`, `LegacySession.session_id`).
* "(S) MAY terminate the session, after which it MUST return 404 for that id. On a
  404, (C) MUST re-initialize without a session id" (`LegacySession.renew`: the
  ``initialize`` we first sent goes out again under an id of ours, the answer must
  keep the negotiated version, ``notifications/initialized`` follows). What the old
  session held on the server (``resources/subscribe``, ``logging/setLevel``) is gone
  with it.
* "(C) MAY open a standalone SSE stream with a GET" for the server's own requests and
  notifications (`LegacySession.open_get_stream`); a server that answers the GET with
  anything but an event stream simply has none ("tolerate failures of the optional GET
  stream"). A stream that ends is reopened after the ``retry`` time.
* Resumability: a stream that ends before the answer it carries is resumed "with a GET
  plus Last-Event-ID (2025-11-25: always by GET, whether the stream came from POST or
  GET)", after the ``retry`` time the server asked for (`LegacySession.resume`).
* "(C) SHOULD DELETE the endpoint with the session id when done. (S) MAY answer 405
  to DELETE" (`LegacySession.terminate`; any answer will do).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import Any, Final

import msgspec
import trio

from mcpcore import jsonrpc
from mcpcore.framing import SSEParser
from mcpcore.http import (
    LAST_EVENT_ID_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    valid_session_id,
)
from transports._client.errors import ConnectionClosedError
from transports._http.client.events import pump, retry_delay
from transports._http.client.exchange import BodyTooLargeError, Response, Sender, drain
from transports._http.client.router import Router
from transports._net.client_connection import Headers
from transports._net.pool import ConnectFailedError

__all__ = [
    "GET_STREAM_OPEN_TIMEOUT",
    "MAX_GET_STREAM_FAILURES",
    "MAX_RESUME_ATTEMPTS",
    "TERMINATE_TIMEOUT",
    "LegacySession",
]

#: Resumptions in a row that deliver nothing before a stream is given up (each waits
#: the server's ``retry`` time; the official SDK gives up after 2 failed attempts).
MAX_RESUME_ATTEMPTS: Final = 3
#: Times in a row the standalone GET stream may end without delivering anything before
#: it is not reopened any more.
MAX_GET_STREAM_FAILURES: Final = 3
#: Seconds the closing DELETE may take; the client is going away either way.
TERMINATE_TIMEOUT: Final = 5.0
#: Seconds to wait for the server to answer the standalone GET before going on without
#: it: servers answer its head at once, and only the stream itself lasts.
GET_STREAM_OPEN_TIMEOUT: Final = 5.0

_SESSION_HEADER: Final = SESSION_ID_HEADER.lower().encode("ascii")
_VERSION_HEADER: Final = PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_LAST_EVENT_ID: Final = LAST_EVENT_ID_HEADER.lower().encode("ascii")
_ACCEPT_SSE: Final = (b"accept", b"text/event-stream")
_ACCEPT_BOTH: Final = (b"accept", b"application/json, text/event-stream")
_JSON: Final = (b"content-type", b"application/json")
_INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class _InitializeAnswer(msgspec.Struct, gc=False):
    id: Any = None
    result: dict[str, Any] | None = None
    error: Any = None


_ANSWER_DECODER: Final = msgspec.json.Decoder(_InitializeAnswer)
_ANY_DECODER: Final = msgspec.json.Decoder(dict[str, Any])
_ENCODER: Final = msgspec.json.Encoder()


class LegacySession:
    """The session state of one legacy conversation over Streamable HTTP.

    Args:
        target: The request target of the MCP endpoint.
        sender: Sends requests to the server.
        router: Where the server's messages go.
        nursery: Where the GET stream runs.
        version: Returns the negotiated version (None before the handshake).
        max_message_size: The largest JSON answer accepted.
        max_event_size: The largest event accepted.
        get_stream: Whether to open the standalone GET stream.
    """

    def __init__(
        self,
        target: bytes,
        sender: Sender,
        router: Router,
        nursery: trio.Nursery,
        *,
        version: Callable[[], str | None],
        max_message_size: int,
        max_event_size: int,
        get_stream: bool,
    ) -> None:
        self._target = target
        self._sender = sender
        self._router = router
        self._nursery = nursery
        self._version = version
        self._max_message_size = max_message_size
        self._max_event_size = max_event_size
        self._want_get_stream = get_stream
        self._get_stream: trio.CancelScope | None = None
        self._lock = trio.Lock()
        self._renewals = itertools.count(1)
        #: The session id the server issued, if any.
        self.session_id: str | None = None
        #: Changes with each new session (to tell who renews after a 404).
        self.generation = 0
        #: The ``initialize`` request we sent (to send again in a new session).
        self.initialize: bytes | None = None

    # ------------------------------------------------------------ the handshake

    def adopt(self, response: Response) -> None:
        """Take the session id from the answer to ``initialize``."""
        value = response.header(_SESSION_HEADER)
        self.session_id = None if value is None else valid_session_id(value)

    def headers(self, accept: tuple[bytes, bytes] = _ACCEPT_SSE) -> Headers:
        """The headers of a GET or DELETE in this session."""
        headers = [accept]
        if self.session_id is not None:
            headers.append((_SESSION_HEADER, self.session_id.encode("ascii")))
        version = self._version()
        if version is not None:
            headers.append((_VERSION_HEADER, version.encode("ascii")))
        return headers

    # ------------------------------------------------------- a session expired

    async def renew(self, seen: int) -> None:
        """Start a new session after a 404, unless someone did since generation ``seen``.

        Raises:
            ConnectionClosedError: No new session could be started (the conversation is
                then over: the router is failed with it).
        """
        async with self._lock:
            if self.generation != seen:
                return
            try:
                await self._renew()
            except (ConnectionClosedError, BodyTooLargeError) as exc:
                error = ConnectionClosedError(
                    f"the server ended the session, and starting a new one failed: {exc}"
                )
                self._router.fail(error)
                raise error from exc
            self.generation += 1
        await self.open_get_stream()

    async def _renew(self) -> None:
        if self.initialize is None:
            raise ConnectionClosedError("the handshake never happened")
        self.session_id = None
        self.stop_get_stream()
        request = _ANY_DECODER.decode(self.initialize)
        request["id"] = f"mcpcore-reinitialize-{next(self._renewals)}"
        data = _ENCODER.encode(request)
        response = await self._sender.send(b"POST", self._target, [_ACCEPT_BOTH, _JSON], data)
        try:
            if response.status // 100 != 2:
                raise ConnectionClosedError(f"initialize was answered HTTP {response.status}")
            self.adopt(response)
            answer = await self._answer(response, request["id"])
        finally:
            response.abandon()
        version = None if answer.result is None else answer.result.get("protocolVersion")
        if version != self._version():
            raise ConnectionClosedError(
                f"the new session speaks {version!r}, not the negotiated {self._version()!r}"
            )
        headers = self.headers(_ACCEPT_BOTH)
        headers.append(_JSON)
        notified = await self._sender.send(b"POST", self._target, headers, _INITIALIZED)
        await drain(notified)
        if notified.status // 100 != 2:
            raise ConnectionClosedError(
                f"notifications/initialized was answered HTTP {notified.status}"
            )

    async def _answer(self, response: Response, request_id: str) -> _InitializeAnswer:
        """The answer to our re-``initialize``, from a JSON body or an event stream."""
        if response.media_type == "text/event-stream":
            parser = SSEParser(self._max_event_size)
            while (events := await response.read_events(parser)) is not None:
                for event in events:
                    if not event.data:
                        continue
                    answer = _decode_answer(event.data.encode())
                    if answer is not None and answer.id == request_id:
                        return answer
            raise ConnectionClosedError("the stream ended without an answer to initialize")
        answer = _decode_answer(await response.read_body(self._max_message_size))
        if answer is None or answer.id != request_id:
            raise ConnectionClosedError("the answer to initialize is not one")
        return answer

    # ------------------------------------------------------------- GET streams

    async def open_get_stream(self) -> None:
        """Open the standalone GET stream (if wanted and not open yet).

        Returns once the server answered the GET (or after `GET_STREAM_OPEN_TIMEOUT`):
        a server may send its requests there as soon as the handshake is over, and
        they are lost if the stream is not open yet.
        """
        if not self._want_get_stream or self._get_stream is not None:
            return
        if self._router.failure is not None:
            return
        scope = self._get_stream = trio.CancelScope()
        with trio.move_on_after(GET_STREAM_OPEN_TIMEOUT):
            await self._nursery.start(self._run_get_stream, scope)

    def stop_get_stream(self) -> None:
        """Close the standalone GET stream."""
        if self._get_stream is not None:
            self._get_stream.cancel()
            self._get_stream = None

    async def _run_get_stream(
        self, scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]
    ) -> None:
        parser = SSEParser(self._max_event_size)
        failures = 0
        started = False

        def answered() -> None:
            nonlocal started
            if not started:
                started = True
                task_status.started()

        with scope:
            while failures < MAX_GET_STREAM_FAILURES and self._router.failure is None:
                delivered = await self._read_get_stream(parser, answered)
                if delivered is None:
                    break  # the server has no GET stream (405, 404, 400...): none, then
                failures = 0 if delivered else failures + 1
                answered()
                await trio.sleep(retry_delay(parser))
        answered()
        if self._get_stream is scope:
            self._get_stream = None

    async def _read_get_stream(
        self, parser: SSEParser, answered: Callable[[], None]
    ) -> bool | None:
        """One GET stream, read to its end: whether it delivered events; None if refused."""
        headers = self.headers()
        if parser.last_event_id:
            headers.append((_LAST_EVENT_ID, parser.last_event_id.encode("utf-8")))
        seen = parser.last_event_id
        try:
            response = await self._sender.send(b"GET", self._target, headers)
        except ConnectFailedError:
            return None  # the server is gone
        except ConnectionClosedError:
            return False
        answered()
        if response.status != 200 or response.media_type != "text/event-stream":
            await drain(response)
            return None
        try:
            await pump(response, parser, self._router)
        except (ConnectionClosedError, BodyTooLargeError):
            pass  # the stream broke: resumed like one that ended
        finally:
            response.abandon()
        return parser.last_event_id != seen

    async def resume(self, parser: SSEParser, done: Callable[[], bool]) -> bool:
        """Resume a stream that ended before ``done()``, by GET with ``Last-Event-ID``.

        Returns:
            Whether ``done()`` became true; False once `MAX_RESUME_ATTEMPTS` in a row
            delivered nothing, or when the server refused to resume or can't be reached.
        """
        attempts = 0
        while attempts < MAX_RESUME_ATTEMPTS:
            await trio.sleep(retry_delay(parser))
            headers = self.headers()
            headers.append((_LAST_EVENT_ID, parser.last_event_id.encode("utf-8")))
            seen = parser.last_event_id
            try:
                response = await self._sender.send(b"GET", self._target, headers)
            except ConnectFailedError:
                return False  # the server is gone: waiting longer only delays the news
            except ConnectionClosedError:
                attempts += 1
                continue
            if response.status != 200 or response.media_type != "text/event-stream":
                await drain(response)
                return False
            try:
                if await pump(response, parser, self._router, until=done):
                    response.close_early()
                    return True
            except (ConnectionClosedError, BodyTooLargeError):
                pass
            finally:
                response.abandon()
            if done():
                return True
            attempts = 0 if parser.last_event_id != seen else attempts + 1
        return False

    # ----------------------------------------------------------------- the end

    async def terminate(self) -> None:
        """DELETE the session (bounded, failures ignored); stop the GET stream."""
        self.stop_get_stream()
        if self.session_id is None:
            return
        with trio.move_on_after(TERMINATE_TIMEOUT), contextlib.suppress(ConnectionClosedError):
            # No Accept: a DELETE has no body to negotiate.
            response = await self._sender.send(b"DELETE", self._target, self.headers()[1:])
            await drain(response)
        self.session_id = None


def _decode_answer(data: bytes) -> _InitializeAnswer | None:
    if jsonrpc.nests_too_deeply(data):
        return None
    try:
        return _ANSWER_DECODER.decode(data)
    except jsonrpc.DECODE_ERRORS:
        return None
