"""`Sink`, the bounded queue between a legacy event stream and the response serving it.

Producers never wait, the response's task waits for the next events, a nudge lets it go
on with none, closing ends the response after what was queued (and wakes a task
waiting), and a cancelled wait leaves the sink usable.
"""

from __future__ import annotations

from collections.abc import Callable

import trio
import trio.testing

from tests.transports.trio_helpers import trio_test
from transports._http.server.streams import MAX_COALESCED_EVENTS, Sink

#: What `Sink.next_batch` gives: the events (id, message), and whether the response ended.
Batch = tuple[list[tuple[str, bytes]], bool]


async def _woken_by(sink: Sink, wake: Callable[[], object]) -> Batch:
    """What a response waiting on ``sink`` gets when ``wake`` is called while it waits."""
    got: list[Batch] = []

    async def serve() -> None:
        got.append(await sink.next_batch())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        await trio.testing.wait_all_tasks_blocked()
        assert not got  # (it waits)
        wake()
    return got[0]


@trio_test(autojump=True)
async def test_a_waiting_response_gets_every_event_queued_meanwhile_in_one_batch() -> None:
    sink = Sink(backlog=8)

    def put_two() -> None:
        assert sink.put("1", b"a")
        assert sink.put("2", b"b")  # (before the response's task runs again)

    assert await _woken_by(sink, put_two) == ([("1", b"a"), ("2", b"b")], False)


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
async def test_closing_wakes_a_waiting_response_to_end() -> None:
    sink = Sink(backlog=8)
    assert await _woken_by(sink, sink.close) == ([], True)


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
    assert await _woken_by(sink, sink.nudge) == ([], False)
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
