"""Resumable event streams of a legacy Streamable HTTP session.

An `EventStream` is the logical stream: the answer stream of one POST, or the
session's standalone GET stream. Its events are numbered by the `EventStore` (ids
unique across the server, so across the session's streams as the spec asks) and go to
the HTTP response attached to it at the moment, its `Sink`, if any. The response may
go away (the client's connection broke, the sink's client fell too far behind, or the
handler closed it on purpose, 2025-11-25 SSE polling); the stream goes on, and a
``GET`` with ``Last-Event-ID`` attaches a new response, which first gets the events
it missed from the store. A disconnect is not a cancellation ("a disconnect SHOULD
NOT be interpreted as cancellation", 2025-03-26 … 2025-11-25).

A POST stream ends once every request of the POST is answered ("(S) SHOULD close the
stream after the response"); the answers of a 2025-03-26 batch go out together, as
one batch. The standalone stream lasts as long as its session.

With ``replies="json"`` a POST's stream starts *undecided*: nothing is stored, and an
answer that comes before anything else goes to the response unstored, to be sent as a
JSON body (there is nothing to resume). The first other message (a notification, a
request to the client) commits it: primed then, if the session primes, and stored
from then on, as any stream.
"""

from __future__ import annotations

from collections import deque
from typing import Final

from mcpcore.framing import encode_event
from mcpcore.types import RequestId
from transports._http.server.event_store import EventStore
from transports._net.reply import Header, Reply
from transports._runtime import primitives

__all__ = ["MAX_COALESCED_EVENTS", "UNSTORED", "EventStream", "Sink", "pump"]

#: Events joined into one write when several wait (one ``send_all`` each costs ~6 µs).
MAX_COALESCED_EVENTS: Final = 64

#: The event id of an answer an undecided stream delivers without storing it.
UNSTORED: Final = ""

_Item = tuple[str, bytes]


class Sink:
    """The HTTP response a stream's events go to: a bounded queue its task drains.

    `put` never waits (the producers are the session's handlers and its hub): a client
    that lets `MAX_STREAM_BACKLOG` events pile up loses the response, not the events
    (they are in the store). Closing it ends the response once it has written what was
    queued.

    (A deque, and an event made only when the response's task must wait: a memory
    channel, made and closed for every POST, cost a 2025-11-25 call ~5.7 µs of ~70 in
    ``python -m bench.asgi_profile``, where most answers are queued before the task
    looks.)
    """

    __slots__ = ("_backlog", "_closed", "_nudged", "_queue", "_wake", "preface", "replayed")

    def __init__(self, backlog: int) -> None:
        self._backlog = backlog
        self._queue: deque[_Item] = deque()
        self._closed = False
        self._nudged = False
        self._wake: primitives.AnyEvent | None = None  # (set while the task waits)
        #: Ids already written from the store: a live copy of one is skipped.
        self.replayed: set[str] = set()
        #: Encoded events to write before the queued ones: the priming event of a
        #: stream that committed late (undecided, see the module docstring).
        self.preface = b""

    def put(self, event_id: str, message: bytes) -> bool:
        """Queue an event; False when the client is too far behind (the sink closes)."""
        if self._closed:
            return False
        if len(self._queue) >= self._backlog:
            self.close()
            return False
        self._queue.append((event_id, message))
        self._wake_up()
        return True

    def close(self) -> None:
        """No more events: the response ends once it has written those queued."""
        self._closed = True
        self._wake_up()

    def release(self) -> None:
        """Its response is over: close it and drop what it did not write."""
        self.close()
        self._queue.clear()

    def nudge(self) -> None:
        """Have the task waiting for events go on now, with none (see `pump`)."""
        self._nudged = True
        self._wake_up()

    def _wake_up(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            wake.set()

    async def next_batch(self) -> tuple[list[_Item], bool]:
        """The next events (all that are waiting, up to a bound), and whether it ended.

        Waits for at least one event unless the sink is closed or `nudge` is called.
        """
        if not (self._queue or self._closed or self._nudged):
            wake = self._wake = primitives.Event()
            try:
                await wake.wait()
            finally:
                self._wake = None  # (a cancelled wait leaves no event behind)
        self._nudged = False
        return self.ready()

    def ready(self) -> tuple[list[_Item], bool]:
        """The events waiting now (none, perhaps), and whether it ended."""
        queue = self._queue
        if len(queue) <= MAX_COALESCED_EVENTS:
            batch = list(queue)
            queue.clear()
        else:
            batch = [queue.popleft() for _ in range(MAX_COALESCED_EVENTS)]
        # (It ended with the last batch: closed, nothing left behind it.)
        return batch, self._closed and not queue


class EventStream:
    """One resumable stream of a session (see the module docstring).

    Args:
        stream_id: Unique among the streams of every server sharing ``store`` (no ``-``:
            event ids use it).
        store: Where its events are kept.
        requests: The requests whose answers end it (None: the standalone stream).
        batch: Answer them together, as a JSON array (a 2025-03-26 batch POST).
        extra_answers: Answers of the batch known already (its invalid members').
        undecided: Start undecided (see the module docstring), priming with a
            ``retry`` of ``prime_retry_ms`` when it commits, if that is not None.
    """

    def __init__(
        self,
        stream_id: str,
        store: EventStore,
        *,
        requests: list[RequestId] | None = None,
        batch: bool = False,
        extra_answers: list[bytes] | None = None,
        undecided: bool = False,
        prime_retry_ms: int | None = None,
    ) -> None:
        self.id = stream_id
        self.sink: Sink | None = None
        self.done = False
        #: It has its priming event: its client holds an id to resume from.
        self.primed = False
        self.undecided = undecided
        self._prime_retry_ms = prime_retry_ms
        self._store = store
        self._waiting = None if requests is None else set(requests)
        self._batch = batch
        self._answers: list[bytes] = list(extra_answers or ())

    async def emit(self, message: bytes) -> None:
        """Store an event and deliver it to the attached response, if any."""
        if self.undecided:
            await self._commit()
        event_id = await self.record(message)
        sink = self.sink
        if sink is not None and not sink.put(event_id, message):
            self.sink = None  # the client fell behind: it resumes from the store

    async def record(self, message: bytes) -> str:
        """Store an event without delivering it; its id (`emit` delivers it as well)."""
        return await self._store.store_event(self.id, message)

    async def _commit(self) -> None:
        """An undecided stream becomes a stream: primed now, if its session primes."""
        self.undecided = False
        retry = self._prime_retry_ms
        if retry is not None:
            priming = await self.prime(retry)
            sink = self.sink
            if sink is not None:
                sink.preface += priming

    async def prime(self, retry_ms: int) -> bytes:
        """Store a priming event (an id and no data, 2025-11-25); it, encoded with ``retry_ms``."""
        self.primed = True
        return encode_event(b"", id=await self._store.store_event(self.id, None), retry=retry_ms)

    async def answered(self, request_id: RequestId, reply: bytes | None) -> None:
        """One of the requests is answered (``reply`` None: cancelled, nothing to send)."""
        waiting = self._waiting
        if waiting is None or request_id not in waiting:
            return
        waiting.discard(request_id)
        if reply is not None:
            if self._batch:
                self._answers.append(reply)
            else:
                await self._final(reply)
        if not waiting:
            if self._batch and self._answers:
                await self._final(b"[" + b",".join(self._answers) + b"]")
            self.end()

    async def _final(self, message: bytes) -> None:
        """Deliver the POST's answer: unstored while undecided (it may go as JSON)."""
        if not self.undecided:
            await self.emit(message)
            return
        sink = self.sink
        if sink is not None:
            sink.put(UNSTORED, message)

    def end(self) -> None:
        """Nothing more will be emitted: the attached response ends after what it has."""
        self.done = True
        self.detach()

    def attach(self, sink: Sink) -> None:
        """Send the stream's next events to ``sink`` (a response that replaced another)."""
        self.detach()
        if self.done:
            sink.close()
        else:
            self.sink = sink

    def detach(self) -> None:
        """End the attached response (the stream itself goes on)."""
        sink, self.sink = self.sink, None
        if sink is not None:
            sink.close()


async def pump(
    reply: Reply,
    sink: Sink,
    headers: list[Header],
    first: bytes,
    *,
    gather: bool = False,
    undecided: bool = False,
) -> None:
    """Serve one response of a stream: ``first`` (priming or replay), then live events.

    With ``gather``, what arrives until the connection's nudge (`NUDGE_DELAY` after the
    request began) goes out with ``first`` in the same write, and a stream complete by
    then is sent whole: a quick call costs one write, not three (head and priming,
    answer, end), and a slow one gets its priming event that late (SEP-1699 asks for it
    "immediately"; a hundredth of a second is that, for a client).

    With ``undecided`` (the stream is, see the module docstring), nothing is written
    before the first message, however long it takes (the keep-alive may start the
    stream meanwhile, `Reply.may_stream`): the answer alone is sent as a JSON body,
    anything else starts the stream. Returns when the sink closes, the response ended.
    """
    replayed = sink.replayed
    batch, ended = sink.ready()
    if not batch and not ended:
        if undecided:
            batch, ended = await sink.next_batch()
        elif gather:
            reply.set_nudge(sink.nudge)
            batch, ended = await sink.next_batch()
            reply.set_nudge(None)
    if undecided:
        if ended and len(batch) == 1 and batch[0][0] == UNSTORED and not sink.preface:
            # (200 whatever the answer says: in a session, 404 means "no such session".)
            await reply.answer(batch[0][1], headers, status=200)
            return
        first += sink.preface
        sink.preface = b""
    data = first + _encode(batch, replayed)
    if ended:
        await reply.send_events(data, headers, end=True)
        return
    await reply.send_events(data, headers, end=False)
    while not ended:
        batch, ended = await sink.next_batch()
        data = _encode(batch, replayed)
        if sink.preface:
            data, sink.preface = sink.preface + data, b""
        if ended:
            await reply.end_stream(data)
        elif data:
            await reply.send_raw(data)


def _encode(batch: list[_Item], replayed: set[str]) -> bytes:
    return b"".join(
        encode_event(message, id=event_id or None)
        for event_id, message in batch
        if event_id not in replayed
    )
