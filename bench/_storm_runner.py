"""One-shot workloads against server processes: each variant's client in its own loop.

A storm is one long operation (10,000 notifications, 10,000 calls), not a loop to
calibrate, so `mcpcore_cli.bench.timing.measure` does not fit. Instead, per workload:

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
from mcpcore_cli.bench.verify import BenchmarkError

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
    session = _StormSession(context, layer, variants)
    try:
        session.start()
        quick = context.settings.quick
        if not quick:
            session.warm_up()
        session.repeat(1 if quick else min(context.settings.repeat, MAX_REPETITIONS))
    finally:
        session.close()
        stragglers = kill_processes(child_processes() - before)
        if stragglers:
            context.log(f"{layer}: killed server processes left running: {stragglers}")
    return session.runs()


class _StormSession:
    """The variants' loop threads of one workload, their storms so far, and who failed."""

    def __init__(self, context: Context, layer: str, variants: list[StormVariant]) -> None:
        self._context = context
        self._layer = layer
        self._variants = variants
        self._threads: dict[str, LoopThread[Any]] = {}
        self._failed: dict[str, str] = {}
        self._outcomes: dict[str, list[StormOutcome]] = {variant.column: [] for variant in variants}

    def start(self) -> None:
        """Start every variant's loop thread, then wait until each client is open.

        A variant other than mcpcore that can't open is left out, with why.
        """
        for variant in self._variants:
            thread = variant.thread(variant.column, variant.opener, variant.storm)
            self._threads[variant.column] = thread
            thread.start()
        for column, thread in self._threads.items():
            try:
                thread.wait_ready()
            except BenchmarkError as exc:
                if column == MCPCORE:
                    raise
                self._failed[column] = str(exc)

    def warm_up(self) -> None:
        """Run one untimed storm per variant still in, checked."""
        for column in self._threads:
            if column not in self._failed:
                self._attempt(column)

    def repeat(self, repetitions: int) -> None:
        """Run every variant's storm ``repetitions`` times, the order rotating each time."""
        columns = list(self._threads)
        for repetition in range(repetitions):
            shift = repetition % len(columns)
            for column in (*columns[shift:], *columns[:shift]):
                if column not in self._failed and (outcome := self._attempt(column)) is not None:
                    self._outcomes[column].append(outcome)

    def close(self) -> None:
        """Close every client (and so its server)."""
        for thread in self._threads.values():
            thread.close()

    def runs(self) -> StormRuns:
        """The timed storms of the variants that never failed, and why the others did."""
        outcomes = {
            column: storms
            for column, storms in self._outcomes.items()
            if column not in self._failed
        }
        return StormRuns(outcomes, dict(self._failed))

    def _attempt(self, column: str) -> StormOutcome | None:
        """One storm of ``column``'s, or None when it failed (then it is left out)."""
        try:
            outcome: StormOutcome = self._threads[column].operation()
        except Exception as exc:  # a failed storm: reported, or fatal for mcpcore
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if outcome.problem is None:
                return outcome
            problem = outcome.problem
        if column == MCPCORE:
            raise BenchmarkError(f"{self._layer}: mcpcore: {problem}")
        self._failed[column] = problem
        self._context.log(f"{self._layer}: {column} left out: {problem}")
        return None
