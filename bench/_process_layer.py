"""Layers whose clients talk to server *processes*: stdio, HTTP, WebSocket.

Every such layer measures the same way; only the variants differ. A variant is a
client type (mcpcore's, the official SDK's, the raw ceiling's) in one era, living in an
event loop of its own thread (`bench._stdio_runner`), connected to a server process it
started itself. Two kinds of workload:

* sequential: one call at a time, timed in batches, each call's latency recorded
  (reported as p50/p99);
* concurrent: ``in_flight`` callers (tasks) at once, each making calls in a row.

Per workload, every variant's client and server start before anything is timed, every
variant's answers are checked once outside the timing (the warm-up batch), the
variants are measured interleaved, and every server is stopped at the end (killed if
it outlives its client).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from bench._harness import Samples, Settings, Variant, measure
from bench._layer import Context
from bench._results import Target, WorkloadResult, from_samples
from bench._stdio_runner import LoopThread, child_processes, kill_processes
from bench._verify import BenchmarkError

__all__ = ["ProcessVariant", "Workload", "content_text", "measure_rows"]


@dataclass
class ProcessVariant:
    """One column of one era: how to open its client, make a call, read the answer.

    Attributes:
        name: Unique within the workload (``"mcpcore legacy"``).
        column: The table column (``"mcpcore"``, ``"sdk"``, ``"ceiling"``).
        era: ``"legacy"`` or ``"modern"``.
        thread: The kind of loop the client lives in.
        opener: Opens the client (and its server) inside that loop.
        call: One call on the opened client; its answer.
        text_of: The tool's text in an answer (checked once, outside the timing).
        gather: Runs N copies of a coroutine function at once, in that loop.
    """

    name: str
    column: str
    era: str
    thread: type[LoopThread[Any]]
    opener: Callable[[], AbstractAsyncContextManager[Any]]
    call: Callable[[Any], Awaitable[Any]]
    text_of: Callable[[Any], str]
    gather: Callable[[int, Callable[[], Any]], Awaitable[list[Any]]]
    latencies: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Workload:
    """One call at a time (``in_flight`` 1), or that many callers at once.

    Attributes:
        key: Its name in the row (``"sequential"``, ``"100 in flight"``).
        in_flight: Concurrent callers.
        calls: Calls each caller makes per timed batch: full run, and ``--quick``.
        targets: The issue's goals for it.
    """

    key: str
    in_flight: int
    calls: tuple[int, int]
    targets: tuple[Target, ...]

    def calls_per_task(self, settings: Settings) -> int:
        """Calls each caller makes per timed batch."""
        full, quick = self.calls
        return quick if settings.quick else full

    def calls_per_batch(self, settings: Settings) -> int:
        """Calls per timed batch."""
        return self.in_flight * self.calls_per_task(settings)


def content_text(result: Any) -> str:
    """The text of a typed result's one text block (or a description of an error)."""
    if getattr(result, "is_error", False):
        return f"an error: {result!r}"
    [block] = result.content
    return str(block.text)


def _sequential_batch(variant: ProcessVariant, calls: int) -> Callable[[Any], Awaitable[Any]]:
    call, latencies, clock = variant.call, variant.latencies, time.perf_counter_ns

    async def batch(client: Any) -> list[Any]:
        result = None
        for _ in range(calls):
            start = clock()
            result = await call(client)
            latencies.append(clock() - start)
        return [result]

    return batch


def _concurrent_batch(
    variant: ProcessVariant, callers: int, calls: int
) -> Callable[[Any], Awaitable[Any]]:
    call, gather = variant.call, variant.gather

    async def batch(client: Any) -> list[Any]:
        async def caller() -> Any:
            result = None
            for _ in range(calls):
                result = await call(client)
            return result

        return await gather(callers, caller)

    return batch


def _measure(
    context: Context,
    layer: str,
    workload: Workload,
    variants: list[ProcessVariant],
    expected_text: str,
) -> dict[str, Samples]:
    """Start every variant's client and server, check them, measure them interleaved."""
    sequential = workload.in_flight == 1
    calls = workload.calls_per_task(context.settings)
    before = child_processes()
    threads: dict[str, LoopThread[Any]] = {}
    try:
        for variant in variants:
            batch = (
                _sequential_batch(variant, calls)
                if sequential
                else _concurrent_batch(variant, workload.in_flight, calls)
            )
            thread = threads[variant.name] = variant.thread(variant.name, variant.opener, batch)
            thread.start()  # every server starts at once: start-up is not measured
        for thread in threads.values():
            thread.wait_ready()
        timed = []
        for variant in variants:
            thread = threads[variant.name]
            for result in thread.operation():  # the warm-up batch, checked
                text = variant.text_of(result)
                if text != expected_text:
                    raise BenchmarkError(f"{variant.name}: the tool did not answer: {text!r}")
            variant.latencies.clear()
            timed.append(Variant(variant.name, thread.operation))
        return measure(timed, context.settings)
    finally:
        for thread in threads.values():
            thread.close()
        stragglers = kill_processes(child_processes() - before)
        if stragglers:
            context.log(f"{layer}: killed server processes left running: {stragglers}")


def _percentile(values: list[int], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] / 1000


def _latency_note(variants: list[ProcessVariant]) -> str:
    parts = [
        f"{variant.column} {_percentile(variant.latencies, 0.5):,.0f}"
        f"/{_percentile(variant.latencies, 0.99):,.0f}"
        for variant in variants
    ]
    count = min(len(variant.latencies) for variant in variants)
    return f"latency p50/p99 in µs: {', '.join(parts)} (at least {count:,} calls each)"


def measure_rows(
    context: Context,
    *,
    layer: str,
    workload: Workload,
    variants: list[ProcessVariant],
    expected_text: str,
    row_name: Callable[[str], str],
    sizes: Callable[[str], int],
    notes: Callable[[str], list[str]],
    unavailable: tuple[str, ...],
) -> list[WorkloadResult]:
    """Measure one workload over ``variants``; one row per era, in round trips per second.

    Args:
        context: The run's settings and available comparisons.
        layer: The layer's name.
        workload: What to measure.
        variants: Every column of every era.
        expected_text: What every variant's tool must answer.
        row_name: The row's name for an era.
        sizes: The bytes one call exchanges in an era (mcpcore's request + result).
        notes: The row's notes for an era (a latency note is added when sequential).
        unavailable: Columns that belong in the row but could not run.
    """
    calls = workload.calls_per_batch(context.settings)
    measured = _measure(context, layer, workload, variants, expected_text)
    rows = []
    for era in dict.fromkeys(variant.era for variant in variants):
        mine = [variant for variant in variants if variant.era == era]
        per_call = {
            variant.column: Samples(
                tuple(rate * calls for rate in measured[variant.name].rates),
                measured[variant.name].iterations,
            )
            for variant in mine
        }
        row_notes = notes(era)
        if workload.in_flight == 1:
            row_notes.append(_latency_note(mine))
        rows.append(
            from_samples(
                layer,
                row_name(era),
                size_bytes=sizes(era),
                unit="round trips/s",
                measured=per_call,
                unavailable=unavailable,
                targets=workload.targets,
                notes=tuple(row_notes),
            )
        )
    return rows
