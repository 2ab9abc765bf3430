"""`Orphans`: when the worker recorded as running a task counts as gone for good.

Its rule alone, with a scripted liveness and clock; the store failing a crashed worker's
task on a real Redis, with real processes, is `tests.deploy.test_balanced`'s.
"""

from __future__ import annotations

import math

import pytest
import trio

from transports import ORPHAN_GRACE, Deployment
from transports._deploy.orphans import MAX_GONE_WORKERS, Orphans


class Scripted:
    """Which workers listen, and the time, as the test sets them."""

    def __init__(self) -> None:
        self.listening: set[str] = set()
        self.now = 0.0

    async def alive(self, worker: str) -> bool:
        return worker in self.listening

    def clock(self) -> float:
        return self.now


def abandoned(orphans: Orphans, worker: str) -> bool:
    async def ask() -> bool:
        return await orphans.abandoned(worker)

    return trio.run(ask)


def test_a_worker_is_abandoned_only_once_gone_for_the_grace() -> None:
    scripted = Scripted()
    orphans = Orphans(scripted.alive, scripted.clock)
    assert not abandoned(orphans, "w1")  # first seen gone: not yet
    scripted.now = ORPHAN_GRACE - 0.001
    assert not abandoned(orphans, "w1")
    scripted.now = ORPHAN_GRACE
    assert abandoned(orphans, "w1")


def test_a_worker_seen_listening_again_starts_over() -> None:
    scripted = Scripted()
    orphans = Orphans(scripted.alive, scripted.clock, grace=10.0)
    assert not abandoned(orphans, "w1")
    scripted.now = 5.0
    scripted.listening.add("w1")  # (it subscribed again: a Redis restart)
    assert not abandoned(orphans, "w1")
    scripted.listening.clear()
    scripted.now = 11.0
    assert not abandoned(orphans, "w1")  # gone since 11, not since 0
    scripted.now = 21.0
    assert abandoned(orphans, "w1")


def test_a_listening_worker_is_never_abandoned() -> None:
    scripted = Scripted()
    scripted.listening.add("w1")
    orphans = Orphans(scripted.alive, scripted.clock, grace=1.0)
    for now in (0.0, 10.0, 1000.0):
        scripted.now = now
        assert not abandoned(orphans, "w1")


def test_the_memory_of_gone_workers_is_bounded() -> None:
    scripted = Scripted()
    orphans = Orphans(scripted.alive, scripted.clock, grace=1.0)
    for index in range(MAX_GONE_WORKERS):
        assert not abandoned(orphans, f"w{index}")
    assert not abandoned(orphans, "one too many")  # (the memory starts again)
    scripted.now = 2.0
    assert not abandoned(orphans, "w0")  # forgotten: seen gone afresh
    assert abandoned(orphans, "one too many")


@pytest.mark.parametrize("grace", [0.0, -1.0, math.nan])
def test_a_deployment_refuses_a_grace_that_is_not_positive(grace: float) -> None:
    with pytest.raises(ValueError, match="orphan_grace must be a positive number of seconds"):
        Deployment("redis://127.0.0.1:6379", orphan_grace=grace)


def test_a_deployment_keeps_its_grace() -> None:
    assert Deployment("redis://127.0.0.1:6379").orphan_grace == ORPHAN_GRACE
    assert Deployment("redis://127.0.0.1:6379", orphan_grace=2.5).orphan_grace == 2.5
