"""`RedisClient`: many tasks' commands over one pipelined connection.

Redis answers the commands of a connection in the order it received them, so one
connection serves any number of concurrent callers: each queues its command's bytes and
a waiter, in one step, so the two queues stay in the same order; one reader task reads
replies as they come and hands each to the oldest waiter. Callers share round trips
instead of connections, and nothing is pooled. Writes are serialised and coalesced: a
caller that finds no write under way writes everything queued in one ``send``, and what
was queued meanwhile, a few times (`WRITES_PER_CALL`) before it hands the rest to a task
of the client. Under load one write carries many callers' commands: on a loopback Redis
200 concurrent callers cost about a fifth as much per command as one caller at a time.

The rules that keep replies matched to callers:

* a command is written whole or not at all: the write is shielded from the writing
  caller's cancellation (and bounded by the command timeout, since it then can't be
  cancelled), and a queued command is written even if its own caller is cancelled;
* a caller cancelled while its reply is on the way leaves its waiter queued: the reader
  takes that reply and drops it;
* a command Redis would answer with nothing, or that changes what a connection answers
  (``SUBSCRIBE``, ``MONITOR``, ``SELECT``...), is refused before it is sent
  (`REFUSED_COMMANDS`).

When the connection fails (lost, or a reply later than ``command_timeout``: a hung server
is treated as a gone one), every waiting caller gets `RedisUnavailableError` and the next
call connects again: one attempt per call, shared by the callers queued behind it, so a
server that is down costs each caller one bounded wait and nothing runs in a loop.

Runs under trio and asyncio: the locks, semaphore, events, cancel scopes and the reader's
task group come from `transports._runtime.primitives`, the socket from anyio.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

from transports._redis.connection import (
    Arg,
    RespConnection,
    open_connection,
    pack_command,
    pack_commands,
)
from transports._redis.errors import RedisReplyError, RedisUnavailableError
from transports._redis.url import RedisAddress, parse_redis_url
from transports._runtime import primitives
from transports._runtime.groups import reraise_sole
from transports._runtime.primitives import AnyCancelScope, AnyEvent, AnyTaskGroup

__all__ = [
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "MAX_PENDING_COMMANDS",
    "REFUSED_COMMANDS",
    "WRITES_PER_CALL",
    "RedisClient",
    "open_redis",
    "resolve_address",
]

#: Seconds to connect and log in. A Redis on the same network answers in milliseconds;
#: past this, a caller had better hear "unavailable" than hang with its own caller.
CONNECT_TIMEOUT: Final = 5.0
#: Seconds a command may wait for its reply (and its write) before the server is taken
#: to be hung and the connection reset. Shared-state commands take well under a
#: millisecond; this leaves room for a slow one (a big ``XRANGE``) and a busy server.
COMMAND_TIMEOUT: Final = 10.0
#: Commands written and not yet answered before further callers wait. Keeps hundreds of
#: concurrent callers pipelined, while a server that stops answering holds at most this
#: many commands (and their callers) in memory rather than every caller that comes.
MAX_PENDING_COMMANDS: Final = 1024
#: Writes a caller makes for itself and the commands queued behind it before it hands
#: the writing to a task: enough that a burst goes out without a task switch, few enough
#: that a caller under sustained load is not kept writing for others indefinitely.
WRITES_PER_CALL: Final = 4

_PUBSUB = "puts the connection in pub/sub mode: use open_subscriber"
_STATE = "changes the shared connection's state, which a reconnect would not restore"
_TRANSACTION = "would let other callers' commands into the transaction: send it as a pipeline"
#: Commands `RedisClient` will not send, and why. The connection is shared and may be
#: replaced at any time, so connection state comes from the URL only; a transaction is
#: safe only when its commands go out in one write (`RedisClient.pipeline`).
REFUSED_COMMANDS: Final[Mapping[str, str]] = {
    "SUBSCRIBE": _PUBSUB,
    "PSUBSCRIBE": _PUBSUB,
    "SSUBSCRIBE": _PUBSUB,
    "MONITOR": "turns the connection into a feed of every command the server runs",
    "AUTH": _STATE + ": give the password in the URL",
    "SELECT": _STATE + ": give the database in the URL",
    "HELLO": _STATE,
    "RESET": _STATE,
    "QUIT": "closes the shared connection",
    "WATCH": _STATE + " (it would watch for every caller)",
    "UNWATCH": _STATE,
}
#: Commands refused by `RedisClient.execute` only (see `REFUSED_COMMANDS`).
_PIPELINE_ONLY: Final[Mapping[str, str]] = {
    "MULTI": _TRANSACTION,
    "EXEC": _TRANSACTION,
    "DISCARD": _TRANSACTION,
}


def _by_name(*tables: Mapping[str, str]) -> Mapping[str | bytes, str]:
    """The refusals of ``tables``, under each name as str and as bytes (as a caller gives it)."""
    found: dict[str | bytes, str] = {}
    for table in tables:
        for name, why in table.items():
            found[name] = found[name.encode()] = why
    return found


_REFUSED_ANYWHERE: Final = _by_name(REFUSED_COMMANDS)
_REFUSED_ALONE: Final = _by_name(REFUSED_COMMANDS, _PIPELINE_ONLY)


def resolve_address(url_or_address: str | RedisAddress) -> RedisAddress:
    """``url_or_address`` as a `RedisAddress` (a URL is parsed with `parse_redis_url`)."""
    if isinstance(url_or_address, RedisAddress):
        return url_or_address
    return parse_redis_url(url_or_address)


def _check(command: Sequence[Arg], refused: Mapping[str | bytes, str]) -> None:
    """Raise ValueError if ``command`` is empty or one of ``refused``."""
    if not command:
        raise ValueError("a Redis command needs at least its name")
    name = command[0]
    if isinstance(name, (str, bytes)):
        why = refused.get(name.upper())
        if why is not None:
            shown = name.decode("ascii", "replace") if isinstance(name, bytes) else name
            raise ValueError(f"RedisClient does not send {shown.upper()}: it {why}")


class _Waiter:
    """One call's place in the queue of replies: how many it expects, and what came."""

    __slots__ = ("error", "event", "expected", "replies", "tokens")

    def __init__(self, expected: int, tokens: int) -> None:
        self.expected = expected
        #: Places in `MAX_PENDING_COMMANDS` it holds until answered or failed.
        self.tokens = tokens
        self.replies: list[Any] = []
        self.error: RedisUnavailableError | None = None
        self.event: AnyEvent = primitives.Event()


class _Link:
    """One connection of a client: the socket, its queues, its reader's scope."""

    __slots__ = ("connection", "lost", "outgoing", "scope", "waiters", "writing")

    def __init__(self, connection: RespConnection) -> None:
        self.connection = connection
        #: Calls waiting for replies, in the order their commands were queued.
        self.waiters: deque[_Waiter] = deque()
        #: Commands' bytes queued and not yet written, in the same order.
        self.outgoing: list[bytes] = []
        #: Whether a caller is writing `outgoing` (it writes what others queue meanwhile).
        self.writing = False
        #: The reader task's scope: cancelling it closes the connection.
        self.scope: AnyCancelScope = primitives.CancelScope()
        self.lost = False


class RedisClient:
    """Commands to one Redis server over one pipelined connection (see `open_redis`).

    Any number of tasks may call `execute` and `pipeline` at once.
    """

    def __init__(
        self,
        address: RedisAddress,
        task_group: AnyTaskGroup,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        command_timeout: float = COMMAND_TIMEOUT,
        max_pending_commands: int = MAX_PENDING_COMMANDS,
    ) -> None:
        if max_pending_commands < 1:
            raise ValueError("max_pending_commands must be at least 1")
        self.address: Final = address
        self._task_group = task_group
        self._connect_timeout = connect_timeout
        self._command_timeout = command_timeout
        self._max_pending = max_pending_commands
        self._room = primitives.Semaphore(max_pending_commands)
        #: Held by a pipeline while it takes several places, so that two pipelines
        #: never each hold part of what they need (one command takes one, unlocked).
        self._admission_lock = primitives.Lock()
        #: Held while connecting: one attempt at a time.
        self._connect_lock = primitives.Lock()
        self._link: _Link | None = None
        #: Connection attempts begun, and the last one's failure if it failed: callers
        #: that queued behind a failed attempt share its answer instead of trying again.
        self._attempts = 0
        self._last_failure: str | None = None
        self._closed = False

    @property
    def available(self) -> bool:
        """Whether the client is connected, as far as it knows (the last call's outcome)."""
        return self._link is not None

    async def execute(self, *args: Arg) -> Any:
        """Send one command and return its reply.

        The reply is as hiredis gives it: bytes, int, None, or a list of those (a nested
        error reply, as in ``EXEC``'s list, is a `RedisReplyError` in the list).

        Raises:
            RedisReplyError: The server answered with an error; the connection is fine.
            RedisUnavailableError: No reply: see the module docstring.
            ValueError: The command is empty or one of `REFUSED_COMMANDS` (or a
                ``MULTI``, ``EXEC`` or ``DISCARD``: send a transaction with `pipeline`).
        """
        _check(args, _REFUSED_ALONE)
        (reply,) = await self._call(pack_command(args), 1)
        if isinstance(reply, RedisReplyError):
            raise reply
        return reply

    async def pipeline(self, commands: Sequence[Sequence[Arg]]) -> list[Any]:
        """Send ``commands`` in one write and return their replies, in order.

        An error reply is returned in its place as a `RedisReplyError`, not raised, so
        the other replies are not lost. ``MULTI`` ... ``EXEC`` inside one pipeline is a
        transaction no other caller's command can enter.

        Raises:
            RedisUnavailableError: No replies: see the module docstring.
            ValueError: A command is empty or one of `REFUSED_COMMANDS`.
        """
        for command in commands:
            _check(command, _REFUSED_ANYWHERE)
        if not commands:
            return []
        return await self._call(pack_commands(commands), len(commands))

    async def _call(self, payload: bytes, expected: int) -> list[Any]:
        """Write ``payload`` (``expected`` commands) and wait for their replies."""
        # (A pipeline longer than the bound takes all of it: its commands are in memory
        # already, and it must not wait for room it can never have.)
        waiter = _Waiter(expected, min(expected, self._max_pending))
        await self._admit(waiter.tokens)
        try:
            link = self._link or await self._connect()
        except BaseException:
            self._release(waiter.tokens)
            raise
        # (No await from here to the write: the two queues take the call in one step.)
        link.waiters.append(waiter)
        link.outgoing.append(payload)
        if not link.writing:
            await self._write(link, WRITES_PER_CALL)
        await self._wait(link, waiter)
        if waiter.error is not None:
            raise waiter.error
        return waiter.replies

    async def _admit(self, tokens: int) -> None:
        """Take ``tokens`` places among the pending commands, waiting for room."""
        if tokens == 1:
            try:
                self._room.acquire_nowait()
            except primitives.WOULD_BLOCK:
                await self._room.acquire()
            return
        taken = 0
        try:
            async with self._admission_lock:
                while taken < tokens:
                    await self._room.acquire()
                    taken += 1
        except BaseException:
            self._release(taken)
            raise

    def _release(self, tokens: int) -> None:
        """Give back ``tokens`` places among the pending commands."""
        for _ in range(tokens):
            self._room.release()

    async def _connect(self) -> _Link:
        """The connection: one attempt, unless one made while this caller waited failed."""
        attempts_seen = self._attempts
        async with self._connect_lock:
            if self._link is not None:  # (another caller connected)
                return self._link
            if self._closed:
                raise RedisUnavailableError(f"the client of {self.address.where} is closed")
            if self._attempts != attempts_seen and self._last_failure is not None:
                raise RedisUnavailableError(self._last_failure)
            return await self._attempt()

    async def _attempt(self) -> _Link:
        """Connect, and start the connection's reader."""
        self._attempts += 1
        self._last_failure = None  # (stays None if this attempt is cancelled)
        try:
            connection = await open_connection(self.address, timeout=self._connect_timeout)
        except RedisUnavailableError as error:
            self._last_failure = str(error)
            raise
        if self._closed:  # (while it connected: the reader's task group is gone)
            await connection.aclose()
            raise RedisUnavailableError(f"the client of {self.address.where} was closed")
        link = _Link(connection)
        self._link = link
        self._task_group.start_soon(self._read_replies, link)
        return link

    async def _write(self, link: _Link, writes: int) -> None:
        """Write what ``link`` has queued, and what is queued meanwhile, until none is left.

        After ``writes`` writes (-1: no limit) a task of the client's writes the rest.
        Each write is whole whatever happens to the caller (see `RespConnection.send`);
        one that fails gives the link up.
        """
        link.writing = True
        handed_over = False
        try:
            while link.outgoing and not link.lost:
                if writes == 0:
                    self._task_group.start_soon(self._write, link, -1)
                    handed_over = True
                    return
                writes -= 1
                data = b"".join(link.outgoing)
                link.outgoing.clear()
                await link.connection.send(data, timeout=self._command_timeout)
        except RedisUnavailableError as error:
            self._lose(link, str(error))
        finally:
            if not handed_over:
                link.writing = False

    async def _wait(self, link: _Link, waiter: _Waiter) -> None:
        """Wait for ``waiter``'s replies, resetting the connection if they are late."""
        deadline = primitives.current_time() + self._command_timeout
        with primitives.CancelScope(deadline=deadline) as scope:
            await waiter.event.wait()
        if scope.cancelled_caught and not waiter.event.is_set():
            where = self.address.where
            self._lose(link, f"no reply from {where} within {self._command_timeout} s")

    async def _read_replies(self, link: _Link) -> None:
        """The reader task: hand each reply to the oldest waiter, until the link fails."""
        try:
            with link.scope:
                while True:
                    self._deliver(link, await link.connection.receive())
        except RedisUnavailableError as error:
            self._lose(link, str(error))
        finally:
            await link.connection.aclose()

    def _deliver(self, link: _Link, reply: Any) -> None:
        """Give ``reply`` to the oldest waiter of ``link``."""
        if link.lost:  # (read before the link was given up: its waiters have their error)
            return
        if not link.waiters:
            self._lose(link, f"{self.address.where} sent a reply to no command")
            return
        waiter = link.waiters[0]
        waiter.replies.append(reply)
        if len(waiter.replies) == waiter.expected:
            link.waiters.popleft()
            self._release(waiter.tokens)
            waiter.event.set()

    def _lose(self, link: _Link, reason: str) -> None:
        """Give ``link`` up: close it, and fail its waiters with ``reason``."""
        if link.lost:
            return
        link.lost = True
        link.scope.cancel()
        link.outgoing.clear()
        if self._link is link:
            self._link = None
        while link.waiters:
            waiter = link.waiters.popleft()
            waiter.error = RedisUnavailableError(reason)
            self._release(waiter.tokens)
            waiter.event.set()

    def _close(self) -> None:
        """Fail every pending call, close the connection and stop the reader."""
        self._closed = True
        if self._link is not None:
            self._lose(self._link, f"the client of {self.address.where} was closed")
        self._task_group.cancel_scope.cancel()


@asynccontextmanager
async def open_redis(
    url_or_address: str | RedisAddress,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    command_timeout: float = COMMAND_TIMEOUT,
    max_pending_commands: int = MAX_PENDING_COMMANDS,
) -> AsyncIterator[RedisClient]:
    """Connect to Redis and yield a `RedisClient`; close it on exit.

        async with open_redis("redis://:secret@127.0.0.1:6379/2") as redis:
            await redis.execute("SET", "greeting", "hello")
            assert await redis.execute("GET", "greeting") == b"hello"

    The first connection is made before the client is yielded, so a wrong URL or
    password, or a server that is down, is heard of at once; a connection lost later is
    replaced by the next call. On exit calls still waiting get `RedisUnavailableError`.
    Runs under trio and asyncio.

    Args:
        url_or_address: A URL for `parse_redis_url`, or a `RedisAddress`.
        connect_timeout: See `CONNECT_TIMEOUT`.
        command_timeout: See `COMMAND_TIMEOUT` (``math.inf``: no limit).
        max_pending_commands: See `MAX_PENDING_COMMANDS`.

    Raises:
        RedisUnavailableError: The first connection failed.
        ValueError: ``url_or_address`` is not a Redis URL.
    """
    address = resolve_address(url_or_address)
    try:
        async with primitives.open_task_group() as task_group:
            client = RedisClient(
                address,
                task_group,
                connect_timeout=connect_timeout,
                command_timeout=command_timeout,
                max_pending_commands=max_pending_commands,
            )
            try:
                await client._connect()
                yield client
            finally:
                client._close()
    except BaseException as exc:
        reraise_sole(exc)
