"""The process layers' harness: a comparison that falls over costs its own columns only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

import pytest

from bench._harness import Settings
from bench._layer import Context
from bench._optional import Availability
from bench._process_layer import ProcessVariant, Workload, measure_rows
from bench._results import NOT_AVAILABLE
from bench._verify import BenchmarkError

ANSWER = "ok"
#: The batch (the sweep's second point) at which the failing client breaks.
BREAKS_AT = 8


class FakeThread:
    """A client thread whose batches answer at once, until the test breaks it."""

    #: Whether the next batches fail, by variant name (set by `run`).
    broken: ClassVar[dict[str, bool]] = {}

    def __init__(
        self, name: str, opener: Any, batch: Callable[[Any], Coroutine[Any, Any, list[str]]]
    ) -> None:
        self.name = name
        self.batch = batch

    def start(self) -> None:
        pass

    def wait_ready(self) -> Any:
        return None

    def operation(self) -> list[str]:
        if FakeThread.broken.get(self.name):
            raise BenchmarkError(f"{self.name}: the client failed: ReadError('')")
        return asyncio.run(self.batch(None))  # (the batch records the latencies)

    def close(self) -> None:
        pass


def variant(name: str, column: str) -> ProcessVariant:
    async def call(client: Any) -> Any:
        return ANSWER

    async def gather(count: int, job: Callable[[], Awaitable[Any]]) -> list[Any]:
        return [await job() for _ in range(count)]

    def opener() -> AbstractAsyncContextManager[Any]:
        raise AssertionError("FakeThread never opens a client")

    return ProcessVariant(
        name=name,
        column=column,
        era="legacy",
        thread=FakeThread,  # type: ignore[arg-type]
        opener=opener,
        call=call,
        text_of=str,
        gather=gather,
    )


def run(variants: list[ProcessVariant], breaking_client: str) -> list[Any]:
    context = Context(Settings(repeat=2, target_seconds=0.001, quick=True), Availability())
    workloads = [Workload("sequential", 1, (1, 1), ()), Workload("8 in flight", 8, (1, 1), ())]
    original = Workload.calls_per_task

    def breaking(self: Workload, settings: Settings) -> int:
        # That client breaks once the sweep reaches BREAKS_AT callers.
        FakeThread.broken[breaking_client] = self.in_flight >= BREAKS_AT
        return original(self, settings)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Workload, "calls_per_task", breaking)
        return measure_rows(
            context,
            layer="fake",
            label="tools/call",
            workloads=workloads,
            variants=variants,
            expected_text=ANSWER,
            row_name=lambda workload, era: f"{workload.key}, {era}",
            sizes=lambda era: 1,
            notes=lambda workload, era: [],
            unavailable=(),
        )


def test_a_failing_comparison_is_left_out_from_that_point_on() -> None:
    rows = run([variant("mcpcore legacy", "mcpcore"), variant("sdk legacy", "sdk")], "sdk legacy")
    sequential, swept = rows
    assert sequential.values["sdk"] not in (None, NOT_AVAILABLE)
    assert swept.values["mcpcore"] not in (None, NOT_AVAILABLE)
    assert swept.values["sdk"] is NOT_AVAILABLE
    assert swept.ratios["mcpcore/sdk"] is NOT_AVAILABLE
    assert any(
        "sdk: n/a, its client failed" in note and "ReadError" in note for note in swept.notes
    )


def test_mcpcore_failing_still_fails_the_layer() -> None:
    with pytest.raises(BenchmarkError, match="mcpcore legacy: the client failed"):
        run([variant("mcpcore legacy", "mcpcore"), variant("sdk legacy", "sdk")], "mcpcore legacy")
