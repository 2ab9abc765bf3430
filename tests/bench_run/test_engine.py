"""The engine's loops on a virtual clock: counts, latencies from the intended start, bounds.

`trio.testing.MockClock` with ``autojump_threshold=0`` jumps to the next deadline as
soon as every task sleeps, so the latencies here are exact, not measured.
"""

from __future__ import annotations

import io
from functools import partial

import pytest
import trio
import trio.testing

from mcpcore_cli.bench import engine
from mcpcore_cli.bench.engine import OVERLOADED, Level, LevelResult, Load, run_level
from mcpcore_cli.bench.latencies import Latencies
from mcpcore_cli.bench.operations import Call
from mcpcore_cli.bench.progress import LONG_RUN, LiveProgress, wanted


def run_on_virtual_clock(level: Level, load: Load) -> LevelResult:
    clock = trio.testing.MockClock(autojump_threshold=0)
    return trio.run(partial(run_level, level, load), clock=clock)


def one_connection(service: float, fail_every: int = 0) -> Call:
    """A server with one connection: each request waits for the previous, then ``service`` s."""
    lock = trio.Lock()
    sent = 0

    async def call() -> str | None:
        nonlocal sent
        async with lock:
            await trio.sleep(service)
            sent += 1
            return "boom" if fail_every and sent % fail_every == 0 else None

    return call


def test_the_closed_loop_sends_exactly_the_requests_asked() -> None:
    level = Level(4, [one_connection(0.001, fail_every=5)])
    result = run_on_virtual_clock(level, Load(requests=50))
    assert (result.requests, result.error_count, result.successes) == (50, 10, 40)
    assert result.errors == {"boom": 10}
    assert result.latencies.count == 40
    assert result.seconds == pytest.approx(0.050)
    assert result.rps == pytest.approx(800)


def test_the_closed_loop_by_duration_finishes_what_it_started() -> None:
    # Requests start at 0, 10, ... 90 ms (before the deadline), the last ends at 100.
    result = run_on_virtual_clock(Level(1, [one_connection(0.010)]), Load(duration=0.095))
    assert result.requests == 10
    assert result.seconds == pytest.approx(0.1)


def test_the_open_loop_measures_from_the_intended_start() -> None:
    # 1,000/s due, but the server takes 10 ms each: request i is due at i ms and answered
    # at 10(i+1) ms, so its latency is 9i + 10 ms. A closed loop would say 10 ms each.
    result = run_on_virtual_clock(Level(1, [one_connection(0.010)]), Load(requests=20, rate=1000.0))
    assert (result.requests, result.error_count, result.rate) == (20, 0, 1000.0)
    assert result.latencies.percentile_ms(0) == pytest.approx(10, rel=1e-3)
    assert result.latencies.max_ms == pytest.approx(9 * 19 + 10, rel=1e-3)


def test_the_open_loop_counts_what_it_could_not_send(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MAX_IN_FLIGHT", 3)
    result = run_on_virtual_clock(Level(1, [one_connection(0.010)]), Load(requests=10, rate=1000.0))
    assert result.requests == 10
    assert result.errors[OVERLOADED] > 0
    assert result.successes + result.errors[OVERLOADED] == 10


def test_an_open_loop_by_duration_is_due_rate_times_duration() -> None:
    assert Load(rate=200.0, duration=0.25).total() == 50
    assert Load(rate=200.0, requests=7).total() == 7
    assert Load(duration=1.0).total() is None
    result = run_on_virtual_clock(Level(2, [one_connection(0.0)]), Load(rate=200.0, duration=0.25))
    assert result.requests == 50


def test_the_warmup_is_counted_apart() -> None:
    result = run_on_virtual_clock(Level(1, [one_connection(0.010)]), Load(requests=5, warmup=0.095))
    assert (result.warmup_requests, result.requests, result.latencies.count) == (10, 5, 5)


def test_latencies_are_clamped_into_the_histogram() -> None:
    latencies = Latencies()
    assert (latencies.count, latencies.max_ms, latencies.mean_ms) == (0, 0, 0)
    latencies.record(0.0)
    latencies.record(3600.0)
    assert latencies.count == 2
    assert latencies.percentile_ms(0) == 0.001
    assert latencies.max_ms == pytest.approx(60_000, rel=1e-3)


def test_progress_shows_on_a_terminal_or_a_long_run() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(Terminal(), None)
    assert not wanted(io.StringIO(), None)
    assert not wanted(io.StringIO(), LONG_RUN - 1)
    assert wanted(io.StringIO(), LONG_RUN)


def test_progress_off_a_terminal_is_a_line_per_level() -> None:
    log = io.StringIO()

    async def level() -> None:
        with LiveProgress(log) as progress:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(progress.follow, "concurrency 8", 10.0, lambda: 3.0)
                await trio.sleep(0.01)
                nursery.cancel_scope.cancel()

    trio.run(level)
    assert log.getvalue() == (
        "mcpcore bench run: concurrency 8...\nmcpcore bench run: concurrency 8: done\n"
    )
