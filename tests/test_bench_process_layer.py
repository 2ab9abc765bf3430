"""The process layers' harness: a comparison that falls over costs its own columns only,
and a row measured with busy polling on sits next to its row with it off."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

import pytest

from bench._layer import Context
from bench._optional import Availability
from bench._process_layer import ProcessVariant, Workload, measure_rows
from bench._results import NOT_AVAILABLE
from mcpcore_cli.bench.timing import Settings
from mcpcore_cli.bench.verify import BenchmarkError

ANSWER = "ok"
#: The batch (the sweep's second point) at which the failing client breaks.
BREAKS_AT = 8


class FakeThread:
    """A client thread whose batches answer at once, until the test breaks it."""

    #: Whether the next batches fail, by variant name (set by `run`).
    broken: ClassVar[dict[str, bool]] = {}
    #: Each batch run: the variant's name and its callers.
    batches: ClassVar[list[tuple[str, int]]] = []

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
        results = asyncio.run(self.batch(None))  # (the batch records the latencies)
        FakeThread.batches.append((self.name, len(results)))
        return results

    def close(self) -> None:
        pass


def variant(name: str, column: str, busy_poll: float | None = 0.0) -> ProcessVariant:
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
        busy_poll=busy_poll,
    )


def measure(
    context: Context, workloads: list[Workload], variants: list[ProcessVariant]
) -> list[Any]:
    """`measure_rows` on the fake layer, every row named by its workload and era."""
    return measure_rows(
        context,
        layer="fake",
        label="tools/call",
        workloads=workloads,
        variants=variants,
        expected_text=ANSWER,
        row_name=lambda key, era: f"{key}, {era}",
        sizes=lambda era: 1,
        notes=lambda workload, era: [],
        unavailable=(),
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
        return measure(context, workloads, variants)


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


def test_a_row_with_busy_polling_on_sits_next_to_its_row_with_it_off() -> None:
    budget = 0.000321
    context = Context(
        Settings(repeat=2, target_seconds=0.001, quick=True), Availability(), busy_poll=budget
    )
    workloads = [
        Workload("sequential", 1, (1, 1), (), with_busy_poll=True),
        Workload("8 in flight", 8, (1, 1), ()),
    ]
    variants = [
        variant("mcpcore off", "mcpcore"),
        variant("sdk", "sdk", busy_poll=None),  # (it can't busy-poll: in every row)
        variant("ceiling off", "ceiling"),
        variant("mcpcore on", "mcpcore", busy_poll=budget),
        variant("ceiling on", "ceiling", busy_poll=budget),
    ]
    FakeThread.batches.clear()
    rows = measure(context, workloads, variants)
    assert [row.name for row in rows] == [
        "sequential, legacy",
        "sequential, busy poll 321 µs, legacy",
        "8 in flight, legacy",
    ]
    assert [row.parameters["busy_poll_seconds"] for row in rows] == [0.0, budget, 0.0]
    off, on, swept = rows
    for row in rows:
        assert set(row.values) == {"mcpcore", "sdk", "ceiling"}, row.name
    # The SDK was measured once, for both rows; the rows say who spins and who can't.
    assert on.samples["sdk"] == off.samples["sdk"]
    assert [note for note in on.notes if "busy polling on" in note] == [
        "busy polling on: mcpcore and ceiling, client and server alike, spin up to 321 µs "
        "on the descriptors their peer writes to before their event loop sleeps "
        "(transports.BusyPolling)"
    ]
    assert any(note.startswith("sdk: does not busy-poll") for note in on.notes)
    assert not any("busy" in note for note in off.notes + swept.notes)
    # The busy-polling variants ran one call at a time only, never in the sweep.
    swept_by = {name for name, callers in FakeThread.batches if callers == 8}
    assert swept_by == {"mcpcore off", "sdk", "ceiling off"}
    assert {name for name, _ in FakeThread.batches} == {variant.name for variant in variants}
