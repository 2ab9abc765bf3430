"""Timing: calibrated iteration counts, interleaved variants, medians, per-repetition ratios.

The machine is shared and noisy (see shared/PERF.md), so absolute rates drift by tens of
percent between runs while ratios measured side by side hold. Every layer therefore
measures its variants the same way:

1. Calibrate each variant once: find the iteration count that makes one measurement
   last about ``Settings.target_seconds`` (this doubles as the warm-up).
2. Repeat ``Settings.repeat`` times: time every variant once, in an order that rotates
   with each repetition, so that no variant always runs first or last.
3. Report each variant's median rate, and for each pair of interest the median of the
   per-repetition ratios (the two rates of a ratio were measured seconds apart).

The garbage collector stays enabled (real programs run with it), but a collection runs
before each timed measurement so that one variant's garbage does not bill the next.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Final

__all__ = [
    "MCPCORE",
    "Samples",
    "Settings",
    "Variant",
    "calibrate",
    "measure",
    "ratio_samples",
    "time_loop",
]

#: Calibration stops growing the count once a trial lasts this share of the target.
_CALIBRATION_SHARE = 0.2
#: No single calibration trial runs more iterations than this.
_MAX_ITERATIONS = 1 << 28


def _ignore(status: str) -> None:
    """Where a run's steps go when nobody shows them."""


@dataclass(frozen=True)
class Settings:
    """How long and how often to measure.

    Attributes:
        repeat: Repetitions per variant; medians are taken over these.
        target_seconds: How long one timed measurement of one variant should last.
        quick: A smoke run: short measurements, numbers not to be trusted.
        report: Told each step (``"repetition 2/7"``), between timed loops only
            (`bench._progress.Progress.step` shows it).
    """

    repeat: int
    target_seconds: float
    quick: bool = False
    report: Callable[[str], None] = field(default=_ignore, compare=False, repr=False)


#: The variant every ratio has in its numerator.
MCPCORE: Final = "mcpcore"


@dataclass(frozen=True)
class Variant:
    """One way of doing a workload's job.

    Attributes:
        name: The column this variant fills (``"mcpcore"``, ``"sdk"``, ...).
        operation: Does the job once; its return value is ignored.
    """

    name: str
    operation: Callable[[], object]


@dataclass(frozen=True)
class Samples:
    """Operations per second of one variant, one value per repetition."""

    rates: tuple[float, ...]
    iterations: int

    @property
    def median(self) -> float:
        """The median rate."""
        return statistics.median(self.rates)


def time_loop(operation: Callable[[], object], iterations: int) -> int:
    """Run ``operation`` ``iterations`` times; return the elapsed nanoseconds."""
    clock = time.perf_counter_ns
    start = clock()
    for _ in repeat(None, iterations):
        operation()
    return clock() - start


def calibrate(operation: Callable[[], object], target_seconds: float) -> int:
    """The iteration count that makes one measurement last about ``target_seconds``."""
    target_ns = target_seconds * 1e9
    iterations = 1
    while True:
        elapsed = max(time_loop(operation, iterations), 1)
        if elapsed >= target_ns * _CALIBRATION_SHARE or iterations >= _MAX_ITERATIONS:
            return max(1, round(iterations * target_ns / elapsed))
        # Grow fast, but never by more than 10x on a trial that may have been noise.
        iterations = min(_MAX_ITERATIONS, iterations * min(10, max(2, int(target_ns / elapsed))))


def measure(variants: Sequence[Variant], settings: Settings) -> dict[str, Samples]:
    """Measure every variant ``settings.repeat`` times, interleaved; rates by variant name."""
    report = settings.report
    counts = {}
    for index, variant in enumerate(variants, 1):
        report(f"calibrating {index}/{len(variants)}")
        counts[variant.name] = calibrate(variant.operation, settings.target_seconds)
    rates: dict[str, list[float]] = {variant.name: [] for variant in variants}
    for repetition in range(settings.repeat):
        report(f"repetition {repetition + 1}/{settings.repeat}")
        shift = repetition % len(variants)
        for variant in (*variants[shift:], *variants[:shift]):
            iterations = counts[variant.name]
            gc.collect()
            elapsed = max(time_loop(variant.operation, iterations), 1)
            rates[variant.name].append(iterations * 1e9 / elapsed)
    return {name: Samples(tuple(values), counts[name]) for name, values in rates.items()}


def ratio_samples(numerator: Samples, denominator: Samples) -> tuple[float, ...]:
    """The ratio of two variants' rates within each repetition."""
    return tuple(a / b for a, b in zip(numerator.rates, denominator.rates, strict=True))
