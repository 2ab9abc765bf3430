"""Where legacy event streams keep their events, so that a client can resume one.

"(S) MAY put SSE ids on events; they MUST be globally unique across all streams of the
session. (C) resumes with a GET plus Last-Event-ID. (S) MAY replay only that stream's
messages and MUST NOT replay another stream's" (2025-03-26 … 2025-11-25
basic/transports). A server that closes a stream mid-call on purpose (2025-11-25 SSE
polling) relies on the store to deliver the rest.

`EventStore` is an interface (shared/DESIGN.md §7: a deployment of several workers will
put it in a shared engine such as Redis); `MemoryEventStore` is the bounded in-process
default. Stream ids are random and unique per server, so event ids are unique across
every session; the transport checks that a resumed stream belongs to the session that
asks for it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Final, NamedTuple, Protocol

__all__ = [
    "MAX_EVENTS_PER_STREAM",
    "MAX_STORED_BYTES",
    "MAX_STORED_STREAMS",
    "EventStore",
    "MemoryEventStore",
    "StoredEvent",
]

#: Streams whose events are remembered; the least recently written is forgotten past
#: it. Sized for `transports.MAX_SESSIONS` sessions with a few streams each.
MAX_STORED_STREAMS: Final = 4096
#: Events remembered per stream (the oldest are dropped). A call's stream carries its
#: notifications and one answer; a standalone stream that outgrows this has a client
#: that never reads it.
MAX_EVENTS_PER_STREAM: Final = 1024
#: Bytes of messages remembered in all; the least recently written streams are
#: forgotten past it.
MAX_STORED_BYTES: Final = 64 * 1024 * 1024


class StoredEvent(NamedTuple):
    """One event of a stream: its id, and its message (None for a priming event)."""

    event_id: str
    message: bytes | None


class EventStore(Protocol):
    """Keeps the events of resumable streams (see the module docstring)."""

    async def store_event(self, stream_id: str, message: bytes | None) -> str:
        """Record the next event of ``stream_id`` (None: a priming event); return its id."""

    async def events_after(self, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        """The stream ``event_id`` belongs to and its events after it, in order.

        None when the id is unknown (never issued, or its stream was forgotten), or
        when some of the events after it are no longer kept.
        """

    async def forget_stream(self, stream_id: str) -> None:
        """Drop a stream's events (its session ended)."""


class _Stream:
    __slots__ = ("events", "next_sequence", "size")

    def __init__(self) -> None:
        self.events: deque[tuple[int, bytes | None]] = deque(maxlen=MAX_EVENTS_PER_STREAM)
        self.next_sequence = 0
        self.size = 0


class MemoryEventStore:
    """The in-process `EventStore`: bounded by stream count, events per stream and bytes.

    Event ids are ``<stream id>-<sequence>``; stream ids must not contain ``-``.

    Args:
        max_streams: See `MAX_STORED_STREAMS`.
        max_bytes: See `MAX_STORED_BYTES`.
    """

    def __init__(
        self, *, max_streams: int = MAX_STORED_STREAMS, max_bytes: int = MAX_STORED_BYTES
    ) -> None:
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        self._max_streams = max_streams
        self._max_bytes = max_bytes
        self._size = 0

    async def store_event(self, stream_id: str, message: bytes | None) -> str:
        """See `EventStore.store_event`."""
        stream = self._streams.get(stream_id)
        if stream is None:
            stream = self._streams[stream_id] = _Stream()
        else:
            self._streams.move_to_end(stream_id)
        sequence = stream.next_sequence
        stream.next_sequence += 1
        events = stream.events
        if len(events) == events.maxlen:
            dropped = events[0][1]
            self._shrink(stream, 0 if dropped is None else len(dropped))
        events.append((sequence, message))
        grown = 0 if message is None else len(message)
        stream.size += grown
        self._size += grown
        self._evict(keep=stream_id)
        return f"{stream_id}-{sequence}"

    async def events_after(self, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        """See `EventStore.events_after`."""
        stream_id, _, sequence_text = event_id.rpartition("-")
        stream = self._streams.get(stream_id)
        if stream is None or not sequence_text.isdigit():
            return None
        sequence = int(sequence_text)
        if sequence >= stream.next_sequence:
            return None  # an id we never issued
        events = stream.events
        if events and events[0][0] > sequence + 1:
            return None  # events after it were dropped: a replay would have a hole
        return stream_id, [
            StoredEvent(f"{stream_id}-{number}", message)
            for number, message in stream.events
            if number > sequence
        ]

    async def forget_stream(self, stream_id: str) -> None:
        """See `EventStore.forget_stream`."""
        stream = self._streams.pop(stream_id, None)
        if stream is not None:
            self._size -= stream.size

    def _shrink(self, stream: _Stream, size: int) -> None:
        stream.size -= size
        self._size -= size

    def _evict(self, *, keep: str) -> None:
        streams = self._streams
        while len(streams) > self._max_streams or (self._size > self._max_bytes and streams):
            oldest = next(iter(streams))
            if oldest == keep and len(streams) == 1:
                return  # one stream larger than the whole budget keeps its latest events
            self._size -= streams.pop(oldest).size
