"""One socket to Redis speaking RESP2: hiredis frames, anyio moves the bytes.

hiredis is the sans-IO half: ``pack_command`` makes a command's bytes and a `Reader`
turns received bytes into replies. This module is the thin IO half both the command
client and the subscriber stand on: connect (TCP, TLS or a Unix socket, through anyio,
which runs under trio and asyncio alike), log in as the URL says, then write bytes and
read one reply at a time. Every failure of the socket becomes `RedisUnavailableError`,
naming the server and never its password.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import anyio
import anyio.abc
import hiredis

from transports._redis.errors import RedisReplyError, RedisUnavailableError
from transports._redis.url import MASK, RedisAddress
from transports._runtime import primitives

__all__ = [
    "READ_SIZE",
    "Arg",
    "RespConnection",
    "open_connection",
    "pack_command",
    "pack_commands",
]

#: Bytes asked of the socket per read: one read takes a burst of pipelined replies,
#: and hiredis keeps whatever part of a reply has come so far.
READ_SIZE: Final = 64 * 1024

#: One argument of a command; hiredis writes numbers in decimal.
Arg: TypeAlias = "bytes | str | int | float"

#: What `hiredis.Reader.gets` returns while no whole reply has come (never a reply:
#: RESP3's ``False`` would be, hence no reliance on hiredis's default).
_INCOMPLETE: Final = object()


def _socket_failed() -> tuple[type[BaseException], ...]:
    """What a failed read or write of the socket raises, whichever library runs it.

    (Built when an exception is matched: `transports._runtime.primitives.GONE` holds
    trio's classes only once trio is imported.)
    """
    return (*primitives.GONE, anyio.EndOfStream, OSError)


def pack_command(command: Sequence[Arg]) -> bytes:
    """The wire bytes of one command (hiredis's, typed: its stub says a 1-tuple)."""
    packed: bytes = hiredis.pack_command(tuple(command))  # type: ignore[arg-type]
    return packed


def pack_commands(commands: Sequence[Sequence[Arg]]) -> bytes:
    """The wire bytes of ``commands``, one after another.

    Raises:
        ValueError: A command is empty (Redis answers an empty command with nothing,
            which would leave every later reply matched to the wrong caller).
    """
    packed = []
    for command in commands:
        if not command:
            raise ValueError("a Redis command needs at least its name")
        packed.append(pack_command(command))
    return b"".join(packed)


class RespConnection:
    """A connected, logged-in stream to Redis (see `open_connection`).

    `send` and `receive` may run in different tasks (one writer at a time, one reader);
    both raise `RedisUnavailableError` once the stream fails. Error replies are returned
    as `RedisReplyError` instances, not raised: the caller decides.
    """

    def __init__(self, stream: anyio.abc.ByteStream, address: RedisAddress) -> None:
        self.address: Final = address
        self._stream = stream
        self._reader = hiredis.Reader(replyError=RedisReplyError, notEnoughData=_INCOMPLETE)

    async def send(self, data: bytes, *, timeout: float) -> None:
        """Write all of ``data`` within ``timeout`` seconds, whatever happens to the caller.

        The write is shielded from the caller's cancellation: half a command on the wire
        would make the server read the next one as the rest of it. ``timeout`` bounds it
        instead (a server that reads nothing has failed).
        """
        deadline = primitives.current_time() + timeout
        with primitives.CancelScope(deadline=deadline, shield=True):
            try:
                await self._stream.send(data)
            except _socket_failed() as exc:
                raise self._lost(exc) from exc
            return
        raise RedisUnavailableError(f"writing to {self.address.where} took over {timeout} s")

    async def receive(self) -> Any:
        """The next reply: bytes, int, None, a list of those, or a `RedisReplyError`."""
        reader = self._reader
        while True:
            try:
                reply = reader.gets()
            except hiredis.ProtocolError as exc:
                raise RedisUnavailableError(
                    f"unreadable reply from {self.address.where}: {exc}"
                ) from exc
            if reply is not _INCOMPLETE:
                return reply
            try:
                reader.feed(await self._stream.receive(READ_SIZE))
            except _socket_failed() as exc:
                raise self._lost(exc) from exc

    async def aclose(self) -> None:
        """Close the stream at once (no TLS goodbye: there is nobody left to wait for)."""
        await anyio.aclose_forcefully(self._stream)

    def _lost(self, exc: BaseException) -> RedisUnavailableError:
        """The error for a stream that failed with ``exc``."""
        if isinstance(exc, anyio.EndOfStream):
            reason = "closed by the server"
        else:
            reason = str(exc) or type(exc).__name__
        return RedisUnavailableError(f"connection to {self.address.where} lost: {reason}")


async def open_connection(address: RedisAddress, *, timeout: float) -> RespConnection:
    """Connect to ``address`` and log in (``AUTH``, ``SELECT``) within ``timeout`` seconds.

    Raises:
        RedisUnavailableError: The server can't be reached, refused the login, or took
            longer than ``timeout``; the message names the server, never the password.
    """
    with primitives.CancelScope(deadline=primitives.current_time() + timeout):
        stream = await _connect_stream(address)
        connection = RespConnection(stream, address)
        try:
            await _log_in(connection, timeout)
        except BaseException:
            await connection.aclose()
            raise
        return connection
    raise RedisUnavailableError(f"cannot connect to {address.where}: no answer in {timeout} s")


async def _connect_stream(address: RedisAddress) -> anyio.abc.ByteStream:
    """The socket to ``address``, TLS wrapped when it says so."""
    try:
        if address.unix_path is not None:
            return await anyio.connect_unix(address.unix_path)
        if address.tls:
            # (Redis may close without TLS's close_notify: a read then ends the stream
            # instead of raising, as for HTTP.)
            return await anyio.connect_tcp(
                address.host, address.port, tls=True, tls_standard_compatible=False
            )
        return await anyio.connect_tcp(address.host, address.port)
    except OSError as exc:
        raise RedisUnavailableError(
            f"cannot connect to {address.where}: {exc.strerror or exc}"
        ) from exc


async def _log_in(connection: RespConnection, timeout: float) -> None:
    """Send the ``AUTH`` and ``SELECT`` the address asks for, in one write."""
    address = connection.address
    commands: list[tuple[str, list[Arg]]] = []
    if address.password is not None:
        user = [] if address.username is None else [address.username]
        commands.append(("AUTH", ["AUTH", *user, address.password]))
    if address.db:
        commands.append(("SELECT", ["SELECT", address.db]))
    if not commands:
        return
    await connection.send(pack_commands([args for _, args in commands]), timeout=timeout)
    for name, _ in commands:
        reply = await connection.receive()
        if isinstance(reply, RedisReplyError):
            message = str(reply)
            if address.password:
                message = message.replace(address.password, MASK)
            raise RedisUnavailableError(f"{address.where} refused {name}: {message}") from None
