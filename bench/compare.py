"""``python -m bench.compare``: every row's change between two sets of ``--json`` runs.

How a change is judged against the project's rule ("no user-visible workload loses more
than 10%", issue 16): run ``python -m bench --json`` on the tree before and on the tree
after, interleaved on one machine (several rounds: one run's rows move by 10% or more on
a shared VM), then::

    python -m bench.compare before-1.json before-2.json -- after-1.json after-2.json

Each row common to both sides is one line: mcpcore's median over every sample of every
file of that side, before and after, and the change (positive: better; for rates higher
is better, for times and bytes lower is), with the ceiling's medians beside it, which
tell a slower machine from a slower mcpcore. Rows losing more than ``--threshold``
percent (10 unless told) are marked, and counted at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

__all__ = ["DEFAULT_THRESHOLD", "Row", "compare", "load", "main"]

#: The loss, in percent, past which a row is marked (issue 16's rule).
DEFAULT_THRESHOLD: Final = 10.0
_MARK: Final = "  << loses more than the threshold"


class Row(msgspec.Struct, frozen=True):
    """One workload measured on both sides.

    Attributes:
        name: The workload's name.
        unit: Its unit (``.../s``: higher is better; anything else: lower is).
        before: mcpcore's median before.
        after: mcpcore's median after.
        change: The change in percent, positive when after is better.
        ceiling_before: The ceiling's median before (None: the row has none).
        ceiling_after: The ceiling's median after.
    """

    name: str
    unit: str
    before: float
    after: float
    change: float
    ceiling_before: float | None
    ceiling_after: float | None


class _Pooled(msgspec.Struct):
    unit: str
    samples: dict[str, list[float]]


def load(paths: Iterable[Path]) -> dict[str, _Pooled]:
    """Every workload of ``paths`` (``python -m bench --json`` files), samples pooled.

    Raises:
        ValueError: A file is not a bench result.
    """
    pooled: dict[str, _Pooled] = {}
    for path in paths:
        try:
            document: Any = msgspec.json.decode(path.read_bytes())
            workloads = document["workloads"]
        except (msgspec.DecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a python -m bench --json file") from exc
        for workload in workloads:
            row = pooled.setdefault(workload["name"], _Pooled(workload["unit"], {}))
            for variant, values in workload.get("samples", {}).items():
                row.samples.setdefault(variant, []).extend(values)
    return pooled


def _median(row: _Pooled, variant: str) -> float | None:
    values = row.samples.get(variant)
    return statistics.median(values) if values else None


def compare(before: dict[str, _Pooled], after: dict[str, _Pooled]) -> list[Row]:
    """The rows measured on both sides, in the order of ``after``."""
    rows = []
    for name, later in after.items():
        earlier = before.get(name)
        if earlier is None:
            continue
        old, new = _median(earlier, "mcpcore"), _median(later, "mcpcore")
        if not old or not new:
            continue
        higher_is_better = later.unit.endswith("/s")
        change = (new / old - 1) if higher_is_better else (old / new - 1)
        rows.append(
            Row(
                name,
                later.unit,
                old,
                new,
                100 * change,
                _median(earlier, "ceiling"),
                _median(later, "ceiling"),
            )
        )
    return rows


def _line(row: Row, threshold: float) -> str:
    ceiling = ""
    if row.ceiling_before is not None and row.ceiling_after is not None:
        ceiling = f"  (ceiling {row.ceiling_before:,.0f} -> {row.ceiling_after:,.0f})"
    mark = _MARK if row.change < -threshold else ""
    return (
        f"{row.change:+7.1f}%  {row.before:>13,.1f} -> {row.after:>13,.1f} {row.unit:<14}"
        f" {row.name}{ceiling}{mark}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison; 2 on bad arguments or files."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.compare",
        usage="python -m bench.compare [--threshold PERCENT] BEFORE.json... -- AFTER.json...",
        description="Every row's change between runs of python -m bench --json.",
    )
    parser.add_argument("files", nargs="*", type=Path, help="bench --json files")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help=f"mark rows losing more than this many percent (default {DEFAULT_THRESHOLD:g})",
    )
    arguments = sys.argv[1:] if argv is None else list(argv)
    if "--" not in arguments:
        parser.error("give the files before, then --, then the files after")
    split = arguments.index("--")
    first = parser.parse_args(arguments[:split])
    second = parser.parse_args(arguments[split + 1 :])
    if not first.files or not second.files:
        parser.error("give at least one file on each side of --")
    threshold = next(
        (t for t in (second.threshold, first.threshold) if t is not None), DEFAULT_THRESHOLD
    )
    try:
        rows = compare(load(first.files), load(second.files))
    except (OSError, ValueError) as exc:
        print(f"python -m bench.compare: {exc}", file=sys.stderr)
        return 2
    for row in rows:
        print(_line(row, threshold))
    losing = sum(row.change < -threshold for row in rows)
    print(f"{len(rows)} rows compared; {losing} lose more than {threshold:g}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
