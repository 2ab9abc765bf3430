"""Forwarding a request to the worker that owns its session, and relaying the answer.

The forwarding side (`Relayer`) turns a checked request into a `Forwarded` message on
the owner's channel and writes what comes back, piece by piece, to its own client: a
`Whole` response, or the `Piece` s of an event stream (a head, then encoded events).
The owning side (`Answering`) serves the request through its router exactly as if its
own client had sent it, with a `RelayWriter` in place of a connection: what the
`Reply` decides to write is published, not framed.

What a connection does for a request, each side does for its half:

* the owner answers with the ASGI app's machinery (`transports._asgi`): one watcher for
  all forwarded requests rings each request's nudge, sends keep-alive comments on a
  quiet stream, and cancels the request when the forwarding worker says its client hung
  up (a `Hangup`: "closing the response stream IS the cancellation" in 2026-07-28, a
  detached stream for the legacy eras, as on a direct connection);
* the forwarding worker queues at most `RELAY_BACKLOG` pieces for a slow client, then
  cuts its response, as a local stream's sink does (the events wait in the store; the
  client resumes); it checks every `LIVENESS_INTERVAL` of silence that the owner still
  listens, and ends the response when it does not (the session died with it: 404 for a
  response not started).

A request is answered by one worker, whichever worker its client reached.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

import anyio

from transports._asgi.connections import ConnectionPool
from transports._asgi.watching import Watcher
from transports._asgi.writer import AsgiWriter
from transports._deploy.messages import Forwarded, Hangup, Message, Piece, Whole
from transports._http.server.sharing import Dispatcher
from transports._net.reply import Header, Reply, ResponseWriter
from transports._net.request import HttpRequest
from transports._runtime import primitives
from transports._runtime.primitives import AnyReceiveChannel, AnySendChannel, AnyTaskGroup

__all__ = [
    "LIVENESS_INTERVAL",
    "MAX_FORWARDED_REQUESTS",
    "RELAY_BACKLOG",
    "RELAY_CHUNK_SIZE",
    "WORKER_NAME",
    "WORKER_NAME_BYTES",
    "Answering",
    "RelayWriter",
    "Relayer",
]

#: Pieces of one relayed answer queued for a slow client before its response is cut
#: (the local stream's bound: `transports._http.server.streams.Sink`).
RELAY_BACKLOG: Final = 256
#: Seconds of silence from an owner after which the forwarding worker checks that it
#: still listens (a long tool call is silent; a dead worker is silent forever).
LIVENESS_INTERVAL: Final = 10.0
#: Random bytes of a worker's name (hex in session ids and channel names): unique among
#: the workers of a deployment, including those restarted.
WORKER_NAME_BYTES: Final = 8
#: A worker's name, as session ids carry it (anything else names no worker: 404).
WORKER_NAME: Final = re.compile(f"[0-9a-f]{{{2 * WORKER_NAME_BYTES}}}")
#: Bytes of a response's body in one message at most (larger bodies go in parts):
#: Redis cuts a subscriber whose output buffer passes 8 MB for a minute or 32 MB at once
#: (``client-output-buffer-limit pubsub``), so no single message may come near that.
RELAY_CHUNK_SIZE: Final = 256 * 1024
#: Forwarded requests one worker answers at once; past it they get 503, so that other
#: workers can't make this one hold unbounded work.
MAX_FORWARDED_REQUESTS: Final = 4096

#: Sends a message to a worker (by name); how many listened (0: it is gone). Raises
#: `ConnectionError` when Redis can't be reached.
Publish = Callable[[str, Message], Awaitable[int]]
#: Whether a worker (by name) still listens on its channel.
Alive = Callable[[str], Awaitable[bool]]

_DISCONNECT: Final = {"type": "http.disconnect"}
_UNREACHABLE: Final = "Service Unavailable: the shared session store is unreachable"


async def _never_sent(message: MutableMapping[str, Any]) -> None:
    raise AssertionError("a RelayWriter publishes its pieces")  # pragma: no cover


class RelayWriter(AsgiWriter):
    """The `ResponseWriter` of a forwarded request: each write is published.

    It is the ASGI writer (write lock, timestamps the watcher reads, closers) with its
    two writes replaced: what would become ASGI messages becomes one `Whole` or one
    `Piece`, sent to the forwarding worker.
    """

    __slots__ = ("_publish_piece", "_ticket")

    def __init__(
        self,
        publish: Callable[[Message], Awaitable[int]],
        ticket: int,
        connections: ConnectionPool,
    ) -> None:
        super().__init__(_never_sent, primitives.current_time, connections)
        self._publish_piece = publish
        self._ticket = ticket

    async def write_response(
        self, status: int, headers: Sequence[Header], body: bytes, *, close: bool
    ) -> None:
        """Publish a whole response (its body in parts when large)."""
        fields = list(headers)
        parts = _parts(body)
        for index, part in enumerate(parts, 1):
            more = index < len(parts)
            await self._emit(Whole(self._ticket, status, fields, part, close, more))

    async def write_stream(self, head: Sequence[Header] | None, data: bytes, *, end: bool) -> None:
        """Publish a piece of an event stream (with its head, the first; large ones in parts)."""
        fields = None if head is None else list(head)
        parts = _parts(data)
        for index, part in enumerate(parts, 1):
            last = index == len(parts)
            await self._emit(Piece(self._ticket, fields, part, end and last))
            fields = None

    async def _emit(self, message: Message) -> None:
        self.writing_since = primitives.current_time()
        try:
            listening = await self._publish_piece(message)
        except ConnectionError as exc:
            raise anyio.BrokenResourceError("the shared store is unreachable") from exc
        finally:
            self.last_write = self.writing_since
            self.writing_since = None
        if not listening:
            raise anyio.BrokenResourceError("the forwarding worker is gone")


class Answering:
    """The owning side: answers the requests other workers forward to this one.

    Args:
        publish: Sends a message to a worker.
        group: Where the forwarded requests and their watcher run.
        watcher: The forwarded requests' watcher (running in ``group``).
        connections: The writers' `mcpcore.Connection` pool (unused by legacy requests,
            which are the only ones forwarded; the writer needs one).
    """

    def __init__(
        self,
        publish: Publish,
        group: AnyTaskGroup,
        watcher: Watcher,
        connections: ConnectionPool,
    ) -> None:
        self._publish = publish
        self._group = group
        self._watcher = watcher
        self._connections = connections
        self._running: dict[tuple[str, int], primitives.AnyEvent] = {}
        self.dispatcher: Dispatcher | None = None

    def take(self, forwarded: Forwarded) -> None:
        """Start answering a forwarded request (refused when too many run)."""
        dispatcher = self.dispatcher
        if dispatcher is None or len(self._running) >= MAX_FORWARDED_REQUESTS:
            self._group.start_soon(self._refuse, forwarded)
            return
        hangup = primitives.Event()
        self._running[forwarded.reply_to, forwarded.ticket] = hangup
        self._group.start_soon(self._answer, dispatcher, forwarded, hangup)

    def hang_up(self, hangup: Hangup) -> None:
        """The forwarding worker's client left: stop as its own connection would."""
        event = self._running.get((hangup.reply_to, hangup.ticket))
        if event is not None:
            event.set()

    def hang_up_all(self) -> None:
        """Pieces may have been lost (the subscription was cut): end every answer."""
        for event in self._running.values():
            event.set()

    async def _answer(
        self, dispatcher: Dispatcher, forwarded: Forwarded, hangup: primitives.AnyEvent
    ) -> None:
        reply_to = forwarded.reply_to

        async def publish(message: Message) -> int:
            return await self._publish(reply_to, message)

        async def receive() -> MutableMapping[str, Any]:
            await hangup.wait()
            return _DISCONNECT

        now = primitives.current_time()
        writer = RelayWriter(publish, forwarded.ticket, self._connections)
        reply = Reply(writer)
        request = HttpRequest(
            forwarded.method,
            forwarded.target,
            forwarded.fields,
            forwarded.body,
            forwarded.http_version,
            root=forwarded.root,
        )
        clean = False
        try:
            with primitives.Interruptible() as cancel:
                watch = self._watcher.start(writer, reply, receive, cancel, now, arrived=True)
                try:
                    await dispatcher.dispatch(request, reply, writer, forwarded.principal)
                    await _finish_unanswered(reply)
                    clean = not cancel.cancel_called
                except primitives.GONE:
                    pass  # the forwarding worker (or its client) is gone
                finally:
                    watch.end()
                    writer.close(clean=clean)
        finally:
            del self._running[reply_to, forwarded.ticket]

    async def _refuse(self, forwarded: Forwarded) -> None:
        writer = RelayWriter(
            lambda message: self._publish(forwarded.reply_to, message),
            forwarded.ticket,
            self._connections,
        )
        with contextlib.suppress(*primitives.GONE):
            await Reply(writer).refuse(503, "Service Unavailable: the session's worker is busy")


def _parts(data: bytes) -> list[bytes]:
    """``data`` in parts of `RELAY_CHUNK_SIZE` bytes at most (one, possibly empty, if small)."""
    if len(data) <= RELAY_CHUNK_SIZE:
        return [data]
    return [
        data[start : start + RELAY_CHUNK_SIZE] for start in range(0, len(data), RELAY_CHUNK_SIZE)
    ]


async def _finish_unanswered(reply: Reply) -> None:
    """The router returned without completing its answer: complete it."""
    if reply.streaming:
        await reply.end_stream()
    elif not reply.started:
        await reply.refuse(500, "Internal error")


class Relayer:
    """The forwarding side: sends requests to their owners, relays their answers.

    Args:
        worker: This worker's name (where answers come back).
        publish: Sends a message to a worker.
        alive: Whether a worker still listens.
    """

    def __init__(self, worker: str, publish: Publish, alive: Alive) -> None:
        self._worker = worker
        self._publish = publish
        self._alive = alive
        self._tickets = itertools.count()
        self._waiting: dict[int, AnySendChannel[Whole | Piece]] = {}

    def deliver(self, piece: Whole | Piece) -> None:
        """A piece of an answer arrived: queue it for its request (if it still waits)."""
        send = self._waiting.get(piece.ticket)
        if send is None:
            return  # its client left; the owner heard (or will hear) of it
        try:
            send.send_nowait(piece)
        except primitives.WOULD_BLOCK:
            # The client reads too slowly: cut its response, as a local stream would.
            del self._waiting[piece.ticket]
            send.close()

    def cut_all(self) -> None:
        """Pieces may have been lost (the subscription was cut): end every relay."""
        waiting, self._waiting = self._waiting, {}
        for send in waiting.values():
            send.close()

    async def forward(
        self,
        owner: str,
        request: HttpRequest,
        reply: Reply,
        http: ResponseWriter,
        principal: str | None,
    ) -> None:
        """Have ``owner`` answer ``request``, writing its answer to ``reply``."""
        if WORKER_NAME.fullmatch(owner) is None:
            await reply.refuse(404, "Not Found: no such session")  # (no worker's id)
            return
        ticket = next(self._tickets)
        channel: tuple[AnySendChannel[Whole | Piece], AnyReceiveChannel[Whole | Piece]]
        channel = primitives.open_channel(RELAY_BACKLOG)
        send, receive = channel
        self._waiting[ticket] = send
        finished = False
        forwarded = _forwarded(self._worker, ticket, request, principal)
        try:
            try:
                listening = await self._publish(owner, forwarded)
            except ConnectionError:
                finished = True
                await reply.refuse(503, _UNREACHABLE)
                return
            if not listening:
                finished = True  # the owner is gone, and its sessions with it
                await reply.refuse(404, "Not Found: no such session")
                return
            finished = await self._relay(owner, receive, reply)
        finally:
            self._waiting.pop(ticket, None)
            send.close()
            receive.close()
            if not finished:
                with primitives.CancelScope(shield=True), contextlib.suppress(ConnectionError):
                    await self._publish(owner, Hangup(self._worker, ticket))

    async def _relay(
        self, owner: str, receive: AnyReceiveChannel[Whole | Piece], reply: Reply
    ) -> bool:
        """Write the owner's answer as it comes; whether it came whole."""
        body: list[bytes] = []  # (the parts of a whole response's body so far)
        while True:
            deadline = primitives.current_time() + LIVENESS_INTERVAL
            with primitives.CancelScope(deadline=deadline) as waiting:
                try:
                    piece = await receive.receive()
                except primitives.END_OF_CHANNEL:
                    await _cut(reply, 503, "Service Unavailable: the answer was cut")
                    return False
            if waiting.cancelled_caught:
                if await self._alive(owner):
                    continue
                await _cut(reply, 404, "Not Found: no such session")
                return True  # (nobody to hang up on)
            if isinstance(piece, Whole):
                body.append(piece.body)
                if piece.more:
                    continue
                whole = b"".join(body)
                await reply.respond(piece.status, piece.headers, whole, close=piece.close)
                return True
            await reply.relay_stream(piece.head, piece.data, end=piece.end)
            if piece.end:
                return True


def _forwarded(worker: str, ticket: int, request: HttpRequest, principal: str | None) -> Forwarded:
    target = request.path if not request.query else f"{request.path}?{request.query}"
    return Forwarded(
        worker,
        ticket,
        request.method,
        target.encode("latin-1"),
        [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        request.body,
        request.http_version,
        request.root,
        principal,
    )


async def _cut(reply: Reply, status: int, message: str) -> None:
    """End a relayed answer that will not come whole (the client may resume a stream)."""
    if reply.streaming:
        await reply.end_stream()
    elif not reply.started:
        await reply.refuse(status, message)
