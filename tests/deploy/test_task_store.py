"""`RedisTaskStore` against a real redis-server: what `MemoryTaskStore` does, shared.

Records round-trip whole; a key expires with its task's TTL (plus the margin) and reads
as unknown once its TTL passed by the reader's clock; ``owned_by`` lists a principal's
live tasks in creation order and forgets dropped ones; the cap drops finished tasks
first and refuses while every task runs; and a terminal status is final whichever
worker writes second (2025-11-25 tasks: "Terminal states are final"), also when many
saves race. Under trio and asyncio (the store runs on the anyio Redis client).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec

from mcpcore import types
from mcpcore.server import TaskRecord
from tests.redis.conftest import Runner
from tests.redis_server import RedisServer
from transports._deploy.orphans import STOPPED, Orphans
from transports._deploy.task_store import EXPIRY_MARGIN, MAX_SHARED_TASKS, RedisTaskStore
from transports._redis import open_redis

#: The fake clock's start (seconds since the epoch). Redis's own clock is real: a test
#: that looks at key expiry starts the fake clock at Redis's time.
NOW = 1_900_000_000.0


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def record(
    task_id: str, principal: str | None = "alice", ttl_ms: int | None = 60_000
) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        principal=principal,
        params=types.CallToolRequestParams(name="slow", arguments={"n": 1}),
        protocol_version="2026-07-28",
        client_capabilities=types.ClientCapabilities(),
        created_at=NOW,
        last_updated_at=NOW,
        ttl_ms=ttl_ms,
    )


@asynccontextmanager
async def store_of(
    server: RedisServer, clock: Clock | None = None, **options: int
) -> AsyncIterator[RedisTaskStore]:
    async with open_redis(server.url) as client:
        yield RedisTaskStore(client, "test", "w1", clock or Clock(), **options)


def test_a_record_round_trips_whole(redis_server: RedisServer, run: Runner) -> None:
    async def body() -> None:
        async with store_of(redis_server) as store:
            task = record("t1")
            task.status_message = "started"
            task.answers = {"ask": {"action": "accept", "content": {"name": "Alice"}}}
            assert await store.create(task)
            assert await store.get("t1") == task
            assert await store.get("nope") is None

    run(body)


def test_expiry_by_the_readers_clock(redis_server: RedisServer, run: Runner) -> None:
    async def body() -> None:
        clock = Clock()
        async with store_of(redis_server, clock) as store:
            # Created "now" by the real clock so that Redis keeps the key.
            now = redis_server_time(redis_server)
            clock.now = now
            task = record("t1")
            task.created_at = task.last_updated_at = now
            assert await store.create(task)
            ttl = redis_server.command("PTTL", "test:task:t1")
            assert 60_000 < ttl <= 60_000 + EXPIRY_MARGIN * 1000
            clock.now = now + 59
            assert await store.get("t1") is not None
            clock.now = now + 61
            assert await store.get("t1") is None  # (the key stays for the margin)
            assert await store.owned_by("alice") == []
            forever = record("t2", ttl_ms=None)
            assert await store.create(forever)
            assert redis_server.command("PTTL", "test:task:t2") == -1
            clock.now = now + 10**6
            assert await store.get("t2") == forever

    run(body)


def redis_server_time(server: RedisServer) -> float:
    seconds, micros = server.command("TIME")
    return int(seconds) + int(micros) / 1e6


def test_owned_by_lists_a_principals_live_tasks_oldest_first(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        clock = Clock()
        async with store_of(redis_server, clock) as store:
            clock.now = now = redis_server_time(redis_server)
            for index, (task_id, principal) in enumerate(
                [("b", "alice"), ("a", "alice"), ("c", "bob"), ("d", None)]
            ):
                task = record(task_id, principal)
                task.created_at = task.last_updated_at = now + index
                assert await store.create(task)
            assert [r.task_id for r in await store.owned_by("alice")] == ["b", "a"]
            assert [r.task_id for r in await store.owned_by("bob")] == ["c"]
            assert [r.task_id for r in await store.owned_by(None)] == ["d"]
            assert await store.owned_by("carol") == []
            # A record gone from under its index is forgotten by the next listing.
            redis_server.command("DEL", "test:task:b")
            assert [r.task_id for r in await store.owned_by("alice")] == ["a"]
            assert redis_server.command("ZRANGE", "test:tasks:by:alice", 0, -1) == [b"a"]
            # The index expires with its last task.
            assert redis_server.command("PTTL", "test:tasks:by:alice") > 0

    run(body)


def test_the_cap_drops_finished_tasks_first_then_refuses(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        clock = Clock()
        async with store_of(redis_server, clock, max_tasks=2) as store:
            clock.now = now = redis_server_time(redis_server)
            first, second = record("t1"), record("t2", "bob")
            for task in (first, second):
                task.created_at = task.last_updated_at = now
                assert await store.create(task)
            third = record("t3")
            third.created_at = third.last_updated_at = now
            assert not await store.create(third)  # every task runs: refused
            second.status = "completed"
            await store.save(second)
            assert await store.create(third)  # the finished one made room
            assert await store.get("t2") is None
            assert await store.owned_by("bob") == []
            assert redis_server.command("ZCARD", "test:tasks:by:bob") == 0
            assert [r.task_id for r in await store.owned_by("alice")] == ["t1", "t3"]
            assert MAX_SHARED_TASKS >= 1024

    run(body)


def test_a_terminal_status_is_final(redis_server: RedisServer, run: Runner) -> None:
    async def body() -> None:
        clock = Clock()
        async with store_of(redis_server, clock) as store:
            clock.now = now = redis_server_time(redis_server)
            task = record("t1")
            task.created_at = task.last_updated_at = now
            assert await store.create(task)
            # Worker B cancels; worker A's run, holding the record as it read it,
            # finishes after and saves it completed: the cancel stays.
            on_a = await store.get("t1")
            on_b = await store.get("t1")
            assert on_a is not None
            assert on_b is not None
            on_b.status = "cancelled"
            await store.save(on_b)
            on_a.status = "completed"
            on_a.result = {"content": []}
            await store.save(on_a)
            stored = await store.get("t1")
            assert stored is not None
            assert stored.status == "cancelled"
            assert stored.result is None
            # The refused record takes the state kept (what its caller announces).
            assert on_a == stored
            # The same status again is no change of it (an idempotent cancel).
            on_b.status_message = "again"
            await store.save(on_b)
            stored = await store.get("t1")
            assert stored is not None
            assert stored.status_message == "again"
            # A task dropped meanwhile stays dropped.
            redis_server.command("DEL", "test:task:t1")
            await store.save(on_a)
            assert await store.get("t1") is None

    run(body)


def test_racing_saves_leave_the_first_terminal_status(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        clock = Clock()
        async with store_of(redis_server, clock) as store:
            clock.now = now = redis_server_time(redis_server)
            outcomes = ["working", "completed", "cancelled", "failed"] * 25
            for round_ in range(8):
                task = record(f"t{round_}")
                task.created_at = task.last_updated_at = now
                assert await store.create(task)

                async def save(status: str, task: TaskRecord = task) -> None:
                    await store.save(msgspec.structs.replace(task, status=status))

                async with anyio.create_task_group() as group:
                    for status in outcomes[round_:] + outcomes[:round_]:
                        group.start_soon(save, status)
                stored = await store.get(task.task_id)
                assert stored is not None
                # Some terminal save came last or before a working one: terminal it is,
                # and no later save of another status moves it.
                assert stored.terminal
                for status in ("working", "completed", "cancelled", "failed"):
                    await save(status)
                    again = await store.get(task.task_id)
                    assert again is not None
                    assert again.status == stored.status

    run(body)


def test_a_save_over_a_revision_loses_to_one_that_came_first(
    redis_server: RedisServer, run: Runner
) -> None:
    async def body() -> None:
        async with store_of(redis_server) as store:
            assert await store.create(record("t1"))
            first, second = await store.get("t1"), await store.get("t1")
            assert first is not None
            assert second is not None
            assert first.revision == second.revision == 0
            first.answers = {"a": 1}
            assert await store.save(first, expected=0)
            assert first.revision == 1
            second.answers = {"b": 2}
            assert not await store.save(second, expected=0)  # (first came first)
            assert second.revision == 0  # (as it was: the caller reads again)
            stored = await store.get("t1")
            assert stored is not None
            assert (stored.answers, stored.revision) == ({"a": 1}, 1)
            stored.answers["b"] = 2
            assert await store.save(stored, expected=1)
            # A save without a revision (a run's outcome) always lands, and counts.
            assert await store.save(second)
            assert second.revision == 3
            latest = await store.get("t1")
            assert latest is not None
            assert latest.revision == 3
            assert await store.save(record("gone"), expected=0)  # (dropped: nothing to do)

    run(body)


def test_a_list_fails_the_working_tasks_of_a_worker_gone_for_good(
    redis_server: RedisServer, run: Runner
) -> None:
    # As a read of one task does (tests.deploy.test_balanced kills a real worker), a
    # listing fails a crashed worker's working tasks once it stayed gone the grace; it
    # asks about each worker once, and leaves finished tasks and live workers' alone.
    async def body() -> None:
        clock = Clock()
        clock.now = now = redis_server_time(redis_server)
        asked: list[str] = []
        announced: list[tuple[str, str]] = []

        async def alive(worker: str) -> bool:
            asked.append(worker)
            return worker != "w-dead"

        async def failed(task_id: str, worker: str) -> None:
            announced.append((task_id, worker))

        async with open_redis(redis_server.url) as client:
            dead = RedisTaskStore(client, "test", "w-dead", clock)
            other = RedisTaskStore(client, "test", "w-live", clock)
            reader = RedisTaskStore(client, "test", "w1", clock)
            reader.orphans = Orphans(alive, clock, grace=10.0, failed=failed)
            for index, (store, task_id) in enumerate(
                [(dead, "a"), (dead, "b"), (dead, "done"), (other, "elsewhere"), (reader, "mine")]
            ):
                task = record(task_id)
                task.created_at = task.last_updated_at = now + index
                assert await store.create(task)
            finished = await dead.get("done")
            assert finished is not None
            finished.status = "completed"
            assert await dead.save(finished)

            def statuses(records: list[TaskRecord]) -> dict[str, str]:
                return {task.task_id: task.status for task in records}

            first = await reader.owned_by("alice")  # (the dead worker first seen gone)
            assert statuses(first) == {
                "a": "working",
                "b": "working",
                "done": "completed",
                "elsewhere": "working",
                "mine": "working",
            }
            assert sorted(asked) == ["w-dead", "w-live"]
            clock.now += 10.0
            second = await reader.owned_by("alice")
            assert statuses(second) == {
                "a": "failed",
                "b": "failed",
                "done": "completed",
                "elsewhere": "working",
                "mine": "working",
            }
            assert [task.error for task in second if task.status == "failed"] == [STOPPED] * 2
            assert sorted(announced) == [("a", "w-dead"), ("b", "w-dead")]
            stored = await dead.get("a")  # (saved: any worker reads it failed now)
            assert stored is not None
            assert (stored.status, stored.error) == ("failed", STOPPED)

    run(body)
