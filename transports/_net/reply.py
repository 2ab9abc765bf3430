"""The response to one request: a whole body at once, or an event stream.

A `Reply` decides what to send and when; its `ResponseWriter` decides how it looks on
the wire. Two writers exist: a TCP connection's `HttpConnection`, which frames every
byte with its `transports._net.http1` state (a whole response with its
``Content-Length``, status, headers and body in one write; an event stream chunked), and
the ASGI app's, which hands the same decisions to the ASGI server as
``http.response.start`` and ``http.response.body`` messages.

A `Reply` writes under its writer's lock, which serialises every write: the task
answering the request and the one keeping a quiet stream alive (keep-alive comments)
never interleave bytes.

Event streams are ``text/event-stream`` with ``Cache-Control: no-cache`` and
``X-Accel-Buffering: no`` ("(S) SHOULD set X-Accel-Buffering: no", 2026-07-28
basic/transports: buffering proxies would hold the notifications back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, Protocol

from mcpcore import jsonrpc
from mcpcore.framing import encode_comment, encode_event
from mcpcore.http import peek_message, status_for_error
from transports._runtime.requestlog import log_refusal

__all__ = [
    "JSON_HEADERS",
    "REPLY_MODES",
    "SSE_HEADERS",
    "Header",
    "Reply",
    "ReplyMode",
    "ResponseWriter",
]

#: A header field: lower-case name, value.
Header = tuple[bytes, bytes]

#: How `transports.serve_http` answers a POST that carries requests (its ``replies``):
#: ``"auto"`` (legacy: an event stream, primed and resumable; 2026-07-28: a JSON body
#: unless something comes before the answer), ``"json"`` (a JSON body whenever nothing
#: comes before the answer, in both eras), ``"stream"`` (an event stream, in both eras).
#: "(S) MUST answer ``Content-Type: application/json`` or ``text/event-stream``" and
#: "(C) MUST support both" (2025-03-26 … 2026-07-28 basic/transports): any is valid.
ReplyMode = Literal["auto", "json", "stream"]
REPLY_MODES: Final[tuple[ReplyMode, ...]] = ("auto", "json", "stream")

JSON_HEADERS: Final[list[Header]] = [(b"content-type", b"application/json")]
SSE_HEADERS: Final[list[Header]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_KEEPALIVE: Final = encode_comment("keep-alive")


class ResponseWriter(Protocol):
    """Where a `Reply` writes: one client's responses, one request at a time.

    Writes raise one of `transports._runtime.primitives.BROKEN` or ``CLOSED`` when the
    client is gone.

    Attributes:
        modern: Slot for the 2026-07-28 handler's `mcpcore.Connection` of this client.
        nudge: Called `transports._net.server_connection.NUDGE_DELAY` after the request
            being answered began, if it is still running then (set by the answer).
    """

    modern: object | None
    nudge: Callable[[], None] | None

    async def lock(self) -> None:
        """Take the write lock."""

    def lock_nowait(self) -> bool:
        """Take the write lock if it is free."""

    def unlock(self) -> None:
        """Release the write lock."""

    async def write_response(
        self, status: int, headers: Sequence[Header], body: bytes, *, close: bool
    ) -> None:
        """Send a whole response (``close``: end the connection after it)."""

    async def write_stream(self, head: Sequence[Header] | None, data: bytes, *, end: bool) -> None:
        """Send a piece of a streamed body (200), after its head when ``head`` is given.

        ``data`` may be empty; ``end`` ends the body.
        """

    def on_close(self, closer: Callable[[], None]) -> None:
        """Call ``closer`` once when the client is gone (or the writer is done)."""


class Reply:
    """The answer to the request a connection is serving.

    Attributes:
        started: The status line went out.
        streaming: It is an event stream.
        finished: The response is complete.
        may_stream: Whether a response still unstarted after the keep-alive interval
            may become an event stream, so that a keep-alive comment can go out (a
            request that defers the choice between JSON and a stream, CHECKLIST G5).
        stream_headers: Extra headers of a stream the keep-alive starts that way.
    """

    __slots__ = ("_connection", "finished", "may_stream", "started", "stream_headers", "streaming")

    def __init__(self, connection: ResponseWriter) -> None:
        self._connection = connection
        self.started = False
        self.streaming = False
        self.finished = False
        self.may_stream = False
        self.stream_headers: Sequence[Header] = ()

    # ----------------------------------------------------------- whole responses

    async def respond(
        self,
        status: int,
        headers: Sequence[Header] = (),
        body: bytes = b"",
        *,
        close: bool = False,
    ) -> None:
        """Send a complete response (``close``: end the connection after it)."""
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            self._check_idle()
            await connection.write_response(status, headers, body, close=close)
            self.started = self.finished = True
        finally:
            connection.unlock()

    async def respond_json(self, status: int, body: bytes, headers: Sequence[Header] = ()) -> None:
        """Send a JSON body (one JSON-RPC message)."""
        await self.respond(status, [*JSON_HEADERS, *headers], body)

    async def refuse(
        self,
        status: int,
        message: str,
        *,
        code: int = jsonrpc.INVALID_REQUEST,
        headers: Sequence[Header] = (),
        close: bool = False,
    ) -> None:
        """Refuse the request at the HTTP level, with a JSON-RPC error without an id.

        "The body MAY be a JSON-RPC error without id" (2025-11-25 basic/transports).
        """
        log_refusal(status, message)
        body = jsonrpc.encode_error_response(None, code, message)
        await self.respond(status, [*JSON_HEADERS, *headers], body, close=close)

    # ----------------------------------------------------------- event streams

    async def start_stream(self, headers: Sequence[Header] = (), *, first: bytes = b"") -> None:
        """Start an event stream (status 200), with ``first`` (encoded events) in the same write."""
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            self._check_idle()
            await connection.write_stream(_stream_head(headers), first, end=False)
            self.started = self.streaming = True
        finally:
            connection.unlock()

    async def send_events(self, data: bytes, headers: Sequence[Header] = (), *, end: bool) -> None:
        """Write encoded events: the stream's first (starting it), or the next ones.

        With ``end``, the stream ends after them; a stream not started yet is then sent
        whole (status 200, with a length: one write). Decided under the write lock, so
        a stream the keep-alive started meanwhile just goes on.
        """
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if self.finished:
                raise RuntimeError("the response is complete")
            if not self.started and end:
                await connection.write_response(200, _stream_head(headers), data, close=False)
            else:
                head = None if self.started else _stream_head(headers)
                await connection.write_stream(head, data, end=end)
            self.started = self.streaming = True
            self.finished = end
        finally:
            connection.unlock()

    async def send_event(self, message: bytes, *, event_id: str | None = None) -> None:
        """Write one message as an event of the stream."""
        await self.send_raw(encode_event(message, id=event_id))

    async def send_raw(self, data: bytes) -> None:
        """Write already encoded events."""
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if not self.streaming or self.finished:
                raise RuntimeError("no event stream is open")
            await connection.write_stream(None, data, end=False)
        finally:
            connection.unlock()

    async def end_stream(self, last: bytes = b"") -> None:
        """End the event stream, after ``last`` (encoded events) if given."""
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if self.finished:
                return
            await connection.write_stream(None, last, end=True)
            self.finished = True
        finally:
            connection.unlock()

    async def relay_stream(self, head: Sequence[Header] | None, data: bytes, *, end: bool) -> None:
        """Write a piece of an event stream another `Reply` framed (a forwarded request's).

        ``head`` (the stream's header fields, given with its first piece) and ``data``
        (encoded events) are written as they are; ``end`` ends the stream.
        """
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if self.finished:
                raise RuntimeError("the response is complete")
            if not self.started and head is None:
                raise RuntimeError("a relayed stream starts with its head")
            await connection.write_stream(None if self.started else head, data, end=end)
            self.started = self.streaming = True
            self.finished = end
        finally:
            connection.unlock()

    # ----------------------------------------------------------- JSON-RPC answers

    async def answer(
        self,
        message: bytes,
        headers: Sequence[Header] = (),
        *,
        status: int | None = None,
        stream: bool = False,
    ) -> None:
        """Send the final JSON-RPC answer of a request: a JSON body, or the stream's last event.

        As JSON, an error gets its 2026-07-28 status (`mcpcore.http.status_for_error`)
        unless ``status`` is given (a legacy answer is 200 whatever it says: a legacy
        404 means "no such session"). Decided under the write lock: a stream the
        keep-alive committed to meanwhile gets the answer as its last event. With
        ``stream``, an answer whose status would be 200 goes as an event stream of
        that one event (sent whole, in one write); an error with a status of
        its own (400, 404) stays a JSON body, since a stream's status is 200 and the
        2026-07-28 errors are told apart by theirs.
        """
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if self.streaming:
                if self.finished:
                    return
                await connection.write_stream(None, encode_event(message), end=True)
                self.finished = True
            else:
                self._check_idle()
                if status is None:
                    code = peek_message(message).error_code
                    status = 200 if code is None else status_for_error(code)
                as_stream = stream and status == 200
                if as_stream:
                    message = encode_event(message)
                kind = SSE_HEADERS if as_stream else JSON_HEADERS
                await connection.write_response(status, [*kind, *headers], message, close=False)
                self.started = self.finished = True
                self.streaming = as_stream
        finally:
            connection.unlock()

    async def stream_message(self, message: bytes, headers: Sequence[Header] = ()) -> None:
        """Write a message before the answer, starting the event stream if need be."""
        connection = self._connection
        if not connection.lock_nowait():  # (a free lock costs no coroutine)
            await connection.lock()
        try:
            if self.finished:
                raise RuntimeError("the response is complete")
            head = None if self.streaming else _stream_head(headers)
            await connection.write_stream(head, encode_event(message), end=False)
            self.started = self.streaming = True
        finally:
            connection.unlock()

    # ----------------------------------------------------------- keep-alive

    async def keepalive(self) -> None:
        """Called by the connection when the response has been quiet for a while.

        A stream gets a comment; a response not started yet becomes a stream first
        when it may (`may_stream`). Skipped when a write is under way (bytes are
        moving anyway).
        """
        connection = self._connection
        if self.finished or not connection.lock_nowait():
            return
        try:
            if not self.started and self.may_stream:
                await connection.write_stream(
                    _stream_head(self.stream_headers), _KEEPALIVE, end=False
                )
                self.started = self.streaming = True
            elif self.streaming and not self.finished:
                await connection.write_stream(None, _KEEPALIVE, end=False)
        finally:
            connection.unlock()

    def set_nudge(self, nudge: Callable[[], None] | None) -> None:
        """Have ``nudge`` called `NUDGE_DELAY` after the request began, if still running.

        (None: no more; it is forgotten when the request ends anyway.)
        """
        self._connection.nudge = nudge

    def _check_idle(self) -> None:
        if self.started:
            raise RuntimeError("the response has started already")


def _stream_head(headers: Sequence[Header]) -> list[Header]:
    """The header fields of an event stream with ``headers`` besides."""
    return [*SSE_HEADERS, *headers]
