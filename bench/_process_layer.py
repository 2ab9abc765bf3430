"""Layers whose clients talk to server *processes*: stdio, HTTP, WebSocket.

Every such layer measures the same way; only the variants differ. A variant is a
client type (mcpcore's, the official SDK's, the raw ceiling's) in one era, living in an
event loop of its own thread (`bench._stdio_runner`), connected to a server process it
started itself. Two kinds of workload:

* sequential: one call at a time, timed in batches, each call's latency recorded
  (reported as p50/p99);
* the concurrency sweep (`SWEEP`: 8, 64, 256 in flight; `QUICK_SWEEP` with
  ``--quick``): that many callers (tasks) at once on the one client, each making calls
  in a row. mcpcore's callers, one or many, are the workers of ``mcpcore bench run``'s
  closed loop (`mcpcore_cli.bench.engine`), every answer checked: one load generator
  for both.

Every row runs under one IO policy (`bench._busy_poll`): busy polling off, or on with
one budget for mcpcore's client and server and the ceiling's alike. A variant is built
for one budget (`ProcessVariant.busy_poll`; the official SDK, which can't spin, for
none: it joins every row of its era, measured once). Every workload is measured with
busy polling off; a workload `Workload.with_busy_poll` (one call at a time) also with
it on, at `Context.busy_poll`: one more row per era, side by side with the first,
named with its budget (`rows`).

Every variant's client and server start once for all the workloads of a layer (of a
reply mode, for HTTP), before anything is timed; per workload, every variant's answers
are checked outside the timing (the warm-up batch) and the variants are measured
interleaved; every server is stopped at the end (killed if it outlives its client).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from bench._busy_poll import OFF, busy_poll_words
from bench._layer import Context
from bench._results import MCPCORE, Target, WorkloadResult, from_samples
from bench._stdio_runner import LoopThread, TrioThread, child_processes, kill_processes
from mcpcore_cli.bench.timing import Samples, Settings, Variant, measure
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "QUICK_SWEEP",
    "SWEEP",
    "SWEEP_BATCH",
    "ProcessVariant",
    "Workload",
    "budgets",
    "content_text",
    "measure_rows",
    "rows",
    "selected",
    "sweep",
    "variant_name",
]


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
        call_concurrent: The call made when many are in flight, if not `call` (the raw
            ceilings pipeline then; one at a time they read their own answer).
        busy_poll: Seconds its client and its server spin before their event loop
            sleeps (`bench._busy_poll`: 0, off); None for a variant that can't (the
            official SDK), which joins every row of its era. Its opener must give
            exactly this budget to both sides: the row's policy is read from here.
    """

    name: str
    column: str
    era: str
    thread: type[LoopThread[Any]]
    opener: Callable[[], AbstractAsyncContextManager[Any]]
    call: Callable[[Any], Awaitable[Any]]
    text_of: Callable[[Any], str]
    gather: Callable[[int, Callable[[], Any]], Awaitable[list[Any]]]
    call_concurrent: Callable[[Any], Awaitable[Any]] | None = None
    busy_poll: float | None = OFF
    latencies: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Workload:
    """One call at a time (``in_flight`` 1), or that many callers at once.

    Attributes:
        key: Its name in the row (``"sequential"``, ``"64 in flight"``).
        in_flight: Concurrent callers.
        calls: Calls each caller makes per timed batch: full run, and ``--quick``.
        targets: The issue's goals for it (in every row of it).
        quick: Whether ``--quick`` runs it (the quick sweep is shorter).
        with_busy_poll: Whether it is also measured with busy polling on (a row per
            era more); always measured with it off.
    """

    key: str
    in_flight: int
    calls: tuple[int, int]
    targets: tuple[Target, ...]
    quick: bool = True
    with_busy_poll: bool = False

    def budgets(self, context: Context) -> tuple[float, ...]:
        """The busy-poll budgets it is measured with: off, then on if it is."""
        return budgets(context) if self.with_busy_poll else (OFF,)

    def calls_per_task(self, settings: Settings) -> int:
        """Calls each caller makes per timed batch."""
        full, quick = self.calls
        return quick if settings.quick else full

    def calls_per_batch(self, settings: Settings) -> int:
        """Calls per timed batch."""
        return self.in_flight * self.calls_per_task(settings)


#: The concurrency sweep past one call at a time: callers in flight at once, all on the
#: one client (the issue's 1, 8, 64, 256; 1 is the ``sequential`` workload).
SWEEP: Final = (8, 64, 256)
#: The points ``--quick`` runs (with `sequential`): one, the cheapest, so that the whole
#: suite stays under a minute (64 callers cost a --quick run ~15 s more).
QUICK_SWEEP: Final = (8,)
#: Calls per timed batch at each point of the sweep (full run), the same at every point
#: so that the points compare: at 256 in flight each caller makes 2 calls, so starting
#: the callers and draining the last calls are part of what is measured (a burst, not
#: a steady state). More would be steadier, but the SDK's side makes ~300 calls per
#: second here and runs ~10 batches per point and era. ``--quick``: one call per caller.
SWEEP_BATCH: Final = 512


def sweep(targets: Mapping[int, tuple[Target, ...]] = MappingProxyType({})) -> tuple[Workload, ...]:
    """The sweep's workloads (8, 64, 256 in flight), with the goals at each point."""
    return tuple(
        Workload(
            f"{in_flight} in flight",
            in_flight,
            (max(1, SWEEP_BATCH // in_flight), 1),
            targets.get(in_flight, ()),
            quick=in_flight in QUICK_SWEEP,
        )
        for in_flight in SWEEP
    )


def budgets(context: Context) -> tuple[float, ...]:
    """The busy-poll budgets a layer builds its mcpcore and ceiling variants for."""
    return (OFF, context.busy_poll) if context.busy_poll > 0 else (OFF,)


def rows(
    variants: Sequence[ProcessVariant], row_budgets: Sequence[float]
) -> dict[tuple[str, float], list[ProcessVariant]]:
    """Each row's variants, by era and busy-poll budget (of ``row_budgets``), in table order.

    A row holds the variants built for its budget, and those that can't busy-poll
    (``busy_poll`` None); per era, the row with busy polling off comes first.
    """
    grouped = {
        (era, budget): [
            variant
            for variant in variants
            if variant.era == era and variant.busy_poll in (None, budget)
        ]
        for era in dict.fromkeys(variant.era for variant in variants)
        for budget in row_budgets
    }
    # (A budget no variant of the era was built for would be a row of the SDK alone.)
    return {
        key: row
        for key, row in grouped.items()
        if any(variant.busy_poll == key[1] for variant in row)
    }


def variant_name(column: str, era: str, budget: float | None = OFF) -> str:
    """A variant's unique name: ``"ceiling legacy"``, ``"ceiling legacy, busy poll 500 µs"``."""
    policy = busy_poll_words(budget or OFF)
    return f"{column} {era}, {policy}" if policy else f"{column} {era}"


def selected(workloads: Sequence[Workload], settings: Settings) -> list[Workload]:
    """The workloads this run measures (``--quick`` skips some points of the sweep)."""
    return [workload for workload in workloads if workload.quick or not settings.quick]


def content_text(result: Any) -> str:
    """The text of a typed result's one text block (or a description of an error)."""
    if getattr(result, "is_error", False):
        return f"an error: {result!r}"
    [block] = result.content
    return str(block.text)


@dataclass
class _Shape:
    """The batch the clients run now: how many callers, how many calls each."""

    callers: int = 1
    calls: int = 1


def _batch(
    variant: ProcessVariant, shape: _Shape, expected_text: str
) -> Callable[[Any], Awaitable[Any]]:
    """One timed batch of ``variant``, in the shape of the workload being measured.

    One caller: a loop of calls, each call's latency recorded. More: that many
    callers at once (`ProcessVariant.gather`), each making its calls in a row. For
    mcpcore (in a trio loop), both through the engine of ``mcpcore bench run``
    (`_engine_batch`).
    """
    call, gather = variant.call, variant.gather
    call_concurrent = variant.call_concurrent or call
    latencies, clock = variant.latencies, time.perf_counter_ns
    if variant.column == MCPCORE and issubclass(variant.thread, TrioThread):
        return _engine_batch(variant, shape, expected_text)

    async def batch(client: Any) -> list[Any]:
        calls = shape.calls
        if shape.callers == 1:
            result = None
            for _ in range(calls):
                start = clock()
                result = await call(client)
                latencies.append(clock() - start)
            return [result]

        async def caller() -> Any:
            result = None
            for _ in range(calls):
                result = await call_concurrent(client)
            return result

        return await gather(shape.callers, caller)

    return batch


def _engine_batch(
    variant: ProcessVariant, shape: _Shape, expected_text: str
) -> Callable[[Any], Awaitable[list[Any]]]:
    """A batch of mcpcore's variants: ``mcpcore bench run``'s closed loop.

    ``shape.callers`` workers with one call in flight each share ``callers x calls``
    calls (`mcpcore_cli.bench.engine.run_level`), so one load generator serves the
    installed command and this suite (issue 20). One caller's calls are each timed
    into the variant's latencies (the layer's p50/p99). Every answer is checked here
    (the tool's text), not only the warm-up's: a wrong one fails the layer. No results
    are returned: there is nothing left for the warm-up check to read.
    """
    from mcpcore_cli.bench.engine import Level, Load, run_level

    one_at_a_time = shape.callers == 1
    call = variant.call if one_at_a_time else (variant.call_concurrent or variant.call)
    text_of, latencies, clock = variant.text_of, variant.latencies, time.perf_counter_ns

    async def batch(client: Any) -> list[Any]:
        async def judged() -> str | None:
            start = clock()
            text = text_of(await call(client))
            if one_at_a_time:
                latencies.append(clock() - start)
            return None if text == expected_text else f"answered {text[:80]!r}"

        level = Level(shape.callers, [judged])
        done = await run_level(level, Load(requests=shape.callers * shape.calls))
        if done.error_count:
            raise BenchmarkError(f"{variant.name}: {dict(done.errors)}")
        return []

    return batch


def _measure(
    context: Context,
    *,
    layer: str,
    workloads: Sequence[Workload],
    variants: list[ProcessVariant],
    expected_text: str,
    describe: Callable[[Workload], str],
    failed: dict[str, str],
) -> tuple[dict[str, dict[str, Samples]], dict[str, dict[tuple[str, float], str]]]:
    """Start every variant's client and server once, then measure each workload on them.

    Per workload: the answers of every variant in its rows are checked (the warm-up
    batch), then those variants are measured interleaved (with busy polling off and on
    alike). Samples by workload key, then variant name; the latency notes of the
    one-call-at-a-time workloads, by workload key, then row (era and budget).

    A comparison (not mcpcore) whose client fails is left out from that workload on,
    its reason put in ``failed`` by variant name, so that the official SDK falling over
    at some load costs its own columns, not the layer. mcpcore failing fails the layer.
    """
    shape = _Shape()
    before = child_processes()
    threads: dict[str, LoopThread[Any]] = {}
    measured: dict[str, dict[str, Samples]] = {}
    notes: dict[str, dict[tuple[str, float], str]] = {}
    try:
        for variant in variants:
            thread = threads[variant.name] = variant.thread(
                variant.name, variant.opener, _batch(variant, shape, expected_text)
            )
            thread.start()  # every server starts at once: start-up is not measured
        for thread in threads.values():
            thread.wait_ready()
        for workload in workloads:
            context.log(describe(workload))
            shape.callers = workload.in_flight
            shape.calls = workload.calls_per_task(context.settings)
            grouped = rows(variants, workload.budgets(context))
            members = {variant.name: variant for row in grouped.values() for variant in row}
            while True:
                running = [variant for variant in members.values() if variant.name not in failed]
                try:
                    timed = [_warmed_up(variant, threads, expected_text) for variant in running]
                    measured[workload.key] = measure(timed, context.settings)
                    break
                except _ComparisonFailedError as exc:
                    failed[exc.variant] = exc.reason
                    context.log(f"{layer}: {exc.variant} left out from here on: {exc.reason}")
            if workload.in_flight == 1:  # the next workload's warm-up clears them
                notes[workload.key] = {
                    key: _latency_note([variant for variant in row if variant.name not in failed])
                    for key, row in grouped.items()
                }
        return measured, notes
    finally:
        for thread in threads.values():
            thread.close()
        stragglers = kill_processes(child_processes() - before)
        if stragglers:
            context.log(f"{layer}: killed server processes left running: {stragglers}")


class _ComparisonFailedError(Exception):
    """A comparison's client failed (see `_measure`)."""

    def __init__(self, variant: str, reason: str) -> None:
        super().__init__(variant, reason)
        self.variant = variant
        self.reason = reason


def _warmed_up(
    variant: ProcessVariant, threads: dict[str, LoopThread[Any]], expected_text: str
) -> Variant:
    """``variant`` after its warm-up batch, its answers checked, ready to be timed."""
    operation = threads[variant.name].operation
    if variant.column != MCPCORE:
        operation = _failing_alone(variant.name, operation)
    for result in operation():  # the warm-up batch, checked
        text = variant.text_of(result)
        if text != expected_text:
            raise BenchmarkError(f"{variant.name}: the tool did not answer: {text!r}")
    variant.latencies.clear()
    return Variant(variant.name, operation)


def _failing_alone(name: str, operation: Callable[[], Any]) -> Callable[[], Any]:
    """``operation``, whose failure is the comparison's own, not the layer's."""

    def alone() -> Any:
        try:
            return operation()
        except Exception as exc:
            raise _ComparisonFailedError(name, str(exc) or repr(exc)) from exc

    return alone


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
    label: str,
    workloads: Sequence[Workload],
    variants: list[ProcessVariant],
    expected_text: str,
    row_name: Callable[[str, str], str],
    sizes: Callable[[str], int],
    notes: Callable[[Workload, str], list[str]],
    unavailable: tuple[str, ...],
    parameters: Mapping[str, str | int] = MappingProxyType({}),
) -> list[WorkloadResult]:
    """Measure ``workloads`` over ``variants``, one client each for all of them.

    One row per workload, era and busy-poll budget (`rows`), in round trips per second.
    The workloads share the variants' clients and servers (started once), in order: one
    call at a time first, then the points of the sweep (`ProcessVariant.call_concurrent`
    from the first concurrent batch on).

    Args:
        context: The run's settings and available comparisons.
        layer: The layer's name.
        label: What is measured, for the progress display (``"tools/call"``).
        workloads: What to measure, in order.
        variants: Every column of every era, for every budget of `budgets`.
        expected_text: What every variant's tool must answer.
        row_name: The row's name for the workload's words (its key, then the busy-poll
            budget when on: ``"sequential, busy poll 500 µs"``) and an era.
        sizes: The bytes one call exchanges in an era (mcpcore's request + result).
        notes: The row's notes for a workload and an era (the busy-poll policy when on,
            and a latency note when sequential, are added).
        unavailable: Columns that belong in the row but could not run.
        parameters: What every row measured, for programs (``transport``...); the
            workload's ``in_flight``, the row's ``era`` and ``busy_poll_seconds`` are
            added.
    """
    settings = context.settings

    def describe(workload: Workload) -> str:
        calls = workload.calls_per_batch(settings)
        return f"{layer}: {label}, {workload.key} ({calls} calls per timed batch)"

    failed: dict[str, str] = {}
    measured, latency_notes = _measure(
        context,
        layer=layer,
        workloads=workloads,
        variants=variants,
        expected_text=expected_text,
        describe=describe,
        failed=failed,
    )
    results = []
    for workload in workloads:
        for (era, budget), row in rows(variants, workload.budgets(context)).items():
            measured_row = _Row(workload, era, budget, row, measured[workload.key])
            row_notes = [
                *notes(workload, era),
                *measured_row.policy_notes(),
                *measured_row.failure_notes(failed),
            ]
            if workload.key in latency_notes:
                row_notes.append(latency_notes[workload.key][era, budget])
            results.append(
                from_samples(
                    layer,
                    row_name(measured_row.words(), era),
                    size_bytes=sizes(era),
                    unit="round trips/s",
                    measured=measured_row.per_call(workload.calls_per_batch(settings)),
                    unavailable=unavailable + measured_row.gone(),
                    targets=workload.targets,
                    notes=tuple(row_notes),
                    parameters={
                        **parameters,
                        "in_flight": workload.in_flight,
                        "era": era,
                        "busy_poll_seconds": budget,
                    },
                )
            )
    return results


@dataclass(frozen=True)
class _Row:
    """One row's variants and their samples (see `measure_rows`)."""

    workload: Workload
    era: str
    budget: float
    variants: list[ProcessVariant]
    samples: dict[str, Samples]

    def words(self) -> str:
        """The workload in the row's name, with its busy-poll budget when on."""
        policy = busy_poll_words(self.budget)
        return f"{self.workload.key}, {policy}" if policy else self.workload.key

    def per_call(self, calls: int) -> dict[str, Samples]:
        """Each measured column's samples, in calls (not batches) per second."""
        return {
            variant.column: Samples(
                tuple(rate * calls for rate in self.samples[variant.name].rates),
                self.samples[variant.name].iterations,
            )
            for variant in self.variants
            if variant.name in self.samples
        }

    def gone(self) -> tuple[str, ...]:
        """The columns whose client failed at or before this workload."""
        return tuple(v.column for v in self.variants if v.name not in self.samples)

    def failure_notes(self, failed: Mapping[str, str]) -> list[str]:
        """Why each column that is gone is."""
        return [
            f"{variant.column}: n/a, its client failed at or before this point: "
            f"{failed[variant.name]}"
            for variant in self.variants
            if variant.name not in self.samples
        ]

    def policy_notes(self) -> list[str]:
        """What a row with busy polling on must say: who spins, and who can't."""
        if self.budget <= 0:
            return []
        spinning = [v.column for v in self.variants if v.busy_poll is not None]
        sleeping = [v.column for v in self.variants if v.busy_poll is None]
        notes = [
            f"busy polling on: {' and '.join(spinning)}, client and server alike, spin up "
            f"to {self.budget * 1e6:g} µs on the descriptors their peer writes to before "
            "their event loop sleeps (transports.BusyPolling)"
        ]
        notes += [
            f"{column}: does not busy-poll (it has no such option): the same samples as "
            "its row with busy polling off, measured in the same repetitions"
            for column in sleeping
        ]
        return notes
