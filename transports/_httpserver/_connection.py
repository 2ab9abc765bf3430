"""One TCP connection: HTTP/1.1 with h11, one request at a time, in order.

Two tasks serve a connection:

* the **reader** owns the receiving side. It feeds h11, assembles each request (head
  and whole body, within the limits: 431 for an oversized or overfull head, 413 for a
  body past the limit) and hands it over. While a response is in progress it keeps
  reading, so that it sees the client hang up at once (2026-07-28: "closing the
  response stream IS the cancellation"), buffering pipelined requests up to
  `MAX_PIPELINED_BYTES`. Its one cancel scope carries a deadline for whatever it is
  waiting for: the rest of a request head (`HttpLimits.header_timeout`, against
  clients that send slowly or not at all), a body, the next request of an idle
  keep-alive connection, or, during a response, the keep-alive tick of event streams
  (which also watches for writes stuck on a client that reads nothing);
* the **main task** answers one request at a time through the application, then starts
  h11's next cycle and takes the next request: straight from h11's buffer when it is
  pipelined there already, else from the reader (a direct hand-off, no queue).

HTTP/1.1 answers requests in order, so one at a time is not a limit: a client wanting
concurrency opens more connections. A client that closes the connection ends
everything in progress on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

import h11
import outcome
import trio

from transports._httpserver._limits import (
    MAX_PIPELINED_BYTES,
    READ_SIZE,
    HttpLimits,
)
from transports._httpserver._reply import Reply
from transports._httpserver._request import HttpRequest

__all__ = ["LINGER_BYTES", "LINGER_TIMEOUT", "Application", "HttpConnection"]

#: Seconds spent reading and discarding what a client still sends after we decided to
#: close (say, the rest of a refused 413 body): closing with unread input makes the
#: kernel send RST, which can destroy our answer before the client reads it.
LINGER_TIMEOUT: Final = 1.0
#: Bytes discarded that way at most.
LINGER_BYTES: Final = 256 * 1024

#: What serves each request (the router): writes the answer through the `Reply`.
Application = Callable[[HttpRequest, Reply, "HttpConnection"], Awaitable[None]]


class _Refusal:
    """A request that can't be served, found by the reader: answer ``status`` and close."""

    __slots__ = ("message", "status")

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message


#: The reader's word that nothing more will come (the client hung up, or idled out).
_CLOSED: Final = None
_Parsed = HttpRequest | _Refusal | None


class HttpConnection:
    """Serves HTTP/1.1 requests from one client until it hangs up (see the module docstring).

    Attributes:
        h11: The protocol state (only `Reply` and this class touch it).
        limits: The server's limits.
        modern: Slot for the 2026-07-28 handler's `mcpcore.Connection` of this client.
    """

    def __init__(
        self, stream: trio.SocketStream, application: Application, limits: HttpLimits
    ) -> None:
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_size)
        self.limits = limits
        self.modern: object | None = None
        self._stream = stream
        self._application = application
        self._closers: list[Callable[[], None]] = []
        self._lock = trio.Lock()
        self._scope: trio.CancelScope | None = None
        # Reader state.
        self._read_scope: trio.CancelScope | None = None
        self._busy = False  # the main task is answering a request
        self._pipelined = 0  # bytes read ahead while busy
        self._idle_again: trio.Event | None = None  # for a reader that read too far ahead
        self._head_started: float | None = None  # the current request's first byte
        self._body_started: float | None = None
        self._idle_since = trio.current_time()
        self._first = True
        self._body: list[bytes] = []
        self._body_size = 0
        self._head: h11.Request | None = None
        # Hand-off to the main task.
        self._parked: trio.lowlevel.Task | None = None
        self._ready: list[_Parsed] = []
        # Writes.
        self._writing_since: float | None = None
        self._last_write = self._idle_since
        self._reply: Reply | None = None

    # ------------------------------------------------------------ lifetime

    def on_close(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the connection ends (to forget per-client state)."""
        self._closers.append(callback)

    def close(self) -> None:
        """End the connection now, and everything in progress on it."""
        if self._scope is not None:
            self._scope.cancel()

    async def serve(self) -> None:
        """Serve requests until the client hangs up or times out; then close the socket."""
        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                nursery.start_soon(self._read_loop)
                await self._serve_requests()
                nursery.cancel_scope.cancel()
        finally:
            for callback in self._closers:
                callback()
            self._closers.clear()
            with trio.CancelScope(shield=True):
                await self._linger_and_close()

    async def _linger_and_close(self) -> None:
        stream = self._stream
        with trio.move_on_after(LINGER_TIMEOUT):
            try:
                await stream.send_eof()
                discarded = 0
                while discarded < LINGER_BYTES:
                    data = await stream.receive_some(READ_SIZE)
                    if not data:
                        break
                    discarded += len(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        await stream.aclose()

    # ------------------------------------------------------------ the main task

    async def _serve_requests(self) -> None:
        h = self.h11
        while True:
            parsed = self._ready.pop() if self._ready else await self._wait_for_request()
            if parsed is _CLOSED:
                return
            if isinstance(parsed, _Refusal):
                await self._refuse(parsed)
                return
            reply = Reply(self)
            self._reply = reply
            self._set_read_deadline()
            try:
                await self._application(parsed, reply, self)
            finally:
                self._reply = None
            if not reply.finished:
                await self._finish_unanswered(reply)
            if h.our_state is not h11.DONE or h.their_state is not h11.DONE:
                return  # closing (Connection: close, HTTP/1.0, or an error)
            h.start_next_cycle()
            self._busy = False
            self._pipelined = 0
            self._idle_since = trio.current_time()
            if self._idle_again is not None:
                self._idle_again.set()
                self._idle_again = None
            # A pipelined request may be whole in h11's buffer already.
            parsed = self._advance()
            if parsed is not _CLOSED:
                self._hand_over(parsed)
            elif self._head is None and h.trailing_data[0]:
                self._head_started = self._idle_since  # part of the next head is here
            if h.they_are_waiting_for_100_continue:
                await self._send_continue()
            self._set_read_deadline()

    async def _wait_for_request(self) -> _Parsed:
        self._parked = trio.lowlevel.current_task()

        def abort(_: object) -> trio.lowlevel.Abort:
            self._parked = None
            return trio.lowlevel.Abort.SUCCEEDED

        parsed: _Parsed = await trio.lowlevel.wait_task_rescheduled(abort)
        return parsed

    def _hand_over(self, parsed: _Parsed) -> None:
        """Give the main task its next request (or the news that none will come)."""
        if isinstance(parsed, HttpRequest):
            self._busy = True
            self._last_write = trio.current_time()  # (the keep-alive clock starts now)
        task, self._parked = self._parked, None
        if task is not None:
            trio.lowlevel.reschedule(task, outcome.Value(parsed))
        else:
            self._ready.append(parsed)

    async def _finish_unanswered(self, reply: Reply) -> None:
        """The application returned without completing its answer: complete it."""
        try:
            if reply.streaming:
                await reply.end_stream()
            elif not reply.started:
                await reply.refuse(500, "Internal error", close=True)
        except h11.LocalProtocolError:
            self.close()

    async def _refuse(self, refusal: _Refusal) -> None:
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        with contextlib.suppress(
            h11.LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError
        ):
            await Reply(self).refuse(refusal.status, refusal.message, close=True)

    # ------------------------------------------------------------ writing

    async def lock(self) -> None:
        """Take the write lock (without a trip through the scheduler when it is free)."""
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            await self._lock.acquire()

    def lock_nowait(self) -> bool:
        """Take the write lock if it is free."""
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            return False
        return True

    def unlock(self) -> None:
        """Release the write lock."""
        self._lock.release()

    async def send_all(self, data: bytes) -> None:
        """Write bytes (under the write lock). A stuck write is watched by the reader."""
        self._writing_since = trio.current_time()
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.close()
            raise
        finally:
            self._last_write = self._writing_since
            self._writing_since = None

    # ------------------------------------------------------------ the reader

    async def _read_loop(self) -> None:
        stream = self._stream
        h = self.h11
        while True:
            with trio.CancelScope(deadline=self._read_deadline()) as scope:
                self._read_scope = scope
                while True:
                    if self._busy and self._pipelined > MAX_PIPELINED_BYTES:
                        self._idle_again = trio.Event()
                        await self._idle_again.wait()
                    try:
                        data = await stream.receive_some(READ_SIZE)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        data = b""
                    if not data:
                        self._hung_up()
                        return
                    h.receive_data(data)
                    if self._busy:
                        self._pipelined += len(data)
                        continue
                    if self._head_started is None and self._head is None:
                        self._head_started = trio.current_time()
                    parsed = self._advance()
                    if self.h11.they_are_waiting_for_100_continue and parsed is _CLOSED:
                        await self._send_continue()
                    if parsed is not _CLOSED:
                        self._hand_over(parsed)
                        if not isinstance(parsed, HttpRequest):
                            return
                    scope.deadline = self._read_deadline()
            self._read_scope = None
            if not await self._deadline_passed():
                return

    def _hung_up(self) -> None:
        if self._busy:
            self.close()  # "closing the response stream IS the cancellation" (2026-07-28)
        else:
            self._hand_over(_CLOSED)

    async def _send_continue(self) -> None:
        await self.lock()
        try:
            data = self.h11.send(
                h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
            )
            await self.send_all(data)
        finally:
            self.unlock()

    def _read_deadline(self) -> float:
        limits = self.limits
        if self._busy:
            return self._last_write + limits.sse_keepalive_interval
        if self._body_started is not None:
            return self._body_started + limits.body_timeout
        if self._head_started is not None:
            return self._head_started + limits.header_timeout
        if self._first:  # a new connection must send its first request promptly
            return self._idle_since + limits.header_timeout
        return self._idle_since + limits.keepalive_timeout

    def _set_read_deadline(self) -> None:
        scope = self._read_scope
        if scope is not None:
            scope.deadline = self._read_deadline()

    async def _deadline_passed(self) -> bool:
        """Act on the reader's deadline; False when the reader is done."""
        if self._busy:
            now = trio.current_time()
            writing_since = self._writing_since
            if writing_since is not None and now - writing_since > self.limits.write_timeout:
                self.close()  # a client that reads nothing for this long is gone
                return False
            reply = self._reply
            if reply is not None and now - self._last_write >= self.limits.sse_keepalive_interval:
                try:
                    await reply.keepalive()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return False
                self._last_write = trio.current_time()
            return True
        if self._head_started is not None or self._body_started is not None:
            self._hand_over(_Refusal(408, "Request timed out"))
        else:
            self._hand_over(_CLOSED)
        return False

    def _advance(self) -> _Parsed:
        """Read h11's buffer up to the next whole request; _CLOSED while incomplete.

        Refusals: 431 (head too large or too many fields), 413 (body too large), 400
        (anything h11 can't parse).
        """
        h = self.h11
        limits = self.limits
        try:
            while True:
                event = h.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return _CLOSED
                if isinstance(event, h11.Request):
                    if len(event.headers) > limits.max_header_count:
                        return _Refusal(431, "Too many header fields")
                    # (h11 bounds a head that arrives in pieces; one that came whole
                    # in a single read is measured here.)
                    if _head_size(event) > limits.max_header_size:
                        return _Refusal(431, "Request header fields too large")
                    declared = _content_length(event)
                    if declared is not None and declared > limits.max_body_size:
                        return _Refusal(413, "Request body too large")
                    self._head = event
                    self._body_started = trio.current_time()
                    self._head_started = None
                elif isinstance(event, h11.Data):
                    self._body_size += len(event.data)
                    if self._body_size > limits.max_body_size:
                        return _Refusal(413, "Request body too large")
                    self._body.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    return self._complete_request()
                elif isinstance(event, h11.ConnectionClosed):
                    return _CLOSED
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            reason = "Request header fields too large" if status == 431 else "Bad request"
            return _Refusal(status, reason)

    def _complete_request(self) -> HttpRequest:
        head = self._head
        assert head is not None
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._head = None
        self._body = []
        self._body_size = 0
        self._body_started = None
        self._first = False
        return HttpRequest(
            head.method.decode("ascii"), head.target, list(head.headers), body, head.http_version
        )


def _head_size(request: h11.Request) -> int:
    """About the bytes of a request's head: its target and fields with their separators."""
    return len(request.target) + sum(len(name) + len(value) + 4 for name, value in request.headers)


def _content_length(request: h11.Request) -> int | None:
    for name, value in request.headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
