"""`Subscriber`: Redis pub/sub on a connection of its own, kept subscribed across losses.

A subscribed connection answers nothing but pub/sub, so it can't be the shared
`RedisClient`'s. One task (the runner) owns the socket's reading: it hands each
``message`` to a bounded buffer the consumer iterates, matches ``subscribe`` and
``unsubscribe`` confirmations to the calls waiting for them (in order, as Redis sends
them: one per channel named), and replaces the connection when it is lost.

Pub/sub is fire and forget: what is published while the subscriber is not connected is
not delivered, ever. So a reconnection is made visible instead of hidden: after the new
connection has resubscribed every channel, `Subscriber.reconnects` grows and the
``on_reconnect`` callback runs, and the application rereads whatever state the messages
it may have missed were about. A consumer that falls `MAX_BUFFERED_MESSAGES` behind is
the same case (messages it will never see): the backlog is dropped with the connection
and the subscriber reconnects, rather than buffering without bound.

Reconnecting backs off (`RESUBSCRIBE_BACKOFF`); an idle connection is checked with a
``PING`` (`HEALTH_CHECK_INTERVAL`), since a pub/sub connection may be silent for hours
and a half-open one would otherwise never be noticed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

from transports._redis.client import COMMAND_TIMEOUT, CONNECT_TIMEOUT, resolve_address
from transports._redis.connection import RespConnection, open_connection, pack_command
from transports._redis.errors import RedisReplyError, RedisUnavailableError
from transports._redis.url import RedisAddress
from transports._runtime import primitives
from transports._runtime.groups import reraise_sole
from transports._runtime.primitives import (
    AnyCancelScope,
    AnyEvent,
    AnyReceiveChannel,
    AnySendChannel,
    AnyTaskGroup,
)

__all__ = [
    "HEALTH_CHECK_INTERVAL",
    "MAX_BUFFERED_MESSAGES",
    "RESUBSCRIBE_BACKOFF",
    "ReconnectCallback",
    "Subscriber",
    "open_subscriber",
]

#: Messages received and not yet taken by the consumer. Absorbs a burst (a publisher
#: fanning out a thousand invalidations at once) while a consumer that has stopped
#: keeping up costs at most this many messages of memory.
MAX_BUFFERED_MESSAGES: Final = 1024
#: Seconds to wait before each reconnection attempt after a loss, the last repeated:
#: the first is immediate (a server restart or a failover is over in a moment), then
#: the waits grow so a server that is down is not hammered, capped so that one that
#: comes back is found within seconds.
RESUBSCRIBE_BACKOFF: Final = (0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
#: Seconds of silence after which the subscriber sends a ``PING`` (and gives the
#: connection up if nothing comes within the command timeout). TCP alone would notice
#: a server gone without closing the connection only after hours.
HEALTH_CHECK_INTERVAL: Final = 30.0

#: Called with no arguments after each reconnection, in the subscriber's task: it must
#: not block (set an event, or start a task, to resynchronise).
ReconnectCallback = Callable[[], object]

_PING: Final = pack_command(("PING",))
_LAST_BACKOFF: Final = len(RESUBSCRIBE_BACKOFF) - 1


def _channel_name(channel: bytes | str) -> bytes:
    """A channel's name as Redis sends it back: bytes (str is encoded as UTF-8)."""
    return channel.encode() if isinstance(channel, str) else channel


class _Confirmation:
    """One SUBSCRIBE or UNSUBSCRIBE sent: the confirmations still to come, in order."""

    __slots__ = ("error", "event", "kind", "remaining")

    def __init__(self, kind: bytes, channels: Iterable[bytes]) -> None:
        #: ``subscribe`` or ``unsubscribe``: the first word of each confirmation.
        self.kind = kind
        self.remaining = deque(channels)
        self.error: Exception | None = None
        self.event: AnyEvent = primitives.Event()


class _Link:
    """One connection of a subscriber, and the confirmations it owes."""

    __slots__ = ("connection", "expected", "lost", "resubscription", "scope")

    def __init__(self, connection: RespConnection) -> None:
        self.connection = connection
        self.expected: deque[_Confirmation] = deque()
        #: The SUBSCRIBE of every channel that a reconnection sends: when it is
        #: confirmed, the reconnection is announced.
        self.resubscription: _Confirmation | None = None
        #: The runner's scope while it serves this link: cancelling it closes the link.
        self.scope: AnyCancelScope = primitives.CancelScope()
        self.lost = False


class Subscriber:
    """Messages of the channels subscribed, as ``(channel, data)`` (see `open_subscriber`).

        async for channel, data in subscriber:
            ...

    One task iterates; any task may `subscribe` and `unsubscribe`.

    Attributes:
        reconnects: Reconnections so far (each one a possible gap in the messages,
            including a consumer too far behind: see the module docstring).
    """

    def __init__(
        self,
        address: RedisAddress,
        task_group: AnyTaskGroup,
        *,
        on_reconnect: ReconnectCallback | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        command_timeout: float = COMMAND_TIMEOUT,
        max_buffered_messages: int = MAX_BUFFERED_MESSAGES,
    ) -> None:
        self.address: Final = address
        self.reconnects = 0
        self._task_group = task_group
        self._on_reconnect = on_reconnect
        self._connect_timeout = connect_timeout
        self._command_timeout = command_timeout
        self._channels: set[bytes] = set()
        self._sender: AnySendChannel[tuple[bytes, bytes]]
        self._receiver: AnyReceiveChannel[tuple[bytes, bytes]]
        self._sender, self._receiver = primitives.open_channel(max_buffered_messages)
        self._write_lock = primitives.Lock()
        self._max_buffered = max_buffered_messages
        self._link: _Link | None = None
        self._closed = False

    @property
    def channels(self) -> frozenset[bytes]:
        """The channels subscribed (or to be subscribed again on reconnection)."""
        return frozenset(self._channels)

    @property
    def available(self) -> bool:
        """Whether the subscriber is connected, as far as it knows."""
        return self._link is not None

    async def subscribe(self, *channels: bytes | str) -> None:
        """Subscribe to ``channels``; return once Redis has confirmed every one.

        A message published after this returns is delivered (unless the connection is
        lost, which `reconnects` tells).

        Raises:
            RedisUnavailableError: Not connected, or the connection was lost before the
                confirmations came. The channels stay subscribed as far as the subscriber
                is concerned: its next connection subscribes them.
            RedisReplyError: Redis refused (an ACL rule, say).
        """
        names = [_channel_name(channel) for channel in channels]
        if names:
            self._channels.update(names)
            await self._command(b"subscribe", names)

    async def unsubscribe(self, *channels: bytes | str) -> None:
        """Unsubscribe from ``channels``: none of their messages is yielded after this.

        Raises:
            RedisUnavailableError: The connection was lost before the confirmations came
                (the channels are unsubscribed anyway: the next connection leaves them out).
            RedisReplyError: Redis refused.
        """
        names = [_channel_name(channel) for channel in channels]
        self._channels.difference_update(names)
        if names and self._link is not None:
            await self._command(b"unsubscribe", names)

    def __aiter__(self) -> Subscriber:
        return self

    async def __anext__(self) -> tuple[bytes, bytes]:
        """The next message of a channel still subscribed, waiting for one if none is here.

        Iteration ends when the subscriber is closed.
        """
        while True:
            try:
                channel, data = await self._receiver.receive()
            except primitives.END_OF_CHANNEL + primitives.CLOSED:
                raise StopAsyncIteration from None
            if channel in self._channels:  # (unsubscribed since it was buffered: dropped)
                return channel, data

    async def _command(self, kind: bytes, names: list[bytes]) -> None:
        """Send SUBSCRIBE or UNSUBSCRIBE of ``names`` and wait for their confirmations."""
        confirmation = _Confirmation(kind, names)
        async with self._write_lock:
            # (The link is looked at with the lock held: what is queued in `expected` is
            # then written in the same order.)
            link = self._link
            if link is None:
                state = "closed" if self._closed else "not connected"
                raise RedisUnavailableError(f"the subscriber to {self.address.where} is {state}")
            link.expected.append(confirmation)
            await self._send(link, pack_command((kind.upper(), *names)))
        deadline = primitives.current_time() + self._command_timeout
        with primitives.CancelScope(deadline=deadline) as scope:
            await confirmation.event.wait()
        if scope.cancelled_caught and not confirmation.event.is_set():
            where = self.address.where
            self._lose(link, f"{where} did not confirm within {self._command_timeout} s")
        if confirmation.error is not None:
            raise confirmation.error

    async def _send(self, link: _Link, payload: bytes) -> None:
        """Write ``payload`` on ``link`` whole (giving the link up if that fails)."""
        try:
            await link.connection.send(payload, timeout=self._command_timeout)
        except RedisUnavailableError as error:
            self._lose(link, str(error))

    async def _open_link(self) -> _Link:
        """Connect, and send the SUBSCRIBE of every channel (its confirmation not awaited)."""
        connection = await open_connection(self.address, timeout=self._connect_timeout)
        link = _Link(connection)
        async with self._write_lock:
            # (No await from here to the write: a channel `subscribe` adds meanwhile is
            # either in this SUBSCRIBE or sent by `subscribe` itself on this link.)
            self._link = link
            if self._channels:
                link.resubscription = _Confirmation(b"subscribe", sorted(self._channels))
                link.expected.append(link.resubscription)
                command = (b"SUBSCRIBE", *link.resubscription.remaining)
                await self._send(link, pack_command(command))
        return link

    async def _run(self, link: _Link) -> None:
        """The runner task: serve ``link``, and a new link after each loss, until closed."""
        attempt = 0
        while True:
            started = primitives.current_time()
            await self._serve(link)
            if primitives.current_time() - started >= RESUBSCRIBE_BACKOFF[-1]:
                attempt = 0  # (it had been up a while: a new outage starts from the top)
            while True:
                await primitives.sleep(RESUBSCRIBE_BACKOFF[min(attempt, _LAST_BACKOFF)])
                attempt += 1
                try:
                    link = await self._open_link()
                except RedisUnavailableError:
                    continue
                break
            if link.resubscription is None:
                self._reconnected()

    async def _serve(self, link: _Link) -> None:
        """Read ``link`` until it is lost, then close it."""
        try:
            with link.scope:
                while True:
                    self._handle(link, await self._receive(link))
        except RedisUnavailableError as error:
            self._lose(link, str(error))
        finally:
            await link.connection.aclose()

    async def _receive(self, link: _Link) -> Any:
        """The next reply on ``link``, sending a PING after `HEALTH_CHECK_INTERVAL` of silence.

        Raises:
            RedisUnavailableError: The link failed, or the PING had no answer in time.
        """
        with primitives.CancelScope(deadline=primitives.current_time() + HEALTH_CHECK_INTERVAL):
            return await link.connection.receive()
        async with self._write_lock:  # (a `subscribe` may be writing)
            await self._send(link, _PING)
        with primitives.CancelScope(deadline=primitives.current_time() + self._command_timeout):
            return await link.connection.receive()
        raise RedisUnavailableError(
            f"no answer to PING from {self.address.where} within {self._command_timeout} s"
        )

    def _handle(self, link: _Link, reply: Any) -> None:
        """Act on one reply read from ``link``."""
        if link.lost:
            return
        if isinstance(reply, RedisReplyError):
            self._refused(link, reply)
        elif isinstance(reply, list) and len(reply) == 3:
            kind, channel, data = reply
            if kind == b"message":
                self._buffer(link, channel, data)
            elif kind in (b"subscribe", b"unsubscribe"):
                self._confirm(link, kind, channel)
        # (Anything else is a PONG, in either of its two forms: proof of life, nothing more.)

    def _buffer(self, link: _Link, channel: bytes, data: bytes) -> None:
        """Queue a message for the consumer; past the bound, drop the backlog and the link."""
        try:
            self._sender.send_nowait((channel, data))
        except primitives.WOULD_BLOCK:
            while True:
                try:
                    self._receiver.receive_nowait()
                except primitives.WOULD_BLOCK:
                    break
            self._lose(link, f"the consumer fell {self._max_buffered} messages behind")

    def _confirm(self, link: _Link, kind: bytes, channel: bytes) -> None:
        """Match a confirmation to the oldest SUBSCRIBE or UNSUBSCRIBE sent."""
        pending = link.expected[0] if link.expected else None
        if pending is None or pending.kind != kind or pending.remaining[0] != channel:
            where = self.address.where
            self._lose(link, f"{where} confirmed a {kind.decode()} nobody sent")
            return
        pending.remaining.popleft()
        if not pending.remaining:
            link.expected.popleft()
            pending.event.set()
            if pending is link.resubscription:
                self._reconnected()

    def _refused(self, link: _Link, error: RedisReplyError) -> None:
        """Fail the oldest SUBSCRIBE or UNSUBSCRIBE sent with ``error``: Redis refused it."""
        if not link.expected:
            self._lose(link, f"{self.address.where} answered an error to nothing: {error}")
            return
        pending = link.expected.popleft()
        pending.error = error
        pending.event.set()
        if pending is link.resubscription:  # (no gap can be closed: try again later)
            self._lose(link, f"{self.address.where} refused to resubscribe: {error}")

    def _reconnected(self) -> None:
        """Announce a reconnection: count it and call the callback."""
        self.reconnects += 1
        if self._on_reconnect is not None:
            self._on_reconnect()

    def _lose(self, link: _Link, reason: str) -> None:
        """Give ``link`` up: close it, and fail the calls waiting for confirmations."""
        if link.lost:
            return
        link.lost = True
        link.scope.cancel()
        if self._link is link:
            self._link = None
        while link.expected:
            pending = link.expected.popleft()
            pending.error = RedisUnavailableError(reason)
            pending.event.set()

    def _close(self) -> None:
        """Stop: close the connection, end iteration, stop the runner."""
        self._closed = True
        if self._link is not None:
            self._lose(self._link, f"the subscriber to {self.address.where} was closed")
        self._sender.close()  # (a waiting consumer's iteration ends...)
        self._receiver.close()  # (...and the backlog goes: nobody is left to read it)
        self._task_group.cancel_scope.cancel()


@asynccontextmanager
async def open_subscriber(
    url_or_address: str | RedisAddress,
    channels: Iterable[bytes | str] = (),
    *,
    on_reconnect: ReconnectCallback | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    command_timeout: float = COMMAND_TIMEOUT,
    max_buffered_messages: int = MAX_BUFFERED_MESSAGES,
) -> AsyncIterator[Subscriber]:
    """Connect a `Subscriber` to Redis, subscribed to ``channels``; close it on exit.

        async with open_subscriber("redis://127.0.0.1", ["invalidate"]) as subscriber:
            async for channel, data in subscriber:
                ...

    The connection is made, and ``channels`` confirmed, before the subscriber is
    yielded: a wrong URL or password, or a server that is down, is heard of at once.
    Later losses are repaired in the background (see the module docstring).

    Args:
        url_or_address: A URL for `parse_redis_url`, or a `RedisAddress`.
        channels: Channels to subscribe to at once.
        on_reconnect: See `ReconnectCallback`.
        connect_timeout: See `CONNECT_TIMEOUT`.
        command_timeout: Seconds for Redis to confirm a subscription, or answer a PING.
        max_buffered_messages: See `MAX_BUFFERED_MESSAGES`.

    Raises:
        RedisUnavailableError: The first connection or subscription failed.
        ValueError: ``url_or_address`` is not a Redis URL.
    """
    address = resolve_address(url_or_address)
    try:
        async with primitives.open_task_group() as task_group:
            subscriber = Subscriber(
                address,
                task_group,
                on_reconnect=on_reconnect,
                connect_timeout=connect_timeout,
                command_timeout=command_timeout,
                max_buffered_messages=max_buffered_messages,
            )
            try:
                task_group.start_soon(subscriber._run, await subscriber._open_link())
                await subscriber.subscribe(*channels)
                yield subscriber
            finally:
                subscriber._close()
    except BaseException as exc:
        reraise_sole(exc)
