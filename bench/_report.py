"""Showing the results: one plain-text table for people, one JSON document for programs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, Final

from bench._results import MCPCORE, WorkloadResult
from mcpcore_cli.bench.timing import Settings

__all__ = [
    "BUSY_POLL_DEFINITION",
    "COLUMNS",
    "OWN_RATIO_DEFINITION",
    "RATIO_COLUMNS",
    "TABLE_WIDTH",
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
#: The width the report is laid out in: an ordinary terminal's (every line fits it).
TABLE_WIDTH = 100
#: The narrowest the workload column gets beside the values; with more columns than
#: leave this much, a workload's name goes on a line of its own above its values.
_MIN_NAME_WIDTH = 24
_SIZE_WIDTH = 9
_MIN_VALUE_WIDTH = 9
#: How the lines under a row that carry its ratios start.
_RATIO_INDENT = "    "


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
    """The whole report as text, every line within `TABLE_WIDTH`: a table per layer.

    Each layer's table shows only the columns its workloads fill (``sdk-lowlevel``
    belongs to the dispatch layer alone, say); a workload's ratios go on the line under
    its values (``vs sdk 11.6x``), named in full (``2 workers/1 worker``) in a layer
    whose variants are not among `COLUMNS`. Targets and notes follow. With
    ``environment`` (`bench._environment.describe`), a line under the title says which
    machine and versions measured it.
    """
    sections = [list(rows) for _, rows in groupby(results, key=lambda r: (r.layer, r.unit))]
    own = [_own_layout(rows) for rows in sections]
    intro = [
        f"mcpcore benchmark: median of {settings.repeat} repetitions"
        + (" (--quick: smoke run, numbers not meaningful)" if settings.quick else ""),
        *([f"machine: {machine_line(environment)}"] if environment is not None else []),
        RATIO_DEFINITION,
        *([OWN_RATIO_DEFINITION] if any(own) else []),
        *([BUSY_POLL_DEFINITION] if any(_busy_polled(result) for result in results) else []),
    ]
    lines = [part for line in intro for part in _wrapped(line, "")]
    for rows, own_layout in zip(sections, own, strict=True):
        lines += ["", f"[{rows[0].layer}: {_UNIT_TITLES[rows[0].unit]}]"]
        layout = own_layout or _house_layout(rows)
        lines += layout.header()
        for result in rows:
            lines += layout.row(result)
    lines.extend(_targets(results))
    lines.extend(_notes(results))
    return "\n".join(lines)


def _wrapped(text: str, indent: str) -> list[str]:
    """``text`` in lines of `TABLE_WIDTH` at most, the ones after the first indented."""
    return textwrap.wrap(text, TABLE_WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [
        ""
    ]


def _busy_polled(result: WorkloadResult) -> bool:
    """Whether the row measured transports, so that its busy-poll policy matters."""
    return "busy_poll_seconds" in result.parameters


@dataclass(frozen=True)
class _Layout:
    """A layer's columns (variants) and the ratios under each row (key, heading)."""

    columns: tuple[str, ...]
    ratios: tuple[tuple[str, str], ...]

    @property
    def value_widths(self) -> tuple[int, ...]:
        """Each column's width: its name and a space, at least `_MIN_VALUE_WIDTH`."""
        return tuple(max(_MIN_VALUE_WIDTH, len(name) + 1) for name in self.columns)

    @property
    def name_width(self) -> int:
        """The workload column's width: what the values leave, or 0 (a line of its own)."""
        left = TABLE_WIDTH - _SIZE_WIDTH - sum(self.value_widths)
        return left if left >= _MIN_NAME_WIDTH else 0

    def header(self) -> list[str]:
        """The header line and its rule."""
        header = self._line("workload" if self.name_width else "", "size", self.columns)
        return [header, "-" * len(header)]

    def row(self, result: WorkloadResult) -> list[str]:
        """One workload's lines: its name and values, then its ratios."""
        size = "" if result.size_bytes is None else _format_size(result.size_bytes)
        texts = []
        for name in self.columns:
            value = result.values.get(name, _ABSENT)
            texts.append(_cell(value, lambda v: _format_value(v, result.unit)))
        if len(result.name) <= self.name_width:
            lines = [self._line(result.name, size, texts)]
        else:  # (a name never breaks in the column: whole, on a line of its own above)
            lines = [*_wrapped(result.name, ""), self._line("", size, texts)]
        ratios = [
            f"{heading} {_cell(result.ratios.get(key, _ABSENT), _format_ratio)}"
            for key, heading in self.ratios
            if key in result.ratios
        ]
        if ratios:
            lines += _wrapped(_RATIO_INDENT + " · ".join(ratios), _RATIO_INDENT)
        return lines

    def _line(self, name: str, size: str, texts: Sequence[str]) -> str:
        cells = [f"{name:<{self.name_width}}{size:>{_SIZE_WIDTH}}"]
        cells += [f"{text:>{w}}" for text, w in zip(texts, self.value_widths, strict=True)]
        return "".join(cells).rstrip()


#: What a cell shows for a variant the workload has no value for.
_ABSENT = object()


def _cell(value: object, formatted: Any) -> str:
    if value is _ABSENT:
        return "-"
    return "n/a" if value is None else str(formatted(value))


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
                measured = "n/a" if ratio is None else _format_against(ratio, target.threshold)
            else:
                value = result.value(MCPCORE)
                measured = "n/a" if value is None else _format_value(value, result.unit)
            lines += _wrapped(f"  {result.name}: {target.label}: {verdict} ({measured})", "    ")
    return ["", "targets:", *lines] if lines else []


def _notes(results: Sequence[WorkloadResult]) -> list[str]:
    lines = [
        part
        for result in results
        for note in result.notes
        for part in _wrapped(f"  {result.name}: {note}", "    ")
    ]
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


#: The most decimals a target's ratio is shown with (`_format_against`).
_MAX_DECIMALS: Final = 6


def _format_against(ratio: float, threshold: float) -> str:
    """A target's ratio, with decimals enough to tell it from its bound (0.599x, not 0.60x).

    Rounded as the table rounds it, a ratio just under its bound would read as the bound
    beside "MISSED".
    """
    text = _format_ratio(ratio)
    decimals = 3
    while float(text[:-1]) == threshold != ratio and decimals <= _MAX_DECIMALS:
        text = f"{ratio:.{decimals}f}x"
        decimals += 1
    return text


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
