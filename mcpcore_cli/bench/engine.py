"""The load: a closed loop of C workers, or an open loop at a fixed rate.

**Closed loop** (wrk's): C workers, each with one request in flight, sending the next
as soon as the last is answered, spread over the run's clients (`targets`). The rate
is what the server sustains at that concurrency.

**Open loop** (wrk2's and k6's constant arrival rate): request *i* is due at
``t0 + i / rate``, whether or not earlier ones were answered, and its latency is
measured from that intended start. A closed loop that waits on a slow answer sends
nothing meanwhile, so the requests that would have queued behind it never show their
wait ("coordinated omission"); measuring from the intended start puts that wait back.
The requests in flight are bounded (`MAX_IN_FLIGHT`): one due past the bound is not sent
and counts as an error of kind `OVERLOADED`. A request starts when the event loop wakes
for it, up to a millisecond late (epoll's timeout resolution); that lateness is part of
its latency, as in wrk2, so at low rates the open loop's p50 reads ~0.5 ms above the
closed loop's.

Either way a run stops taking new requests at its count or its deadline and waits for
those in flight (each bounded by the request timeout), so every request sent is
counted, answered or not, and the server's own count matches the report's (warm-up
requests are reported apart). The rate is successes per second of the whole run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import trio

from mcpcore_cli.bench.latencies import Latencies
from mcpcore_cli.bench.operations import Call

__all__ = ["MAX_IN_FLIGHT", "OVERLOADED", "Level", "LevelResult", "Load", "run_level"]

#: Open loop: requests in flight at most. A server slower than the rate asked would
#: otherwise make the generator open tasks (and, over HTTP, wait for connections)
#: without end; 10,000 is far beyond any useful queue at the rates one Python process
#: can send (~10k/s), and a few MB of task state.
MAX_IN_FLIGHT: Final = 10_000
#: The error kind of an open-loop request not sent because `MAX_IN_FLIGHT` were.
OVERLOADED: Final = "not sent: too many in flight"


@dataclass(frozen=True, kw_only=True)
class Load:
    """How much to send at each level.

    Attributes:
        requests: Requests per level (None: for ``duration``).
        duration: Seconds per level (when ``requests`` is None).
        rate: Requests per second, open loop (None: closed loop).
        warmup: Seconds of closed-loop load before each level, not counted.
    """

    requests: int | None = None
    duration: float | None = None
    rate: float | None = None
    warmup: float = 0.0

    def total(self) -> int | None:
        """Open loop: how many requests are due in all (None in a closed loop by duration)."""
        if self.requests is not None:
            return self.requests
        if self.rate is not None and self.duration is not None:
            return max(1, round(self.rate * self.duration))
        return None


@dataclass(frozen=True)
class Level:
    """One level of a run: its concurrency and the calls its workers make.

    Attributes:
        concurrency: Workers (closed loop) or connections (open loop).
        calls: One `Call` per client; worker *i* uses ``calls[i % len(calls)]``.
    """

    concurrency: int
    calls: Sequence[Call]


@dataclass
class LevelResult:
    """What one level measured.

    Attributes:
        concurrency: Its concurrency.
        rate: The open loop's rate (None: closed loop).
        requests: Requests sent and finished (answered, failed or not sent).
        errors: The failures, by kind.
        seconds: From the first request to the last answer.
        latencies: The successes' latencies.
        warmup_requests: Requests sent during the warm-up (not in the numbers).
    """

    concurrency: int
    rate: float | None = None
    requests: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    latencies: Latencies = field(default_factory=Latencies)
    warmup_requests: int = 0

    @property
    def error_count(self) -> int:
        """All the errors."""
        return sum(self.errors.values())

    @property
    def successes(self) -> int:
        """Requests answered with a result that is not an error."""
        return self.requests - self.error_count

    @property
    def rps(self) -> float:
        """Successes per second."""
        return self.successes / self.seconds if self.seconds > 0 else 0.0


class _Budget:
    """What is left of a level: a count, or time until a deadline."""

    def __init__(self, requests: int | None, deadline: float) -> None:
        self._left = requests if requests is not None else -1
        self._deadline = deadline

    def take(self) -> bool:
        """Whether one more request may start (and, by count, one fewer is left)."""
        if self._left < 0:
            return trio.current_time() < self._deadline
        if self._left == 0:
            return False
        self._left -= 1
        return True


async def run_level(
    level: Level, load: Load, on_answer: Callable[[], None] = lambda: None
) -> LevelResult:
    """Warm up, then run one level; ``on_answer`` is called as each request finishes."""
    result = LevelResult(level.concurrency, rate=load.rate)
    if load.warmup > 0:
        warmup = LevelResult(level.concurrency)
        await _closed_loop(level, _Budget(None, trio.current_time() + load.warmup), warmup)
        result.warmup_requests = warmup.requests
    start = trio.current_time()
    if load.rate is None:
        deadline = start + (load.duration or 0.0)
        await _closed_loop(level, _Budget(load.requests, deadline), result, on_answer)
    else:
        total = load.total()
        assert total is not None
        await _open_loop(level, load.rate, total, result, on_answer)
    result.seconds = trio.current_time() - start
    return result


async def _closed_loop(
    level: Level,
    budget: _Budget,
    result: LevelResult,
    on_answer: Callable[[], None] = lambda: None,
) -> None:
    """``level.concurrency`` workers, each with one request in flight, while ``budget`` lasts."""

    async def work(call: Call) -> None:
        clock = trio.current_time
        errors, latencies = result.errors, result.latencies
        while budget.take():
            start = clock()
            error = await call()
            if error is None:
                latencies.record(clock() - start)
            else:
                errors[error] += 1
            result.requests += 1
            on_answer()

    async with trio.open_nursery() as nursery:
        for worker in range(level.concurrency):
            nursery.start_soon(work, level.calls[worker % len(level.calls)])


async def _open_loop(
    level: Level, rate: float, total: int, result: LevelResult, on_answer: Callable[[], None]
) -> None:
    """Request *i* due at ``t0 + i / rate``, its latency from then (see the module)."""
    in_flight = 0

    async def send(call: Call, due: float) -> None:
        nonlocal in_flight
        error = await call()
        if error is None:
            result.latencies.record(trio.current_time() - due)
        else:
            result.errors[error] += 1
        result.requests += 1
        in_flight -= 1
        on_answer()

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for index in range(total):
            due = start + index / rate
            await trio.sleep_until(due)
            if in_flight >= MAX_IN_FLIGHT:
                result.errors[OVERLOADED] += 1
                result.requests += 1
                on_answer()
                continue
            in_flight += 1
            nursery.start_soon(send, level.calls[index % len(level.calls)], due)
