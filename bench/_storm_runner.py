"""One-shot workloads against server processes: each variant's client in its own loop.

A storm is one long operation (10,000 notifications, 10,000 calls), not a loop to
calibrate, so `bench._harness.measure` does not fit. Instead, per workload:

1. every variant's client starts in an event loop of its own thread
   (`bench._stdio_runner`), spawning its server, before anything is timed;
2. each variant runs one storm untimed (the warm-up), checked;
3. then `Settings.repeat` repetitions (at most `MAX_REPETITIONS`), each running every
   variant's storm once in an order that rotates from one repetition to the next, each
   storm checked;
4. every client is closed, and any server process still alive is killed.

With ``--quick`` (a smoke run: its numbers mean nothing) there is no warm-up and a
single repetition, since one storm of the official SDK's lasts seconds.

A storm times itself (``perf_counter_ns`` inside its loop) and reports what it saw in
a `StormOutcome`. An mcpcore storm that fails its checks stops the benchmark; another
variant that fails (or errs, or runs out of time) is reported unavailable, with why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from bench._busy_poll import OFF
from bench._layer import Context
from bench._results import MCPCORE
from bench._stdio_runner import LoopThread, child_processes, kill_processes
from bench._verify import BenchmarkError

__all__ = ["MAX_REPETITIONS", "StormOutcome", "StormVariant", "run_storms"]

#: Repetitions at most, whatever ``--repeat`` says: one storm of the official SDK's
#: lasts up to half a minute (10,000 calls, half cancelled), and a storm is thousands
#: of operations already, so three medians hold as well as seven.
MAX_REPETITIONS = 3


@dataclass
class StormOutcome:
    """What one storm did.

    Attributes:
        elapsed_ns: How long it took, measured inside the client's loop.
        facts: Counts worth reporting (callbacks run, calls cancelled, late answers...).
        problem: Why the storm's result is wrong, or None when every check held.
    """

    elapsed_ns: int
    facts: dict[str, int] = field(default_factory=dict)
    problem: str | None = None


@dataclass
class StormVariant:
    """One column: how to open its client (and server), and one storm on it.

    Attributes:
        column: The table column (``"mcpcore"``, ``"sdk"``, ``"ceiling"``).
        thread: The kind of loop the client lives in.
        opener: Opens the client inside that loop.
        storm: One storm on the opened client; checks its own results.
        busy_poll: Seconds its client and server spin before their event loop sleeps
            (`bench._busy_poll`; 0: off), given by its opener to both; None for a
            variant that can't (the official SDK).
    """

    column: str
    thread: type[LoopThread[Any]]
    opener: Callable[[], AbstractAsyncContextManager[Any]]
    storm: Callable[[Any], Awaitable[StormOutcome]]
    busy_poll: float | None = OFF


@dataclass
class StormRuns:
    """Every variant's timed storms, and the variants that could not run (with why)."""

    outcomes: dict[str, list[StormOutcome]]
    failed: dict[str, str]


def run_storms(context: Context, layer: str, variants: list[StormVariant]) -> StormRuns:
    """Start every variant, warm each up, then run ``repeat`` interleaved storms each.

    Raises:
        BenchmarkError: mcpcore's storm failed or could not run.
    """
    before = child_processes()
    threads: dict[str, LoopThread[Any]] = {}
    failed: dict[str, str] = {}
    outcomes: dict[str, list[StormOutcome]] = {variant.column: [] for variant in variants}

    def attempt(column: str) -> StormOutcome | None:
        try:
            outcome: StormOutcome = threads[column].operation()
        except Exception as exc:  # a failed storm: reported, or fatal for mcpcore
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if outcome.problem is None:
                return outcome
            problem = outcome.problem
        if column == MCPCORE:
            raise BenchmarkError(f"{layer}: mcpcore: {problem}")
        failed[column] = problem
        context.log(f"{layer}: {column} left out: {problem}")
        return None

    try:
        for variant in variants:
            thread = threads[variant.column] = variant.thread(
                variant.column, variant.opener, variant.storm
            )
            thread.start()
        for column, thread in threads.items():
            try:
                thread.wait_ready()
            except BenchmarkError as exc:
                if column == MCPCORE:
                    raise
                failed[column] = str(exc)
        quick = context.settings.quick
        for column in threads:
            if column not in failed and not quick:
                attempt(column)  # the warm-up, checked
        columns = list(threads)
        repetitions = 1 if quick else min(context.settings.repeat, MAX_REPETITIONS)
        for repetition in range(repetitions):
            shift = repetition % len(columns)
            for column in (*columns[shift:], *columns[:shift]):
                if column not in failed and (outcome := attempt(column)) is not None:
                    outcomes[column].append(outcome)
    finally:
        for thread in threads.values():
            thread.close()
        stragglers = kill_processes(child_processes() - before)
        if stragglers:
            context.log(f"{layer}: killed server processes left running: {stragglers}")
    for column in failed:
        outcomes.pop(column, None)
    return StormRuns(outcomes, failed)
