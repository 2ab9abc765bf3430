"""`RedisEventStore`: the events of resumable legacy streams, in Redis Streams.

Each event stream is a Redis stream (``XADD``), capped at `MAX_EVENTS_PER_STREAM`
entries (approximately: ``MAXLEN ~`` trims whole nodes, which is cheap) and expiring
`EVENT_TTL` after its last event, so Redis holds a bounded, self-cleaning window of
each stream. An event id is ``<stream id>:<entry id>``: the stream ids this worker's
endpoint mints are unique across the deployment (a random prefix per worker,
`transports._http.server.legacy`), and Redis numbers the entries. A resumption reads
the entries after the client's last one (``XRANGE`` from an exclusive start); if that
entry is gone (trimmed, expired, or never issued) the events after it may have a hole,
so nothing is replayed ("(S) MUST NOT replay" what is not that stream's, 2025-11-25
basic/transports; the transport then answers 400).

Kept in Redis, the events outlive the worker that wrote them: a client whose stream was
cut (its worker killed, its connection lost) resumes on any worker of the deployment.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from transports._http.server.event_store import MAX_EVENTS_PER_STREAM, StoredEvent

__all__ = ["EVENT_TTL", "RedisEventStore"]

#: Seconds a stream's events stay in Redis after its last one: a client resumes a
#: stream it was reading moments ago, and a session idle this long is gone anyway
#: (`transports.SESSION_IDLE_TIMEOUT`).
EVENT_TTL: Final = 30 * 60

#: Between the stream id and the entry id in an event id.
_SEPARATOR: Final = ":"
#: A Redis stream entry id (milliseconds-sequence); anything else was never issued.
_ENTRY_ID: Final = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
#: A stream id of `transports._http.server.legacy` (lower-case hex).
_STREAM_ID: Final = re.compile(r"[0-9a-f]{1,64}")
#: The entry field of a message; a priming event has the other one, with no message.
_MESSAGE: Final = b"m"
_PRIMING: Final = b"p"

Command = Sequence[bytes | str | int]
Pipeline = Callable[[Sequence[Command]], Awaitable[list[Any]]]


class RedisEventStore:
    """An `transports.EventStore` in Redis (see the module docstring).

    Args:
        pipeline: Runs commands in one round trip and returns their replies (the
            deployment's, which notes whether Redis answered); raises `ConnectionError`
            when Redis is unreachable.
        namespace: Prefix of the keys (one deployment's).
        max_events: See `MAX_EVENTS_PER_STREAM`.
        ttl: See `EVENT_TTL`.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        namespace: str,
        *,
        max_events: int = MAX_EVENTS_PER_STREAM,
        ttl: int = EVENT_TTL,
    ) -> None:
        self._pipeline = pipeline
        self._prefix = f"{namespace}:events:"
        self._max_events = max_events
        self._ttl = ttl

    async def store_event(self, stream_id: str, message: bytes | None) -> str:
        """See `transports.EventStore.store_event`."""
        key = self._prefix + stream_id
        field = (_PRIMING, b"") if message is None else (_MESSAGE, message)
        added, _ = await self._pipeline(
            [
                ("XADD", key, "MAXLEN", "~", self._max_events, "*", *field),
                ("EXPIRE", key, self._ttl),
            ]
        )
        if isinstance(added, Exception):
            raise ConnectionError(f"the event store refused an event: {added}")
        return f"{stream_id}{_SEPARATOR}{added.decode()}"

    async def events_after(self, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        """See `transports.EventStore.events_after`."""
        stream_id, _, entry = event_id.partition(_SEPARATOR)
        if _STREAM_ID.fullmatch(stream_id) is None or _ENTRY_ID.fullmatch(entry) is None:
            return None  # not an id we issue: never look it up
        key = self._prefix + stream_id
        itself, after = await self._pipeline(
            [("XRANGE", key, entry, entry), ("XRANGE", key, "(" + entry, "+")]
        )
        if isinstance(itself, Exception) or isinstance(after, Exception) or not itself:
            return None  # unknown, expired, or trimmed: a replay could have a hole
        return stream_id, [_stored(stream_id, item) for item in after]

    async def forget_stream(self, stream_id: str) -> None:
        """See `transports.EventStore.forget_stream`."""
        await self._pipeline([("DEL", self._prefix + stream_id)])


def _stored(stream_id: str, item: list[Any]) -> StoredEvent:
    """One ``XRANGE`` entry (``[id, [field, value]]``) as a `StoredEvent`."""
    entry_id, fields = item
    message = fields[1] if fields[0] == _MESSAGE else None
    return StoredEvent(f"{stream_id}{_SEPARATOR}{entry_id.decode()}", message)
