"""Showing the results: one plain-text table for people, one JSON document for programs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

from bench._results import MCPCORE, WorkloadResult
from mcpcore_cli.bench.timing import Settings

__all__ = [
    "BUSY_POLL_DEFINITION",
    "COLUMNS",
    "OWN_RATIO_DEFINITION",
    "RATIO_COLUMNS",
    "document",
    "format_table",
    "machine_line",
    "write_json",
]

#: Every variant column, in table order.
COLUMNS = (MCPCORE, "sdk", "sdk-session", "sdk-lowlevel", "msgspec", "json", "orjson", "ceiling")
#: The speed-up columns: mcpcore over each of these.
RATIO_COLUMNS = ("sdk", "sdk-session", "sdk-lowlevel", "msgspec", "ceiling")

RATIO_DEFINITION = (
    "ratios are mcpcore's speed-up over the other variant (above 1: mcpcore is faster), "
    "the median of the ratios measured within each repetition"
)
OWN_RATIO_DEFINITION = (
    "a section with a header of its own names its ratios in full: A/B is A over B (rates, "
    "unless the name says what else), the median of the ratios measured within each "
    "repetition"
)
BUSY_POLL_DEFINITION = (
    "busy polling is off in every row (the library's default) unless its name says "
    '"busy poll N µs": then mcpcore and its ceiling both spin up to N µs before their event '
    "loop sleeps, client and server alike; the SDK can't"
)
_UNIT_TITLES = {
    "msg/s": "messages per second",
    "round trips/s": "round trips per second",
    "ms": "milliseconds (lower is better)",
    "bytes": "bytes (lower is better)",
}
#: The narrowest the workload column gets (it widens to the longest name).
_NAME_WIDTH = 52
_SIZE_WIDTH = 9
_VALUE_WIDTH = 14
_RATIO_WIDTH = 17


def machine_line(environment: dict[str, Any]) -> str:
    """Where the numbers come from, in one line: CPU, cores, OS, Python, key versions."""
    machine, python = environment["machine"], environment["python"]
    packages = environment["packages"]
    versions = ", ".join(
        f"{name} {packages[name]}"
        for name in ("mcpcore", "msgspec", "trio", "mcp")
        if packages.get(name)
    )
    return (
        f"{machine['cpu']}, {machine['cpu_count']} cores, {machine['os']}; "
        f"{python['implementation']} {python['version']}; {versions}"
    )


def format_table(
    results: Sequence[WorkloadResult],
    settings: Settings,
    environment: dict[str, Any] | None = None,
) -> str:
    """The whole report as text: one table (a section per layer), targets, then notes.

    Only the columns some workload fills are shown (``sdk-lowlevel`` belongs to the
    dispatch layer alone, say). A section whose variants are not among `COLUMNS` (the
    workers layer's ``1 worker`` and ``2 workers``) has a header of its own under its
    title, with its ratios named in full. With ``environment``
    (`bench._environment.describe`), a line under the title says which machine and
    versions measured it.
    """
    sections = [list(rows) for _, rows in groupby(results, key=lambda r: (r.layer, r.unit))]
    own = [_own_layout(rows) for rows in sections]
    laid_out = zip(sections, own, strict=True)
    house = _house_layout([row for rows, layout in laid_out if layout is None for row in rows])
    width = max([_NAME_WIDTH - 2, *(len(result.name) for result in results)]) + 2
    lines = [
        f"mcpcore benchmark: median of {settings.repeat} repetitions"
        + (" (--quick: smoke run, numbers not meaningful)" if settings.quick else ""),
        *([f"machine: {machine_line(environment)}"] if environment is not None else []),
        RATIO_DEFINITION,
        *([OWN_RATIO_DEFINITION] if any(own) else []),
        *([BUSY_POLL_DEFINITION] if any(_busy_polled(result) for result in results) else []),
        "",
    ]
    if not all(own):  # (some section, or none at all, is laid out in the house's columns)
        lines += house.header(width)
    for rows, layout in zip(sections, own, strict=True):
        lines.append(f"[{rows[0].layer}: {_UNIT_TITLES[rows[0].unit]}]")
        if layout is not None:
            lines += layout.header(width)
        lines += [(layout or house).row(result, width) for result in rows]
    lines.extend(_targets(results))
    lines.extend(_notes(results))
    return "\n".join(lines)


def _busy_polled(result: WorkloadResult) -> bool:
    """Whether the row measured transports, so that its busy-poll policy matters."""
    return "busy_poll_seconds" in result.parameters


@dataclass(frozen=True)
class _Layout:
    """The columns rows are printed in: variants, then ratios (their key, their heading)."""

    columns: tuple[str, ...]
    ratios: tuple[tuple[str, str], ...]

    def header(self, width: int) -> list[str]:
        """The header line and its rule."""
        header = (
            f"{'workload':<{width}}{'size':>{_SIZE_WIDTH}}"
            + "".join(f"{name:>{_value_width(name)}}" for name in self.columns)
            + "".join(f"{heading:>{_ratio_width(heading)}}" for _, heading in self.ratios)
        )
        return [header, "-" * len(header)]

    def row(self, result: WorkloadResult, width: int) -> str:
        """One workload's line."""
        size = "" if result.size_bytes is None else _format_size(result.size_bytes)
        cells = [f"{result.name:<{width}}{size:>{_SIZE_WIDTH}}"]
        for name in self.columns:
            if name not in result.values:
                text = "-"
            else:
                value = result.values[name]
                text = "n/a" if value is None else _format_value(value, result.unit)
            cells.append(f"{text:>{_value_width(name)}}")
        for key, heading in self.ratios:
            if key not in result.ratios:
                text = "-"
            else:
                ratio = result.ratios[key]
                text = "n/a" if ratio is None else _format_ratio(ratio)
            cells.append(f"{text:>{_ratio_width(heading)}}")
        return "".join(cells)


def _value_width(name: str) -> int:
    return max(_VALUE_WIDTH, len(name) + 2)


def _ratio_width(heading: str) -> int:
    return max(_RATIO_WIDTH, len(heading) + 2)


def _house_layout(results: Sequence[WorkloadResult]) -> _Layout:
    """`COLUMNS` that some of ``results`` fill, and mcpcore's speed-up over each."""
    columns = tuple(name for name in COLUMNS if any(name in r.values for r in results))
    ratios = tuple((f"{MCPCORE}/{name}", f"vs {name}") for name in RATIO_COLUMNS if name in columns)
    return _Layout(columns, ratios)


def _own_layout(rows: Sequence[WorkloadResult]) -> _Layout | None:
    """The layout of a section with variants outside `COLUMNS` (None: it has none)."""
    variants = tuple(dict.fromkeys(name for result in rows for name in result.values))
    if all(name in COLUMNS for name in variants):
        return None
    ratios = tuple(dict.fromkeys(name for result in rows for name in result.ratios))
    return _Layout(variants, tuple((name, name) for name in ratios))


def _targets(results: Sequence[WorkloadResult]) -> list[str]:
    lines = []
    for result in results:
        for target in result.targets:
            met = target.met(result)
            verdict = {True: "met", False: "MISSED", None: "n/a"}[met]
            if "/" in target.metric:
                ratio = result.ratios.get(target.metric)
                measured = "n/a" if ratio is None else _format_ratio(ratio)
            else:
                value = result.value(MCPCORE)
                measured = "n/a" if value is None else _format_value(value, result.unit)
            lines.append(f"  {result.name}: {target.label}: {verdict} ({measured})")
    return ["", "targets:", *lines] if lines else []


def _notes(results: Sequence[WorkloadResult]) -> list[str]:
    lines = [f"  {result.name}: {note}" for result in results for note in result.notes]
    return ["", "notes:", *lines] if lines else []


def _format_size(size: int) -> str:
    if size < 10_000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.2f} MB"


def _format_value(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "bytes":
        return _format_size(round(value))
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e4:
        return f"{value / 1e3:.0f}k" if value >= 1e5 else f"{value / 1e3:.1f}k"
    return f"{value:.0f}"


def _format_ratio(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio >= 10 else f"{ratio:.2f}x"


def document(
    results: Sequence[WorkloadResult],
    *,
    settings: Settings,
    environment: dict[str, Any],
    available: dict[str, bool],
    busy_poll: float,
) -> dict[str, Any]:
    """Every number, per-repetition samples included, as one JSON-ready document.

    ``busy_poll`` is the budget of the rows measured with busy polling on (``--busy-poll``);
    each row's own policy is its ``parameters.busy_poll_seconds``.
    """
    return {
        "schema_version": 1,
        "environment": environment,
        "settings": {
            "repeat": settings.repeat,
            "target_seconds": settings.target_seconds,
            "quick": settings.quick,
        },
        "available": available,
        "ratio_definition": RATIO_DEFINITION,
        "busy_poll_definition": BUSY_POLL_DEFINITION,
        "busy_poll_on_rows_seconds": busy_poll,
        "workloads": [result.to_json() for result in results],
    }


def write_json(path: Path, report: dict[str, Any]) -> None:
    """Write a `document` as JSON."""
    path.write_text(json.dumps(report, indent=2) + "\n")
