"""One TCP connection: HTTP/1.1, one request at a time, in order.

One `transports._net.http1.ServerConnection` serves the TCP connection from its first
byte to its last: it parses every request and frames every byte of every response (a
whole one, an event stream's head and chunks, a refusal, a ``100 Continue``), and after
each exchange ``start_next_cycle`` readies it for the next request, which may be
pipelined in its buffer already. Whether there is a next one is its rule too: not after
a request with ``Connection: close`` or HTTP/1.0, nor after a response that says so (we
close), nor after a protocol error.

The connection's **main task** reads a request (head and whole body, within the limits:
431 for an oversized or overfull head, 413 for a body past the limit, or for one that
would take the process past its budget for partial messages, `transports._net.partial`),
answers it through the application, and reads the next one. A fast request costs no
other task any work.

A second task, the **watcher**, sleeps on an alarm whose deadline the main task moves:

* while the main task waits for a request, the alarm is the connection's timeout: the
  rest of a head or a body is due within `HttpLimits.header_timeout` or
  `HttpLimits.body_timeout` (against clients that send slowly or not at all; 408 and
  close), the next request of an idle keep-alive connection within
  `HttpLimits.keepalive_timeout` (then the connection closes);
* while it answers, the alarm rings first after `NUDGE_DELAY`, to call the answer's
  `HttpConnection.nudge` if it set one (a legacy answer stream gathering its first
  events waits that long, `transports._http.server.streams.pump`: a deadline the main
  task moves anyway costs nothing more, where a cancel scope of its own would cost
  about as much as the rest of the stream's work), then after `WATCH_DELAY`: a
  request still running then is a long one, and the watcher takes over the receiving
  side until the answer is complete. It sees the client hang up at once (2026-07-28:
  "closing the response stream IS the cancellation", so everything on the connection
  is cancelled), reads pipelined requests ahead into the parser's buffer up to
  `MAX_PIPELINED_BYTES` in all (never a byte more), sends keep-alive comments on quiet
  event streams, and closes a connection whose client has read nothing for
  `HttpLimits.write_timeout`.

Moving a deadline is cheaper than a trip through the scheduler, which is what a reader
task handing each request over would cost. HTTP/1.1 answers requests in order, so one
at a time is not a limit: a client wanting concurrency opens more connections.

Every byte goes through the trio stream (``receive_some``, one ``send_all`` per write
under the write lock). A request found already buffered (pipelined) is served after a
checkpoint, so that a client pipelining a flood can't starve the other connections.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import trio

from transports._net import http1
from transports._net.limits import (
    MAX_PIPELINED_BYTES,
    NUDGE_DELAY,
    READ_SIZE,
    WATCH_DELAY,
    HttpLimits,
)
from transports._net.partial import (
    PARTIAL_BUDGET,
    PARTIAL_RETRY_AFTER,
    MessageBuffer,
    PartialBudget,
)
from transports._net.reply import Header, Reply
from transports._net.request import HttpRequest
from transports._runtime.busypoll import BusyPolling, socket_fd

__all__ = [
    "LINGER_BYTES",
    "LINGER_TIMEOUT",
    "NUDGE_DELAY",
    "WATCH_DELAY",
    "Application",
    "HttpConnection",
]

#: Seconds spent reading and discarding what a client still sends after we decided to
#: close (say, the rest of a refused 413 body): closing with unread input makes the
#: kernel send RST, which can destroy our answer before the client reads it.
LINGER_TIMEOUT: Final = 1.0
#: Bytes discarded that way at most.
LINGER_BYTES: Final = 256 * 1024

#: What serves each request (the router): writes the answer through the `Reply`.
Application = Callable[[HttpRequest, Reply, "HttpConnection"], Awaitable[None]]


class _Refusal:
    """A request that can't be served: answer ``status`` (with ``headers``) and close."""

    __slots__ = ("headers", "message", "status")

    def __init__(self, status: int, message: str, headers: Sequence[Header] = ()) -> None:
        self.status = status
        self.message = message
        self.headers = headers


#: A body the process can't hold now (`transports._net.partial`): "if the condition is
#: temporary, the server SHOULD generate a Retry-After" (RFC 9110 §15.5.14).
_BUSY: Final = _Refusal(
    413,
    "Request body too large for now: too many large requests at once, retry later",
    [(b"retry-after", str(PARTIAL_RETRY_AFTER).encode())],
)


class _Incomplete:
    """`HttpConnection._advance`: more bytes are needed for a whole request."""


# How much of the request being read is in (`HttpConnection._partial`).
_NOTHING: Final = 0
_HEAD: Final = 1
_BODY: Final = 2
#: Nothing more will come (the client hung up).
_CLOSED: Final = None
_INCOMPLETE: Final = _Incomplete()
#: What a refusal of a request `http1` can't parse says, by status.
_REFUSALS: Final = {
    431: "Request header fields too large",
    501: "Not implemented: the only transfer-coding is chunked",
    505: "HTTP version not supported",
}
_Parsed = HttpRequest | _Refusal | _Incomplete | None


class HttpConnection:
    """Serves HTTP/1.1 requests from one client until it hangs up (see the module docstring).

    Attributes:
        http: The HTTP/1.1 state of the whole TCP connection, one cycle per request
            (only this class touches it; `Reply` writes through `write_response`
            and `write_stream`).
        cycles: How many times `http` has started a new request/response cycle
            (``start_next_cycle``): requests answered with the connection kept for
            another.
        limits: The server's limits.
        modern: Slot for the 2026-07-28 handler's `mcpcore.Connection` of this client.
        nudge: Called `NUDGE_DELAY` after the request being answered began, if it is
            still running then (set by the answer; cleared when the request ends).

    Args:
        stream: The client's connection (a `trio.SocketStream` from a listener, or any
            half-closeable trio stream).
        application: What answers each request.
        limits: The server's limits.
        busy_poll: See `transports.RECOMMENDED_BUSY_POLL` (0: off).
        budget: Where a body's bytes beyond `transports._net.partial.PARTIAL_FLOOR` are
            reserved while it arrives (the process's, by default).
    """

    def __init__(
        self,
        stream: trio.abc.HalfCloseableStream,
        application: Application,
        limits: HttpLimits,
        *,
        busy_poll: float = 0.0,
        budget: PartialBudget = PARTIAL_BUDGET,
    ) -> None:
        self.limits = limits
        self.http = http1.ServerConnection(max_head_size=limits.max_header_size)
        self.cycles = 0
        self.modern: object | None = None
        self.nudge: Callable[[], None] | None = None
        self._stream = stream
        self._busy_poll = busy_poll
        self._application = application
        self._closers: list[Callable[[], None]] = []
        self._lock = trio.Lock()
        self._scope: trio.CancelScope | None = None
        # The request being read.
        self._head: http1.Request | None = None
        self._body = MessageBuffer(budget)
        self._partial = _NOTHING  # how much of a request is in (its deadline is armed)
        self._leftover = False  # pipelined bytes of the next request are in `http`'s buffer
        self._read_bytes = 0
        # The request being answered.
        self._busy = False
        self._started = 0.0  # when the request being answered began
        self._reply: Reply | None = None
        self._writing_since: float | None = None
        self._last_write = 0.0
        # The watcher.
        now = trio.current_time()
        self._alarm: trio.CancelScope | None = None
        self._alarm_at = now + limits.header_timeout  # (a new client must speak promptly)
        self._watch: trio.CancelScope | None = None  # set while it reads for the main task
        self._watch_done: trio.Event | None = None
        self._last_tick = now
        self._taken_over = False  # another protocol has the socket (see take_over)

    # ------------------------------------------------------------ lifetime

    def on_close(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the connection ends (to forget per-client state)."""
        self._closers.append(callback)

    def close(self) -> None:
        """End the connection now, and everything in progress on it."""
        if self._scope is not None:
            self._scope.cancel()

    async def take_over(self) -> tuple[trio.abc.HalfCloseableStream, bytes]:
        """Hand the socket to another protocol (a WebSocket, after its upgrade).

        From now on HTTP is done with this connection: the watcher stops reading (and
        gives back what it read), no HTTP timeout applies, and the request being
        answered needs no HTTP answer. The socket is still closed when the application
        returns. Returns the socket and the bytes already read past the request.
        """
        self._taken_over = True
        self._busy = False
        self._set_alarm(math.inf)
        await self._take_back_reading()
        return self._stream, self.http.trailing_data

    async def serve(self) -> None:
        """Serve requests until the client hangs up or times out; then close the socket."""
        polling = BusyPolling(socket_fd(self._stream), self._busy_poll)
        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                nursery.start_soon(self._watch_loop)
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self._serve_requests()  # (those: the client left mid-answer)
                nursery.cancel_scope.cancel()
        finally:
            polling.close()
            self._body.clear()  # (a body cut short: its share of the budget goes back)
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
        limits = self.limits
        while True:
            if self._leftover:
                await trio.lowlevel.checkpoint()  # (fairness: see the module docstring)
            parsed = await self._next_request()
            if parsed is _CLOSED:
                return
            if isinstance(parsed, _Refusal):
                await self._refuse(parsed)
                return
            assert isinstance(parsed, HttpRequest)
            now = trio.current_time()
            self._busy = True
            self._last_write = self._started = now
            self._set_alarm(now + NUDGE_DELAY)
            reply = self._reply = Reply(self)
            try:
                await self._application(parsed, reply, self)
            finally:
                self._reply = None
                self.nudge = None
            if self._taken_over:
                return  # (the socket spoke another protocol: nothing more of HTTP)
            if not reply.finished:
                await self._finish_unanswered(reply)
            self._busy = False
            # Only noted: the alarm still rings at the watch deadline, and the watcher
            # then sets it to this (a connection that goes on with requests moves it at
            # the next one; one move per request instead of two).
            self._alarm_at = trio.current_time() + limits.keepalive_timeout
            if self._watch is not None:
                await self._take_back_reading()
            if not self._next_cycle():
                return  # closing (Connection: close, HTTP/1.0, or an error)

    def _next_cycle(self) -> bool:
        """The answer is complete: whether the connection carries another request.

        Both are complete, and neither a request nor our response said ``Connection:
        close`` (nor was the request HTTP/1.0), nor did the client break the protocol.
        """
        h = self.http
        if not (h.request_complete and h.response_complete and h.keep_alive):
            return False
        h.start_next_cycle()
        self.cycles += 1
        self._leftover = h.trailing_size > 0
        return True

    async def _next_request(self) -> _Parsed:
        """Read until a whole request is in (or the client hangs up)."""
        h = self.http
        stream = self._stream
        started = self._leftover  # (bytes of this request came with the last one)
        # Bytes read for this request (pipelined ones count as a whole read).
        self._read_bytes = READ_SIZE if started else 0
        while True:
            parsed = self._advance()
            if parsed is not _INCOMPLETE:
                return parsed
            # Part of a request is in: arm its deadline, the head's then the body's.
            stage = _BODY if self._head is not None else _HEAD if started else _NOTHING
            if stage > self._partial:
                self._partial = stage
                timeout = self.limits.body_timeout if stage == _BODY else self.limits.header_timeout
                self._set_alarm(trio.current_time() + timeout)
            if h.they_are_waiting_for_100_continue:
                await self._send_continue()
            try:
                data = await stream.receive_some(READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                return _CLOSED
            h.receive_data(data)
            self._read_bytes += len(data)
            started = True

    async def _finish_unanswered(self, reply: Reply) -> None:
        """The application returned without completing its answer: complete it."""
        try:
            if reply.streaming:
                await reply.end_stream()
            elif not reply.started:
                await reply.refuse(500, "Internal error", close=True)
        except http1.LocalProtocolError:
            self.close()

    async def _refuse(self, refusal: _Refusal) -> None:
        if self.http.response_started:
            return
        with contextlib.suppress(
            http1.LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError
        ):
            await Reply(self).refuse(
                refusal.status, refusal.message, headers=refusal.headers, close=True
            )

    async def _send_continue(self) -> None:
        await self.lock()
        try:
            await self.send_all(self.http.send_continue())
        finally:
            self.unlock()

    # ------------------------------------------------------------ writing

    def frame_data(self, data: bytes, *, end: bool = False) -> bytes:
        """A piece of the body being sent (a chunk; nothing for b""), and with ``end`` its end.

        Raises:
            http1.LocalProtocolError: No body is being sent.
        """
        h = self.http
        chunk = h.send_data(data) if data else b""
        return chunk + h.send_end() if end else chunk

    async def write_response(
        self, status: int, headers: Sequence[Header], body: bytes, *, close: bool
    ) -> None:
        """`ResponseWriter.write_response`: status, headers and body in one write.

        ``Content-Length`` is declared; ``close`` adds ``Connection: close`` (added
        anyway when the request asked for it, or was HTTP/1.0). A response to ``HEAD``
        carries the headers of its body, not the body (RFC 9110 §9.3.2).

        Raises:
            http1.LocalProtocolError: A header is malformed, or the response can't be
                sent now.
        """
        await self.send_all(self.http.send_response(status, headers, body, close=close))

    async def write_stream(self, head: Sequence[Header] | None, data: bytes, *, end: bool) -> None:
        """`ResponseWriter.write_stream`: the head (if any) and the chunk in one write."""
        if head is None:
            await self.send_all(self.frame_data(data, end=end))
        else:
            out = self.http.send_stream_head(200, head)  # (framed first: http1's order)
            await self.send_all(out + self.frame_data(data, end=end))

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
        """Write bytes (under the write lock). A stuck write is seen by the watcher."""
        self._writing_since = trio.current_time()
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.close()
            raise
        finally:
            self._last_write = self._writing_since
            self._writing_since = None

    # ------------------------------------------------------------ the watcher

    def _set_alarm(self, deadline: float) -> None:
        """Have the watcher wake at ``deadline``.

        Only an earlier deadline moves the alarm's cancel scope; a later one is noted,
        and an alarm that rings before it is set again (`_watch_loop`): a connection
        answering requests back to back moves the alarm once per ring, not once per
        request.
        """
        self._alarm_at = deadline
        alarm = self._alarm
        if alarm is not None and deadline < alarm.deadline:
            alarm.deadline = deadline

    async def _watch_loop(self) -> None:
        while True:
            with trio.CancelScope(deadline=self._alarm_at) as alarm:
                self._alarm = alarm
                await trio.sleep_forever()
            self._alarm = None
            if trio.current_time() < self._alarm_at:
                continue  # the main task moved the alarm while it was ringing
            if self._busy:
                nudge, self.nudge = self.nudge, None
                if nudge is not None:
                    nudge()
                watch_at = self._started + WATCH_DELAY
                if trio.current_time() < watch_at:
                    self._alarm_at = watch_at  # (the first ring: not a long request yet)
                    continue
                await self._watch_request()
            elif self._partial:
                # A head or body not complete in time: "408 Request Timeout".
                await self._refuse(_Refusal(408, "Request timed out"))
                self.close()
                return
            else:
                self.close()  # an idle keep-alive connection times out
                return

    async def _watch_request(self) -> None:
        """Read for the main task while it answers a long request (see the docstring)."""
        h = self.http
        stream = self._stream
        interval = self.limits.sse_keepalive_interval
        self._watch_done = trio.Event()
        # What `http` holds past the request counts: the main task read it ahead already.
        pipelined = h.trailing_size
        try:
            self._last_tick = trio.current_time()
            while self._busy:
                quiet_since = max(self._last_write, self._last_tick)
                with trio.CancelScope(deadline=quiet_since + interval) as watch:
                    self._watch = watch
                    room = MAX_PIPELINED_BYTES - pipelined
                    if room <= 0:
                        await trio.sleep_forever()  # read no further ahead
                    try:
                        data = await stream.receive_some(min(room, READ_SIZE))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        data = b""
                    if not data:
                        # "Closing the response stream IS the cancellation" (2026-07-28).
                        self.close()
                        return
                    h.receive_data(data)
                    pipelined += len(data)
                if watch.cancelled_caught and self._busy and not await self._tick():
                    return
        finally:
            self._watch = None
            self._watch_done.set()

    async def _take_back_reading(self) -> None:
        """The answer is complete: stop the watcher reading, and wait until it has."""
        watch, done = self._watch, self._watch_done
        if watch is not None and done is not None:
            watch.cancel()
            await done.wait()

    async def _tick(self) -> bool:
        """A quiet long request: keep its stream alive, or give up on a dead client."""
        now = self._last_tick = trio.current_time()
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

    def _advance(self) -> _Parsed:
        """Parse the buffer up to the next whole request; _INCOMPLETE when it is not.

        Refusals: 431 (head too large or too many fields), 413 (body too large, or
        more than the process can hold now), 400 (anything that is not HTTP/1.1), 501
        (a transfer-coding other than chunked), 505 (an HTTP version other than 1.x).
        """
        h = self.http
        try:
            while True:
                event = h.next_event()
                if event is http1.NEED_DATA or event is http1.PAUSED:
                    return _INCOMPLETE
                if event is http1.END:
                    return self._complete_request()
                if isinstance(event, http1.Data):
                    refused = self._take_data(event.data)
                elif isinstance(event, http1.Request):
                    refused = self._take_head(event)
                else:
                    refused = None
                if refused is not None:
                    return refused
        except http1.RemoteProtocolError as exc:
            status = exc.error_status_hint
            reason = _REFUSALS.get(status, "Bad request")
            return _Refusal(status, reason)

    def _take_head(self, event: http1.Request) -> _Parsed | None:
        """Keep a request's head, or the refusal it earns (None: read on)."""
        limits = self.limits
        fields = event.headers
        if len(fields) > limits.max_header_count:
            return _Refusal(431, "Too many header fields")
        # (`http1` bounds a head that arrives in pieces; one that came whole in a single
        # read is measured here, if the read was that large.)
        if self._read_bytes > limits.max_header_size and (
            _head_size(event.target, fields) > limits.max_header_size
        ):
            return _Refusal(431, "Request header fields too large")
        declared = self.http.content_length
        if declared is not None:
            if declared > limits.max_body_size:
                return _Refusal(413, "Request body too large")
            if not self._body.expect(declared):
                return _BUSY  # (before the client sends it)
        self._head = event
        return None

    def _take_data(self, data: bytes) -> _Parsed | None:
        """Keep a piece of the body, or the refusal it earns (None: read on)."""
        if self._body.size + len(data) > self.limits.max_body_size:
            return _Refusal(413, "Request body too large")
        if not self._body.add(data):
            return _BUSY  # (a chunked body, reserved as it comes)
        return None

    def _complete_request(self) -> HttpRequest:
        head = self._head
        assert head is not None
        body = self._body.take()
        self._head = None
        self._partial = _NOTHING
        return HttpRequest(
            head.method.decode("ascii"), head.target, head.headers, body, head.http_version
        )


def _head_size(target: bytes, fields: list[tuple[bytes, bytes]]) -> int:
    """About the bytes of a request's head: its target and fields with their separators."""
    return len(target) + sum(len(name) + len(value) + 4 for name, value in fields)
