"""`MemoryEventStore`: ids, replay after an id, and its bounds."""

from __future__ import annotations

from tests.transports.trio_helpers import trio_test
from transports import EventStore, MemoryEventStore, StoredEvent


@trio_test
async def test_events_are_replayed_after_an_id_of_their_own_stream_only() -> None:
    store: EventStore = MemoryEventStore()
    priming = await store.store_event("aaaa", None)
    first = await store.store_event("aaaa", b"one")
    other = await store.store_event("bbbb", b"elsewhere")
    second = await store.store_event("aaaa", b"two")
    assert len({priming, first, other, second}) == 4  # unique across streams
    assert await store.events_after(priming) == (
        "aaaa",
        [StoredEvent(first, b"one"), StoredEvent(second, b"two")],
    )
    assert await store.events_after(second) == ("aaaa", [])
    assert await store.events_after(other) == ("bbbb", [])


@trio_test
async def test_unknown_and_forgotten_ids_are_none() -> None:
    store = MemoryEventStore()
    event = await store.store_event("aaaa", b"one")
    assert await store.events_after("nope") is None
    assert await store.events_after("aaaa-7") is None  # never issued
    assert await store.events_after("aaaa-x") is None
    await store.forget_stream("aaaa")
    assert await store.events_after(event) is None


@trio_test
async def test_the_least_recently_written_streams_are_forgotten_past_the_bounds() -> None:
    store = MemoryEventStore(max_streams=2)
    a = await store.store_event("aaaa", b"1")
    b = await store.store_event("bbbb", b"1")
    await store.store_event("aaaa", b"2")  # a is now the most recent
    await store.store_event("cccc", b"1")
    assert await store.events_after(b) is None
    assert await store.events_after(a) is not None
    sized = MemoryEventStore(max_bytes=10)
    old = await sized.store_event("aaaa", b"123456")
    await sized.store_event("bbbb", b"123456")
    assert await sized.events_after(old) is None  # 12 bytes > 10: the older stream went
    huge = await sized.store_event("cccc", b"x" * 50)  # alone past the budget: kept
    assert await sized.events_after(huge) == ("cccc", [])


@trio_test
async def test_a_stream_keeps_its_latest_events_and_never_replays_with_a_hole() -> None:
    store = MemoryEventStore()
    ids = [await store.store_event("aaaa", str(number).encode()) for number in range(1100)]
    assert await store.events_after(ids[0]) is None  # events 1-75 are gone
    found = await store.events_after(ids[75])  # the oldest kept is 76
    assert found is not None
    assert [event.message for event in found[1]] == [str(n).encode() for n in range(76, 1100)]
