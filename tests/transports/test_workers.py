"""`WorkerPool`: requests run one at a time per worker, each cancellable on its own."""

from __future__ import annotations

import trio
import trio.testing

from tests.transports.test_runtime import trio_run
from transports._runtime.workers import WorkerPool


class Recorder:
    """Jobs are names; a job waits for its gate, and the recorder notes who ran it."""

    def __init__(self) -> None:
        self.gates: dict[str, trio.Event] = {}
        self.ran: list[tuple[str, trio.lowlevel.Task]] = []
        self.outcomes: dict[str, str] = {}

    def gate(self, name: str) -> trio.Event:
        return self.gates.setdefault(name, trio.Event())

    async def run(self, name: str) -> None:
        self.ran.append((name, trio.lowlevel.current_task()))
        try:
            await self.gate(name).wait()
            self.outcomes[name] = "done"
        except trio.Cancelled:
            self.outcomes[name] = "cancelled"
            raise


@trio_run
async def test_an_idle_worker_takes_the_next_job() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, recorder.run, key=str)
        for name in ("a", "b", "c"):
            recorder.gate(name).set()
            pool.submit(name)
            await trio.testing.wait_all_tasks_blocked()
        assert pool.running == 0
        nursery.cancel_scope.cancel()
    tasks = {task for _, task in recorder.ran}
    assert [name for name, _ in recorder.ran] == ["a", "b", "c"]
    assert len(tasks) == 1  # one worker served all three, one after the other
    assert recorder.outcomes == {"a": "done", "b": "done", "c": "done"}


@trio_run
async def test_concurrent_jobs_get_their_own_workers_and_cancellations() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, recorder.run, key=str)
        pool.submit("a")
        pool.submit("b")
        await trio.testing.wait_all_tasks_blocked()
        assert pool.running == 2
        assert len({task for _, task in recorder.ran}) == 2
        assert pool.cancel("a")
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.outcomes == {"a": "cancelled"}
        recorder.gate("b").set()
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.outcomes == {"a": "cancelled", "b": "done"}
        assert not pool.cancel("a")  # over: nothing to cancel
        # The worker whose scope was cancelled takes new work under a fresh scope.
        recorder.gate("c").set()
        pool.submit("c")
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.outcomes["c"] == "done"
        nursery.cancel_scope.cancel()


@trio_run
async def test_a_job_cancelled_before_it_starts_never_runs() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, recorder.run, key=str)
        pool.submit("a")
        assert pool.cancel("a")  # the worker has not run yet
        await trio.testing.wait_all_tasks_blocked()
        assert recorder.ran == []
        assert pool.running == 0
        nursery.cancel_scope.cancel()


@trio_run
async def test_a_job_cancelled_before_it_starts_is_given_to_abandon_instead() -> None:
    recorder = Recorder()
    abandoned: list[str] = []

    async def abandon(name: str) -> None:
        abandoned.append(name)  # (what the job held is given back here)

    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, recorder.run, key=str, abandon=abandon)
        pool.submit("a")
        pool.submit("b")
        assert pool.cancel("a")
        recorder.gate("b").set()
        await trio.testing.wait_all_tasks_blocked()
        assert [name for name, _ in recorder.ran] == ["b"]
        assert abandoned == ["a"]
        assert pool.running == 0
        nursery.cancel_scope.cancel()


@trio_run
async def test_idle_workers_beyond_the_limit_exit() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, recorder.run, key=str, max_idle=2)
        for name in "abcde":
            pool.submit(name)
        await trio.testing.wait_all_tasks_blocked()
        assert len(nursery.child_tasks) == 5
        for name in "abcde":
            recorder.gate(name).set()
        await trio.testing.wait_all_tasks_blocked()
        assert len(nursery.child_tasks) == 2  # two wait for work; three exited
        nursery.cancel_scope.cancel()


Pair = tuple[str, str]  # (a key, and a name for the recorder)


async def _key_used_again(nursery: trio.Nursery, recorder: Recorder) -> WorkerPool[Pair]:
    """A pool of (key, name) jobs: "first" running under key "7", "second" submitted too.

    A request's id is free once its answer is sent, before its job has ended: a client
    may use it again at once (``test_stream_server_hostile.py`` found a KeyError then).
    """
    pool: WorkerPool[Pair] = WorkerPool(
        nursery, lambda job: recorder.run(job[1]), key=lambda job: job[0]
    )
    pool.submit(("7", "first"))
    await trio.testing.wait_all_tasks_blocked()
    pool.submit(("7", "second"))
    return pool


@trio_run
async def test_a_key_used_again_while_its_first_job_ends_is_the_second_jobs() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = await _key_used_again(nursery, recorder)
        await trio.testing.wait_all_tasks_blocked()
        recorder.gate("first").set()
        await trio.testing.wait_all_tasks_blocked()
        assert pool.running == 1  # the second, still cancellable by its key
        assert pool.cancel("7")
        await trio.testing.wait_all_tasks_blocked()
        assert pool.running == 0
        nursery.cancel_scope.cancel()
    assert recorder.outcomes == {"first": "done", "second": "cancelled"}


@trio_run
async def test_a_cancellation_by_a_key_used_again_is_the_new_jobs_before_it_starts() -> None:
    recorder = Recorder()
    async with trio.open_nursery() as nursery:
        pool = await _key_used_again(nursery, recorder)
        assert pool.cancel("7")  # (the first answered already: the client means the second)
        recorder.gate("first").set()
        await trio.testing.wait_all_tasks_blocked()
        assert pool.running == 0
        nursery.cancel_scope.cancel()
    assert [name for name, _ in recorder.ran] == ["first"]  # the second never ran
    assert recorder.outcomes == {"first": "done"}
