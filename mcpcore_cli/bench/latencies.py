"""Latencies in an HDR histogram (the ``hdrhistogram`` package), in microseconds.

An HDR histogram keeps every value to a fixed number of significant digits in a fixed
amount of memory, whatever the count, and its percentiles are exact to that precision
(wrk, HdrHistogram's own ``wrk2`` and k6 report from one). Values are recorded in whole
microseconds: the resolution a loopback round trip (~50 µs and up) needs.
"""

from __future__ import annotations

from typing import Final

from hdrh.histogram import HdrHistogram

__all__ = ["HIGHEST_MICROSECONDS", "LOWEST_MICROSECONDS", "SIGNIFICANT_DIGITS", "Latencies"]

#: The smallest latency told apart: 1 µs, the resolution of the numbers.
LOWEST_MICROSECONDS: Final = 1
#: The largest latency recorded: 60 s, far past any request timeout the command allows
#: (`mcpcore_cli.bench.run.MAX_TIMEOUT`); an open loop that falls further behind than
#: this records 60 s (its table then says the server could not keep up anyway).
HIGHEST_MICROSECONDS: Final = 60_000_000
#: Three significant digits: 0.1% error at any magnitude (wrk2's and HdrHistogram's
#: usual setting), in about 200 KB per histogram for this range.
SIGNIFICANT_DIGITS: Final = 3


class Latencies:
    """The latencies of one run, in seconds in and milliseconds out."""

    def __init__(self) -> None:
        self._histogram = HdrHistogram(
            LOWEST_MICROSECONDS, HIGHEST_MICROSECONDS, SIGNIFICANT_DIGITS
        )

    def record(self, seconds: float) -> None:
        """Add one latency (clamped into the histogram's range)."""
        microseconds = min(max(int(seconds * 1e6), LOWEST_MICROSECONDS), HIGHEST_MICROSECONDS)
        self._histogram.record_value(microseconds)

    @property
    def count(self) -> int:
        """How many latencies were recorded."""
        count: int = self._histogram.get_total_count()
        return count

    def percentile_ms(self, percentile: float) -> float:
        """The latency below which ``percentile`` percent of the recorded ones fall, in ms."""
        value: int = self._histogram.get_value_at_percentile(percentile)
        return value / 1000

    @property
    def max_ms(self) -> float:
        """The largest latency recorded, in ms (0 when none was)."""
        value: int = self._histogram.get_max_value() if self.count else 0
        return value / 1000

    @property
    def mean_ms(self) -> float:
        """The mean latency, in ms (0 when none was recorded)."""
        value: float = self._histogram.get_mean_value() if self.count else 0.0
        return value / 1000
