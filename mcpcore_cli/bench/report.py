"""What a run reports: a table (rich), JSON records, and a chart (matplotlib).

The table has one row per level, latencies in milliseconds, and fits an 80-column terminal; the
errors of each level are listed under it by kind. `records` are what ``--json`` writes,
one per level; `write_plot` draws throughput and p99 latency against concurrency.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from rich import box
from rich.console import Console
from rich.table import Table

from mcpcore_cli.bench.engine import LevelResult

__all__ = ["PERCENTILES", "TABLE_WIDTH", "print_report", "records", "write_json", "write_plot"]

#: The latency percentiles reported, with their JSON names.
PERCENTILES: Final = ((50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"))
#: The width the table is laid out for when the output is not a terminal (a file, a
#: pipe): an ordinary terminal's.
TABLE_WIDTH: Final = 100


def records(results: Sequence[LevelResult], about: dict[str, Any]) -> list[dict[str, Any]]:
    """One JSON record per level: its numbers, plus ``about`` (target, operation...)."""
    return [_record(result, about) for result in results]


def _record(result: LevelResult, about: dict[str, Any]) -> dict[str, Any]:
    latencies = result.latencies
    record: dict[str, Any] = {
        **about,
        "concurrency": result.concurrency,
        "rate": result.rate,
        "requests": result.requests,
        "errors": result.error_count,
        "errors_by_kind": dict(sorted(result.errors.items())),
        "seconds": round(result.seconds, 6),
        "rps": round(result.rps, 3),
        "warmup_requests": result.warmup_requests,
    }
    for percentile, name in PERCENTILES:
        record[f"{name.replace('.', '')}_ms"] = latencies.percentile_ms(percentile)
    record["max_ms"] = latencies.max_ms
    record["mean_ms"] = round(latencies.mean_ms, 3)
    return record


def write_json(path: Path, results: Sequence[LevelResult], about: dict[str, Any]) -> None:
    """Write the records to ``path`` (a JSON array)."""
    path.write_text(json.dumps(records(results, about), indent=2) + "\n")


def print_report(results: Sequence[LevelResult], title: str, console: Console) -> None:
    """The table, then each level's errors by kind."""
    open_loop = any(result.rate is not None for result in results)
    table = Table(
        title=f"{title}, latencies in ms",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        pad_edge=False,
    )
    table.add_column("conc.", justify="right")
    if open_loop:
        table.add_column("rate/s", justify="right")
    for name in ("requests", "errors", "rps", *(name for _, name in PERCENTILES), "max"):
        table.add_column(name, justify="right")
    for result in results:
        latencies = result.latencies
        rate = [f"{result.rate:g}" if result.rate is not None else "-"] if open_loop else []
        table.add_row(
            str(result.concurrency),
            *rate,
            str(result.requests),
            str(result.error_count),
            f"{result.rps:,.0f}",
            *(_ms(latencies.percentile_ms(p)) for p, _ in PERCENTILES),
            _ms(latencies.max_ms),
        )
    console.print(table)
    for result in results:
        for kind, count in sorted(result.errors.items()):
            console.print(f"  concurrency {result.concurrency}: {count} x {kind}", highlight=False)


def _ms(value: float) -> str:
    """Milliseconds, to 3 significant digits or whole above 1 s."""
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"


def write_plot(path: Path, results: Sequence[LevelResult], title: str) -> None:
    """Throughput and p99 latency against concurrency, as a PNG (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    levels = [result.concurrency for result in results]
    figure, (throughput, tail) = pyplot.subplots(1, 2, figsize=(10, 4))
    throughput.plot(levels, [result.rps for result in results], marker="o")
    throughput.set(xlabel="concurrency", ylabel="successes / s", title="throughput")
    tail.plot(levels, [result.latencies.percentile_ms(99.0) for result in results], marker="o")
    tail.set(xlabel="concurrency", ylabel="ms", title="p99 latency")
    for axes in (throughput, tail):
        axes.set_xscale("log", base=2)
        axes.set_xticks(levels, [str(level) for level in levels])
        axes.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
