"""`Sink`, the bounded queue between a legacy event stream and the response serving it.

A trio memory channel underneath: producers never wait, the response's task waits for
the next events, a nudge lets it go on with none, closing ends the response after what
was queued, and a cancelled wait leaves the sink usable.
"""

from __future__ import annotations

import trio
import trio.testing

from tests.transports.trio_helpers import trio_test
from transports._http.server.streams import MAX_COALESCED_EVENTS, Sink


@trio_test(autojump=True)
async def test_a_waiting_response_gets_every_event_queued_meanwhile_in_one_batch() -> None:
    sink = Sink(backlog=8)
    batches: list[tuple[list[tuple[str, bytes]], bool]] = []

    async def serve() -> None:
        batches.append(await sink.next_batch())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        await trio.testing.wait_all_tasks_blocked()
        assert sink.put("1", b"a")
        assert sink.put("2", b"b")  # (before the response's task runs again)
    assert batches == [([("1", b"a"), ("2", b"b")], False)]


@trio_test(autojump=True)
async def test_closing_ends_the_response_after_the_events_queued() -> None:
    sink = Sink(backlog=8)
    sink.put("1", b"a")
    sink.close()
    assert not sink.put("2", b"b")  # nothing after the end
    assert await sink.next_batch() == ([("1", b"a")], True)
    assert await sink.next_batch() == ([], True)
    assert sink.ready() == ([], True)


@trio_test(autojump=True)
async def test_a_client_too_far_behind_loses_the_response_not_the_producer() -> None:
    sink = Sink(backlog=3)
    assert [sink.put(str(n), b"x") for n in range(4)] == [True, True, True, False]
    batch, ended = sink.ready()
    assert [event_id for event_id, _ in batch] == ["0", "1", "2"]
    assert ended  # the sink closed when the backlog overflowed


@trio_test(autojump=True)
async def test_a_nudge_lets_the_waiting_response_go_on_with_nothing() -> None:
    sink = Sink(backlog=8)
    got: list[tuple[list[tuple[str, bytes]], bool]] = []

    async def serve() -> None:
        got.append(await sink.next_batch())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        await trio.testing.wait_all_tasks_blocked()
        sink.nudge()
    assert got == [([], False)]
    # The stream goes on as before.
    sink.put("1", b"a")
    assert await sink.next_batch() == ([("1", b"a")], False)


@trio_test(autojump=True)
async def test_a_batch_is_bounded_and_the_end_comes_with_the_last_one() -> None:
    sink = Sink(backlog=2 * MAX_COALESCED_EVENTS)
    for n in range(MAX_COALESCED_EVENTS + 1):
        sink.put(str(n), b"x")
    sink.close()
    first, ended = await sink.next_batch()
    assert (len(first), ended) == (MAX_COALESCED_EVENTS, False)
    assert await sink.next_batch() == ([(str(MAX_COALESCED_EVENTS), b"x")], True)
    # Exactly a batch's worth and the end: one batch, ended.
    sink = Sink(backlog=2 * MAX_COALESCED_EVENTS)
    for n in range(MAX_COALESCED_EVENTS):
        sink.put(str(n), b"x")
    sink.close()
    batch, ended = await sink.next_batch()
    assert (len(batch), ended) == (MAX_COALESCED_EVENTS, True)


@trio_test(autojump=True)
async def test_a_cancelled_wait_leaves_the_sink_usable() -> None:
    sink = Sink(backlog=8)
    with trio.move_on_after(1) as waited:
        await sink.next_batch()
    assert waited.cancelled_caught
    assert sink.put("1", b"a")
    assert await sink.next_batch() == ([("1", b"a")], False)
