"""One open WebSocket: whole text messages in, frames out, pings, and the closing handshake.

`WebSocketChannel` sits between a byte stream (after the opening handshake) and the
runtime that both ends share with stdio: the server's `transports._runtime.serving.ServerDriver`
and the client's `transports._client.stream.StreamDriver` read its `messages` and write
through one `transports._runtime.writer.MessageWriter`, framing each message with `frame`.

What comes in goes through wsproto's frame parser (a Connection in the OPEN state):

* a text message is one JSON-RPC message; its fragments are put together, as long as
  the whole stays within ``max_message_size`` (1009 "message too big" past it) and,
  on a server, within the process's budget for partial messages (1009 as well,
  `transports._net.partial`), in a `transports._net.partial.MessageBuffer`;
* a binary message closes the connection with 1003 "unsupported data": JSON-RPC
  messages are UTF-8 text (the TypeScript and Python SDKs send text frames only);
* invalid UTF-8, a bad frame, a reserved bit: wsproto's verdict (1007, 1002), sent back
  as our Close frame;
* a ping is answered with a pong; any byte from the peer counts as a sign of life;
* the peer's Close frame is answered with the same code (RFC 6455 §5.5.1), and the
  messages end.

Once we have sent our Close frame, nothing more may be sent (RFC 6455 §5.5.1: "the
endpoint MUST NOT send any more data frames"): `frame` refuses with `ConnectionError`,
which the runtime treats as a peer that is gone, and what still arrives is read only to
see the peer's Close.

`keep_alive` pings a quiet peer and returns when it has stopped answering, so that the
connection can be torn down (RFC 6455 §5.5.2: a ping "may serve either as a keepalive
or as a means to verify that the remote endpoint is still responsive"). A reader that is
not reading because the handlers are all busy (the runtime's backpressure) is not taken
for a dead peer: the pong is then waiting, unread, in the socket.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Final

import trio
from wsproto.connection import Connection, ConnectionState
from wsproto.events import (
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    Pong,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError

from transports._net.partial import MessageBuffer, PartialBudget
from transports._net.socketio import direct_writer
from transports._runtime.writer import MessageWriter
from transports._websocket.frames import ClientFrames, server_text_frame
from transports._websocket.limits import READ_SIZE, WebSocketLimits

__all__ = ["BUSY_REASON", "CLOSE_REASON_SIZE", "WebSocketChannel", "describe_close"]

#: Bytes of a close reason we keep from the peer (a control frame's payload is at most
#: 125 bytes, RFC 6455 §5.5; 123 of them are the reason).
CLOSE_REASON_SIZE: Final = 123
#: The reason of the 1009 closing a message the process has no budget for now.
BUSY_REASON: Final = "message too big for now: too many large messages at once"
#: What the close codes we send or commonly receive mean, for error messages.
_CODE_NAMES: Final[dict[int, str]] = {
    CloseReason.NORMAL_CLOSURE: "normal closure",
    CloseReason.GOING_AWAY: "going away",
    CloseReason.PROTOCOL_ERROR: "protocol error",
    CloseReason.UNSUPPORTED_DATA: "unsupported data",
    CloseReason.NO_STATUS_RCVD: "no status",
    CloseReason.ABNORMAL_CLOSURE: "abnormal closure",
    CloseReason.INVALID_FRAME_PAYLOAD_DATA: "invalid payload",
    CloseReason.POLICY_VIOLATION: "policy violation",
    CloseReason.MESSAGE_TOO_BIG: "message too big",
    CloseReason.INTERNAL_ERROR: "internal error",
}


def describe_close(code: int, reason: str) -> str:
    """A close code and reason in words: ``1009 (message too big): over 16 MiB``."""
    name = _CODE_NAMES.get(code)
    text = f"{int(code)} ({name})" if name else str(int(code))
    return f"{text}: {reason}" if reason else text


class WebSocketChannel:
    """A WebSocket in the OPEN state over ``stream`` (see the module docstring).

    Args:
        stream: The connection, its opening handshake done.
        protocol: wsproto's frame protocol for it (``ConnectionState.OPEN``).
        limits: The message size, ping interval, pong and write timeouts.
        budget: Where a message's bytes beyond `transports._net.partial.PARTIAL_FLOOR` are
            reserved while it is put together (a server's: the process's; None for a
            client).

    Attributes:
        peer_close: The code and reason of the peer's Close frame, once one came.
        our_close: The code and reason of the Close frame we sent first, if we did
            (not the echo of the peer's).
        lost: Why the connection ended without a Close frame from the peer, if it did.
        dead: The peer stopped answering pings (see `keep_alive`).
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        protocol: Connection,
        limits: WebSocketLimits,
        *,
        budget: PartialBudget | None = None,
    ) -> None:
        self._stream = stream
        self._protocol = protocol
        #: Where every frame we send goes; its `MessageWriter.run` must run in a task.
        #: A frame is written by its sender at once when the socket is idle (see
        #: `transports._net.socketio` for what that buys), unless the last read brought
        #: several messages: then their answers wait for the writer task, which joins
        #: them into one write (one system call, and one wake-up of the peer, instead
        #: of one per answer: the CPU a loaded server needs for other work).
        self._write_at_once = direct_writer(stream)
        self.writer = self._writer = MessageWriter(
            stream,
            write_now=None if self._write_at_once is None else self._write_unless_burst,
            write_timeout=limits.write_timeout,
        )
        self._max_size = limits.max_message_size
        self._ping_interval = limits.ping_interval
        self._pong_timeout = limits.pong_timeout
        self._text_frame = ClientFrames() if protocol.client else server_text_frame
        self._events: Iterator[Event] = protocol.events()  # (what came with the handshake)
        self._message = MessageBuffer(budget)  # a message being put together
        self._refusal = ""  # why the message being put together was refused, if it was
        self._closing = False  # our Close frame is out (or we gave up): no more frames
        self._ended = False  # nothing more will be read
        self._done = trio.Event()  # set when _ended is
        self._reading = False  # waiting for the socket (not held back by backpressure)
        self._delivered = 0  # messages delivered from the last chunk read
        self._burst = False  # the last chunk held several: their answers are joined
        self._last_read = trio.current_time()
        self._ponged = trio.Event()  # set by the pong answering our last ping
        self.peer_close: tuple[int, str] | None = None
        self.our_close: tuple[int, str] | None = None
        self.lost: str | None = None
        self.dead = False

    # ------------------------------------------------------------------ state

    @property
    def closing(self) -> bool:
        """Whether our Close frame is out (nothing more can be sent)."""
        return self._closing

    @property
    def ended(self) -> bool:
        """Whether the receiving side is over (the peer's Close, or the connection lost)."""
        return self._ended

    def describe_end(self, peer: str = "the peer") -> str:
        """How the connection ended, in words (for errors and reports)."""
        if self.our_close is not None:
            return "we closed the WebSocket: " + describe_close(*self.our_close)
        if self.peer_close is not None:
            return f"{peer} closed the WebSocket: " + describe_close(*self.peer_close)
        return self.lost or "the WebSocket is open"

    # ---------------------------------------------------------------- sending

    def frame(self, message: bytes) -> bytes:
        """One message as the text frame to write (the runtime's ``frame`` callback).

        Raises:
            ConnectionError: Our Close frame is out: nothing more may be sent.
        """
        if self._closing:
            raise ConnectionError("the WebSocket is closing")
        return self._text_frame(message)

    async def close(self, code: int = CloseReason.NORMAL_CLOSURE, reason: str = "") -> None:
        """Send our Close frame (once; later calls do nothing) and refuse further frames."""
        data = self.take_close_frame(code, reason)
        if data:
            with contextlib.suppress(ConnectionError):  # gone already: nothing to tell
                await self._writer.send(data)

    def take_close_frame(self, code: int, reason: str) -> bytes:
        """`close`, but the Close frame is returned for the caller to write itself.

        For when the writer's task is gone (the connection is being torn down). Empty
        when a Close frame went out already.
        """
        if self._closing:
            return b""
        self._closing = True
        return self._close_frame(code, reason)

    def _close_frame(self, code: int, reason: str) -> bytes:
        protocol = self._protocol
        if protocol.state not in (ConnectionState.OPEN, ConnectionState.REMOTE_CLOSING):
            return b""
        self.our_close = (code, reason)
        return protocol.send(CloseConnection(code=code, reason=reason))

    def _write_unless_burst(self, data: bytes) -> int:
        """Write what the socket takes now, or nothing during a burst (see ``writer``)."""
        if self._burst:
            return 0
        assert self._write_at_once is not None
        return self._write_at_once(data)

    async def _send_control(self, event: Event) -> None:
        """A ping, pong or Close answer, through the writer (in order with the rest)."""
        try:
            data = self._protocol.send(event)
        except LocalProtocolError:
            return  # the connection is closing: no more control frames
        with contextlib.suppress(ConnectionError):  # gone: the reader sees it too
            await self._writer.send(data)

    # ---------------------------------------------------------------- receiving

    async def messages(self) -> AsyncGenerator[bytes, None]:
        """Every text message, as UTF-8 bytes, until the connection ends or closes."""
        while (message := await self.receive()) is not None:
            yield message

    async def receive(self) -> bytes | None:
        """The next text message; None once the connection has ended or is closing."""
        while not self._closing and not self._ended:
            message = await self._step()
            if message is not None:
                return message
        return None

    async def drain(self) -> None:
        """Read (and drop messages) until the connection ends: after our Close, the peer's."""
        while not self._ended:
            await self._step()

    async def _step(self) -> bytes | None:
        """Handle the next event, reading first if none is waiting; a message it completed."""
        for event in self._events:
            if type(event) is not TextMessage:
                await self._control(event)
                return None
            if self._closing:
                return None  # (our Close is out: what still comes is only read past)
            message = self._text(event)
            if message is None:
                if self._refusal:
                    await self._fail(CloseReason.MESSAGE_TOO_BIG, self._refusal)
                return None
            self._delivered += 1
            if self._delivered > 1:
                self._burst = True
            return message
        await self._feed()
        return None

    async def _feed(self) -> None:
        """Read the next chunk into wsproto (its events are next); or note the end."""
        data = await self._read()
        if not data:
            self._end("the connection was lost")
            return
        protocol = self._protocol
        try:
            protocol.receive_data(data)
        except LocalProtocolError:  # (both Close frames are through: nothing to read)
            self._end("the connection was closed")
            return
        self._events = protocol.events()
        self._burst = self._delivered > 1
        self._delivered = 0

    def _text(self, event: TextMessage) -> bytes | None:
        """Add a text frame (or part of one); the whole message once it is complete.

        None otherwise, with `_refusal` set if the message must be refused (the caller
        closes; what was held is dropped).
        """
        data = event.data.encode()
        message = self._message
        if event.message_finished and not message.size:
            if len(data) > self._max_size:
                self._refusal = "message too big"
                return None
            return data  # (whole in one piece: at most one read, within the floor)
        if message.size + len(data) > self._max_size:
            self._refusal = "message too big"
            return None
        if not message.add(data):
            self._refusal = BUSY_REASON
            return None
        if not event.message_finished:
            return None
        return message.take()

    async def _control(self, event: Event) -> None:
        if isinstance(event, Ping):
            await self._send_control(event.response())
        elif isinstance(event, CloseConnection):
            state = self._protocol.state
            if state not in (ConnectionState.REMOTE_CLOSING, ConnectionState.CLOSED):
                # Not the peer's Close: wsproto refusing a frame (a bad opcode, invalid
                # UTF-8, a control frame too long...). Its code goes in our Close.
                await self._fail(event.code, event.reason or "invalid frame")
                return
            self.peer_close = (event.code, (event.reason or "")[:CLOSE_REASON_SIZE])
            if state is ConnectionState.REMOTE_CLOSING:
                # "It MUST send a Close frame in response", echoing the code (§5.5.1).
                self._closing = True
                await self._send_control(event.response())
            self._end()
        elif isinstance(event, BytesMessage):
            # JSON-RPC over WebSocket is text only (SEP-1288 draft: "a binary frame
            # → close code 1003").
            await self._fail(CloseReason.UNSUPPORTED_DATA, "binary frames are not accepted")
        elif isinstance(event, Pong):
            self._ponged.set()  # (every byte read counts as a sign of life; this wakes the pinger)

    async def _fail(self, code: int, reason: str) -> None:
        """The peer broke a rule: our Close frame with ``code``; the messages end."""
        self._message.clear()
        self._refusal = ""
        await self.close(code, reason)

    def release(self) -> None:
        """Drop a message being put together (the connection is over, or going)."""
        self._message.clear()

    def _end(self, lost: str | None = None) -> None:
        self._message.clear()  # (nothing more of it will come)
        if not self._ended:
            self._ended = True
            if self.peer_close is None:
                self.lost = lost
            self._done.set()

    async def _read(self) -> bytes:
        """The next chunk from the socket; b"" when it ended or broke."""
        self._reading = True
        try:
            # (bytes() of bytes is the object itself: a copy only for a bytearray)
            data = bytes(await self._stream.receive_some(READ_SIZE))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        finally:
            self._reading = False
        self._last_read = trio.current_time()
        return data

    async def wait_ended(self) -> None:
        """Wait until nothing more will be read (another task is reading)."""
        await self._done.wait()

    # ---------------------------------------------------------------- liveness

    async def keep_alive(self, on_dead: Callable[[], object]) -> None:
        """Ping the peer whenever it has been quiet for the ping interval.

        When a ping goes unanswered (and nothing else arrives) for the pong timeout,
        the peer is taken for dead (`dead`), the messages end, and ``on_dead`` is
        called to tear the connection down (whoever does may still write a Close frame
        with 1011, `take_close_frame`, bounded). Runs until cancelled.
        """
        interval, timeout = self._ping_interval, self._pong_timeout
        pings = 0
        while not self._ended:
            await trio.sleep_until(self._last_read + interval)
            if trio.current_time() < self._last_read + interval or self._closing:
                continue  # the peer spoke meanwhile (or we are closing: see close_timeout)
            pings += 1
            sent_at = trio.current_time()
            self._ponged = trio.Event()
            await self._send_control(Ping(payload=pings.to_bytes(4, "big")))
            deadline = sent_at + timeout
            while True:
                with trio.move_on_at(deadline):
                    await self._ponged.wait()
                if self._last_read >= sent_at or self._ended:
                    break  # alive (or gone by itself)
                if not self._reading:
                    deadline += timeout  # held back by backpressure: can't tell yet
                    continue
                self.dead = True
                self._end("the peer did not answer a ping in time")
                on_dead()
                return
        await trio.sleep_forever()
