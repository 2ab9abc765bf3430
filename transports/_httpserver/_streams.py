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
"""

from __future__ import annotations

from typing import Final

import trio

from mcpcore.framing import encode_event
from mcpcore.types import RequestId
from transports._httpserver._event_store import EventStore
from transports._httpserver._reply import Header, Reply

__all__ = ["MAX_COALESCED_EVENTS", "EventStream", "Sink", "pump"]

#: Events joined into one write when several wait (one ``send_all`` each costs ~6 µs).
MAX_COALESCED_EVENTS: Final = 64

_Item = tuple[str, bytes]


class Sink:
    """The HTTP response a stream's events go to: a bounded queue its task drains."""

    __slots__ = ("_receive", "_send", "replayed")

    def __init__(self, backlog: int) -> None:
        self._send, self._receive = trio.open_memory_channel[_Item](backlog)
        #: Ids already written from the store: a live copy of one is skipped.
        self.replayed: set[str] = set()

    def put(self, event_id: str, message: bytes) -> bool:
        """Queue an event; False when the client is too far behind (the sink closes)."""
        try:
            self._send.send_nowait((event_id, message))
        except trio.WouldBlock:
            self.close()
            return False
        except trio.ClosedResourceError:
            return False
        return True

    def close(self) -> None:
        """No more events: the response ends once it has written those queued."""
        self._send.close()

    async def next_batch(self) -> list[_Item] | None:
        """The next events (as many as are waiting, up to a bound); None once closed."""
        try:
            batch = [await self._receive.receive()]
        except trio.EndOfChannel:
            return None
        while len(batch) < MAX_COALESCED_EVENTS:
            try:
                batch.append(self._receive.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        return batch


class EventStream:
    """One resumable stream of a session (see the module docstring).

    Args:
        stream_id: Random and unique in the server (no ``-``: event ids use it).
        store: Where its events are kept.
        requests: The requests whose answers end it (None: the standalone stream).
        batch: Answer them together, as a JSON array (a 2025-03-26 batch POST).
    """

    def __init__(
        self,
        stream_id: str,
        store: EventStore,
        *,
        requests: list[RequestId] | None = None,
        batch: bool = False,
        extra_answers: list[bytes] | None = None,
    ) -> None:
        self.id = stream_id
        self.sink: Sink | None = None
        self.done = False
        self._store = store
        self._waiting = None if requests is None else set(requests)
        self._batch = batch
        self._answers: list[bytes] = list(extra_answers or ())

    async def emit(self, message: bytes) -> None:
        """Store an event and deliver it to the attached response, if any."""
        event_id = await self._store.store_event(self.id, message)
        sink = self.sink
        if sink is not None and not sink.put(event_id, message):
            self.sink = None  # the client fell behind: it resumes from the store

    async def prime(self) -> str:
        """Store a priming event (an id and no data, 2025-11-25); its id."""
        return await self._store.store_event(self.id, None)

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
                await self.emit(reply)
        if not waiting:
            if self._batch and self._answers:
                await self.emit(b"[" + b",".join(self._answers) + b"]")
            self.end()

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


async def pump(reply: Reply, sink: Sink, headers: list[Header], first: bytes) -> None:
    """Serve one response of a stream: ``first`` (priming or replay), then live events.

    Returns when the sink closes; the response is then ended.
    """
    await reply.start_stream(headers, first=first)
    replayed = sink.replayed
    while True:
        batch = await sink.next_batch()
        if batch is None:
            break
        data = b"".join(
            encode_event(message, id=event_id)
            for event_id, message in batch
            if event_id not in replayed
        )
        if data:
            await reply.send_raw(data)
    await reply.end_stream()
