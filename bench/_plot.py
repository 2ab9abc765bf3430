"""``--plot FILE.png``: throughput per transport and concurrency, mcpcore vs the SDK vs the ceiling.

One panel per transport (stdio, HTTP with JSON replies, HTTP with SSE replies,
WebSocket), round trips per second against calls in flight (1, 8, 64, 256), one line
per variant (colour) and era (solid: legacy, dashed: 2026-07-28), both axes
logarithmic. It is drawn from the JSON document's workloads (their ``parameters``
say transport, era and calls in flight), so a saved run can be drawn again:
``python -m bench._plot RUN.json FILE.png``. Only the rows with busy polling off (every
point of the sweep, the library's default) are drawn; the sequential rows measured again
with busy polling on are in the table.

matplotlib is optional (the ``bench`` extra): `require_matplotlib` tells early, before
anything is measured, whether it is there. The figure is drawn with the Agg backend,
never a display.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = ["PANELS", "PlotUnavailableError", "require_matplotlib", "write_plot"]

#: The panels, in order: the ``transport`` parameter of a row, and the panel's title.
PANELS: Final = {
    "stdio": "stdio",
    "http-json": "Streamable HTTP, JSON replies",
    "http-sse": "Streamable HTTP, SSE replies",
    "websocket": "WebSocket",
}
#: Each variant's colour and label (colour-blind-safe Okabe-Ito hues).
_VARIANTS: Final = {
    "mcpcore": ("#0072B2", "mcpcore"),
    "sdk": ("#D55E00", "official SDK"),
    "ceiling": ("#009E73", "raw ceiling"),
}
#: Each era's line style, marker and label.
_ERAS: Final = {
    "legacy": ("-", "o", "legacy (2025-11-25)"),
    "modern": ("--", "s", "2026-07-28"),
}
#: The share of the figure's height under the panels, for the legend.
_LEGEND_SHARE: Final = 0.08
#: Inches: two panels across, two down.
_FIGURE_SIZE: Final = (12.0, 9.0)
_DPI: Final = 120


class PlotUnavailableError(Exception):
    """matplotlib is not installed: the chart can't be drawn."""


def require_matplotlib() -> None:
    """Check that the chart can be drawn.

    Raises:
        PlotUnavailableError: matplotlib is not installed (its message says what to install).
    """
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailableError(
            "--plot needs matplotlib: pip install -e '.[bench]' (or pip install matplotlib)"
        ) from None
    matplotlib.use("Agg")


def _series(
    workloads: Sequence[Mapping[str, Any]], transport: str
) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(variant, era) -> [(in flight, round trips per second)], sorted by in flight."""
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for workload in workloads:
        parameters = workload.get("parameters") or {}
        if parameters.get("transport") != transport or "in_flight" not in parameters:
            continue
        if parameters.get("busy_poll_seconds", 0) > 0:  # (off at every point of the sweep)
            continue
        for variant in _VARIANTS:
            value = workload["values"].get(variant)
            if value:
                key = (variant, str(parameters["era"]))
                series.setdefault(key, []).append((int(parameters["in_flight"]), float(value)))
    return {key: sorted(points) for key, points in series.items()}


def write_plot(path: Path, document: Mapping[str, Any]) -> None:
    """Draw the chart of a run's JSON document (`bench._report.document`) into ``path``.

    Raises:
        PlotUnavailableError: matplotlib is not installed.
    """
    require_matplotlib()
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator, ScalarFormatter

    workloads = document["workloads"]
    figure, axes = plt.subplots(2, 2, figsize=_FIGURE_SIZE, dpi=_DPI)
    legend: dict[str, Any] = {}  # one legend for all panels, below them: label -> line
    try:
        for axis, (transport, title) in zip(axes.flat, PANELS.items(), strict=True):
            series = _series(workloads, transport)
            axis.set_title(title)
            if not series:
                axis.text(0.5, 0.5, "not measured", ha="center", va="center")
                axis.set_axis_off()
                continue
            points = sorted({in_flight for line in series.values() for in_flight, _ in line})
            for (variant, era), line in series.items():
                colour, label = _VARIANTS[variant]
                style, marker, era_label = _ERAS.get(era, (":", "^", era))
                [legend[f"{label}, {era_label}"]] = axis.plot(
                    [in_flight for in_flight, _ in line],
                    [rate for _, rate in line],
                    linestyle=style,
                    marker=marker,
                    color=colour,
                    label=f"{label}, {era_label}",
                )
            axis.set_xscale("log", base=2)
            axis.set_yscale("log")
            axis.yaxis.set_major_formatter(FuncFormatter(_compact))
            axis.yaxis.set_minor_formatter(FuncFormatter(_compact_minor))
            axis.xaxis.set_major_locator(FixedLocator(points))
            axis.xaxis.set_major_formatter(ScalarFormatter())
            axis.xaxis.set_minor_locator(NullLocator())
            axis.set_xlabel("calls in flight")
            axis.set_ylabel("round trips per second")
            axis.grid(True, which="both", alpha=0.3)
        figure.suptitle(_title(document))
        if legend:
            order = sorted(legend, key=_legend_order)
            figure.legend(
                [legend[label] for label in order], order, loc="lower center", ncol=3, frameon=False
            )
        figure.tight_layout(rect=(0, _LEGEND_SHARE, 1, 1))
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)


def _legend_order(label: str) -> tuple[int, bool]:
    """Variants in `_VARIANTS` order, legacy first: the legend fills one column per variant."""
    variant = next(i for i, (_, name) in enumerate(_VARIANTS.values()) if label.startswith(name))
    return variant, "2026-07-28" in label


def _compact(value: float, position: object = None) -> str:
    """A rate as the table writes it: 950, 12k, 1.2M."""
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def _compact_minor(value: float, position: object = None) -> str:
    """Minor ticks labelled at 2 and 5 of each decade only, so labels never overlap."""
    mantissa = value / 10 ** math.floor(math.log10(value)) if value > 0 else 0
    return _compact(value) if round(mantissa) in (2, 5) else ""


def _title(document: Mapping[str, Any]) -> str:
    environment = document.get("environment", {})
    machine = environment.get("machine", {})
    python = environment.get("python", {})
    quick = document.get("settings", {}).get("quick")
    return (
        "tools/call throughput: mcpcore vs the official SDK vs the raw ceiling"
        + (" (--quick: not meaningful)" if quick else "")
        + f"\n{machine.get('cpu', '?')}, {machine.get('cpu_count', '?')} cores, "
        + f"{machine.get('os', machine.get('platform', '?'))}, Python {python.get('version', '?')}"
    )


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python -m bench._plot RUN.json FILE.png")
    try:
        write_plot(Path(sys.argv[2]), json.loads(Path(sys.argv[1]).read_text()))
    except PlotUnavailableError as exc:
        sys.exit(str(exc))
