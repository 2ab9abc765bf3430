"""`SharedTaskRunner` on a real Redis: runs any worker cancels and awaits.

Two runners stand for two workers (``w1``, ``w2``) of one deployment, each with its own
`RedisTaskStore` on the same Redis; the hub channel is a list the test reads, and which
workers still listen is a set the test changes. A run records its worker; a cancel of
a run elsewhere is broadcast, and the worker that runs it cancels it; a wait on a run
elsewhere ends when the store says the task ended, and gives up when its worker is
gone or the task waits for input; a recheck cancels the runs of tasks that ended
elsewhere (a cancel message lost). Under trio and asyncio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import msgspec

from tests.deploy.test_task_store import record, redis_server_time
from tests.redis.conftest import Runner
from tests.redis_server import RedisServer
from transports._deploy.messages import CancelTask, Message
from transports._deploy.task_runner import SharedTaskRunner
from transports._deploy.task_store import RedisTaskStore
from transports._redis import open_redis
from transports._runtime import primitives


@dataclass
class Hub:
    """The hub channel and the workers' liveness, as the test sees them."""

    published: list[Message] = field(default_factory=list)
    listening: set[str] = field(default_factory=lambda: {"w1", "w2"})

    async def broadcast(self, message: Message) -> bool:
        self.published.append(message)
        return True

    async def alive(self, worker: str) -> bool:
        return worker in self.listening


@dataclass
class Worker:
    store: RedisTaskStore
    runner: SharedTaskRunner


@asynccontextmanager
async def two_workers(server: RedisServer, hub: Hub) -> AsyncIterator[tuple[Worker, Worker]]:
    now = redis_server_time(server)
    async with open_redis(server.url) as client, anyio.create_task_group() as group:
        workers = []
        for name in ("w1", "w2"):
            store = RedisTaskStore(client, "test", name, lambda: now)
            runner = SharedTaskRunner(group, store, broadcast=hub.broadcast, alive=hub.alive)
            workers.append(Worker(store, runner))
        yield workers[0], workers[1]
        group.cancel_scope.cancel()


async def created(worker: Worker, server: RedisServer, task_id: str) -> None:
    task = record(task_id)
    task.created_at = task.last_updated_at = redis_server_time(server)
    assert await worker.store.create(task)


@dataclass
class Held:
    """A run that waits until released, and says whether it was cancelled."""

    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(self) -> None:
        self.started.set()
        finished = False
        try:
            await self.release.wait()
            finished = True
        finally:
            if not finished:
                self.cancelled.set()


def test_a_run_records_its_worker_and_a_cancel_elsewhere_is_broadcast(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        hub = Hub()
        async with two_workers(redis_server, hub) as (first, second):
            await created(first, redis_server, "t1")
            held = Held()
            second.runner.start("t1", held)  # (a run after input, on the other worker)
            await held.started.wait()
            assert await first.store.state_of("t1") == ("working", "w2")
            first.runner.cancel("t1")  # not its run: broadcast
            while not hub.published:
                await primitives.sleep(0)
            assert hub.published == [CancelTask("t1")]
            first.runner.cancel_here("t1")  # (heard by the first: not its run)
            assert not held.cancelled.is_set()
            second.runner.cancel_here("t1")  # heard by the second: cancelled
            await held.cancelled.wait()
            # Its own run is cancelled at once, with nothing published.
            again = Held()
            second.runner.start("t2", again)
            await again.started.wait()
            second.runner.cancel("t2")
            await again.cancelled.wait()
            assert hub.published == [CancelTask("t1")]

    run(body)


def test_a_wait_on_a_run_elsewhere_ends_with_the_task(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        hub = Hub()
        async with two_workers(redis_server, hub) as (first, second):
            await created(first, redis_server, "t1")
            held = Held()
            first.runner.start("t1", held)
            await held.started.wait()
            waited: list[bool] = []

            async def wait() -> None:
                waited.append(await second.runner.wait("t1"))

            async with anyio.create_task_group() as group:
                group.start_soon(wait)
                task = await first.store.get("t1")
                assert task is not None
                await first.store.save(msgspec.structs.replace(task, status="completed"))
                held.release.set()
            assert waited == [True]
            assert await first.runner.wait("t1") is True  # (ended: the store says so)
            assert await second.runner.wait("unknown") is True  # (the caller finds none)

    run(body)


def test_a_wait_gives_up_when_no_run_will_end_the_task(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        hub = Hub()
        async with two_workers(redis_server, hub) as (first, second):
            await created(first, redis_server, "t1")
            hub.listening.discard("w1")  # its worker is gone
            assert await second.runner.wait("t1") is False
            assert await first.runner.wait("t1") is False  # its worker, not running it
            await created(first, redis_server, "t2")
            task = await first.store.get("t2")
            assert task is not None
            await first.store.save(msgspec.structs.replace(task, status="input_required"))
            hub.listening.add("w1")
            assert await second.runner.wait("t2") is False  # (waits for tasks/update)

    run(body)


def test_a_recheck_cancels_the_runs_of_tasks_that_ended_elsewhere(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        hub = Hub()
        async with two_workers(redis_server, hub) as (first, _):
            runs = {}
            for task_id in ("ended", "gone", "running"):
                await created(first, redis_server, task_id)
                runs[task_id] = held = Held()
                first.runner.start(task_id, held)
                await held.started.wait()
            ended = await first.store.get("ended")
            assert ended is not None
            await first.store.save(msgspec.structs.replace(ended, status="cancelled"))
            redis_server.command("DEL", "test:task:gone")
            await first.runner.recheck()
            await runs["ended"].cancelled.wait()
            await runs["gone"].cancelled.wait()
            assert not runs["running"].cancelled.is_set()
            assert len(first.runner) == 1

    run(body)
