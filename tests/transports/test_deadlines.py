"""`transports._client.deadlines.Deadlines`: call timeouts kept by one task, in buckets.

On trio's autojump clock: virtual time, so "fires within one bucket" is exact.
"""

from __future__ import annotations

import trio

from tests.transports.trio_helpers import trio_test
from transports._client.deadlines import MAX_STALE_TIMES, RESOLUTION, Deadlines


class Call:
    def __init__(self) -> None:
        self.expired_at: float | None = None

    def expire(self) -> None:
        assert self.expired_at is None, "expired twice"
        self.expired_at = trio.current_time()


@trio_test(autojump=True)
async def test_each_call_expires_at_its_deadline_within_one_bucket() -> None:
    deadlines = Deadlines()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deadlines.run)
        start = trio.current_time()
        calls = {delay: Call() for delay in (0.3, 0.1, 2.0, 0.1004)}
        for delay, call in calls.items():
            deadlines.add(call, start + delay)
        await trio.sleep(3)
        for delay, call in calls.items():
            assert call.expired_at is not None
            assert start + delay <= call.expired_at <= start + delay + RESOLUTION
        nursery.cancel_scope.cancel()


@trio_test(autojump=True)
async def test_a_discarded_call_never_expires_and_an_infinite_deadline_is_not_kept() -> None:
    deadlines = Deadlines()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deadlines.run)
        answered, forever, late = Call(), Call(), Call()
        key = deadlines.add(answered, trio.current_time() + 0.1)
        assert deadlines.add(forever, float("inf")) is None
        deadlines.add(late, trio.current_time() + 0.2)
        deadlines.discard(answered, key)
        deadlines.discard(forever, None)  # (harmless)
        await trio.sleep(1)
        assert answered.expired_at is None
        assert forever.expired_at is None
        assert late.expired_at is not None
        nursery.cancel_scope.cancel()


@trio_test(autojump=True)
async def test_an_earlier_deadline_wakes_the_task_sleeping_for_a_later_one() -> None:
    deadlines = Deadlines()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deadlines.run)
        slow, quick = Call(), Call()
        deadlines.add(slow, trio.current_time() + 60)
        await trio.sleep(0.01)  # the task now sleeps until the slow call's bucket
        start = trio.current_time()
        deadlines.add(quick, start + 0.05)
        await trio.sleep(0.5)
        assert quick.expired_at is not None
        assert quick.expired_at <= start + 0.05 + RESOLUTION
        assert slow.expired_at is None
        nursery.cancel_scope.cancel()


def test_answered_calls_leave_nothing_behind() -> None:
    """Memory follows the calls waiting, not the calls made (no task needed)."""

    async def main() -> None:
        deadlines = Deadlines()
        deadline = trio.current_time() + 60
        for _ in range(10_000):  # all in one bucket, each answered before the next
            call = Call()
            deadlines.discard(call, deadlines.add(call, deadline))
        assert deadlines._buckets == {}
        assert len(deadlines._times) <= MAX_STALE_TIMES + 1
        waiting = [Call() for _ in range(1_000)]
        for index, call in enumerate(waiting):
            deadlines.add(call, deadline + index * RESOLUTION)
        assert len(deadlines._buckets) == 1_000
        assert len(deadlines._times) <= 1_000 + MAX_STALE_TIMES + 1

    trio.run(main)
