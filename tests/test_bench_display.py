"""The benchmark's progress display and chart, without measuring anything.

`bench._progress.Progress` on a terminal and elsewhere (a fake clock, a fake stream), and
`bench._plot.write_plot` on a hand-made document. No timing is asserted.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

from bench._layer import Context
from bench._optional import Availability
from bench._plot import PANELS, PlotUnavailableError, require_matplotlib, write_plot
from bench._progress import Progress
from mcpcore_cli.bench.timing import Settings, Variant, measure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_elsewhere_one_plain_line_per_workload_and_none_per_step() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, clock=clock)
    assert not progress.interactive
    progress.layer("stdio", 4, 7)
    progress.log("stdio: tools/call, sequential (200 calls per timed batch)")
    for repetition in range(1, 8):
        progress.step(f"repetition {repetition}/7")
    clock.now += 75
    progress.log("stdio: tools/call, 8 in flight (512 calls per timed batch)")
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "[0:00] stdio: tools/call, sequential (200 calls per timed batch)",
        "[1:15] stdio: tools/call, 8 in flight (512 calls per timed batch)",
        "[1:15] done",
    ]


def test_on_a_terminal_the_status_line_is_redrawn_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the whole line
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, clock=clock)
    assert progress.interactive
    progress.layer("http", 5, 7)
    progress.log("http: tools/call, JSON replies, sequential, 1 connection (100 calls)")
    clock.now += 3
    progress.step("repetition 2/7")
    shown = stream.getvalue()
    # The log line stays; the status line after it has no newline, and names the layer,
    # the workload, the step and the time elapsed.
    logged, _, status = shown.rpartition("\n")
    assert logged.endswith(
        "[0:00] http: tools/call, JSON replies, sequential, 1 connection (100 calls)"
    )
    assert status.startswith("\r")
    last = status.rsplit("\r", 1)[-1]
    assert last == (
        "[5/7 http] · tools/call, JSON replies, sequential, 1 connection (100 calls) · "
        "repetition 2/7 · 0:03"
    )
    # A shorter status overwrites the longer one completely.
    progress.step("x")
    redrawn = stream.getvalue()[len(shown) :]
    assert redrawn.startswith("\r")
    assert len(redrawn) - 1 >= len(last)
    progress.finish()
    assert stream.getvalue().endswith("\r[0:03] done\n")


def test_on_a_narrow_terminal_the_status_line_is_cut_to_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # a wrapped line could not be redrawn with \r
    stream = Terminal()
    progress = Progress(stream, clock=Clock())
    progress.layer("websocket", 6, 7)
    progress.step("calibrating 3/4 and a very long status indeed")
    [line] = stream.getvalue().split("\r")[1:][-1:]
    assert len(line) == 39


def test_the_harness_reports_its_steps_and_context_log_reaches_the_display() -> None:
    steps: list[str] = []
    settings = Settings(repeat=3, target_seconds=0.0001, report=steps.append)
    measure([Variant("a", lambda: None), Variant("b", lambda: None)], settings)
    assert steps == [
        "calibrating 1/2",
        "calibrating 2/2",
        "repetition 1/3",
        "repetition 2/3",
        "repetition 3/3",
    ]
    stream = io.StringIO()
    Context(settings, Availability(), Progress(stream, clock=Clock())).log("codec: a workload")
    assert stream.getvalue() == "[0:00] codec: a workload\n"


def test_without_a_display_context_log_prints_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Context(Settings(repeat=1, target_seconds=0.01), Availability()).log("codec: a workload")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "codec: a workload\n")


def row(
    transport: str, era: str, in_flight: int, values: dict[str, float | None]
) -> dict[str, Any]:
    return {
        "name": f"{transport} {era} {in_flight}",
        "values": values,
        "parameters": {"transport": transport, "era": era, "in_flight": in_flight},
    }


def test_the_chart_is_a_png_with_a_panel_per_transport(tmp_path: Path) -> None:
    workloads = [
        row(
            transport, era, in_flight, {"mcpcore": 1000.0 * in_flight, "sdk": 100.0, "ceiling": 2e3}
        )
        for transport in PANELS
        if transport != "http-sse"  # a transport not measured: its panel says so
        for era in ("legacy", "modern")
        for in_flight in (1, 8, 64, 256)
    ]
    workloads.append(row("websocket", "modern", 1, {"mcpcore": 5.0, "sdk": None}))  # n/a
    workloads.append({"name": "codec", "values": {"mcpcore": 1.0}, "parameters": {}})
    document = {
        "environment": {
            "machine": {"cpu": "a CPU", "cpu_count": 2, "os": "Linux"},
            "python": {"version": "3.11"},
        },
        "settings": {"quick": False},
        "workloads": workloads,
    }
    chart = tmp_path / "chart.png"
    write_plot(chart, document)
    data = chart.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 10_000


def test_the_chart_draws_the_rows_with_busy_polling_off_only() -> None:
    from bench._plot import _series

    off = row("stdio", "legacy", 1, {"mcpcore": 100.0, "ceiling": 200.0})
    off["parameters"]["busy_poll_seconds"] = 0.0
    on = row("stdio", "legacy", 1, {"mcpcore": 300.0, "ceiling": 400.0})
    on["parameters"]["busy_poll_seconds"] = 0.0005
    swept = row("stdio", "legacy", 8, {"mcpcore": 500.0, "ceiling": 600.0})
    series = _series([off, on, swept], "stdio")
    assert series == {
        ("mcpcore", "legacy"): [(1, 100.0), (8, 500.0)],
        ("ceiling", "legacy"): [(1, 200.0), (8, 600.0)],
    }


def test_without_matplotlib_the_chart_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(PlotUnavailableError, match=r"pip install -e '\.\[bench\]'"):
        require_matplotlib()
    with pytest.raises(PlotUnavailableError):
        write_plot(tmp_path / "chart.png", {"workloads": []})
    assert not (tmp_path / "chart.png").exists()


def test_the_report_fits_an_ordinary_terminal() -> None:
    from bench._report import COLUMNS, TABLE_WIDTH, format_table
    from bench._results import MCPCORE, Target, WorkloadResult

    long_name = "tools/call through the whole server dispatch, in memory, one call at a time"
    every_column: dict[str, float | None] = dict.fromkeys(COLUMNS, 123_456.0)
    rows = [
        WorkloadResult(
            "dispatch",
            long_name,
            144,
            "msg/s",
            every_column,
            {MCPCORE: [1.0]},
            {f"{MCPCORE}/{name}": 12.5 for name in COLUMNS[1:]},
            targets=[Target("SDK >= 15x", f"{MCPCORE}/sdk", 15.0)],
            notes=["a note long enough to need wrapping, " * 6],
        ),
        WorkloadResult("codec", "short", 99, "msg/s", {MCPCORE: 1e6}, {MCPCORE: [1e6]}, {}),
    ]
    table = format_table(rows, Settings(repeat=3, target_seconds=0.01)).splitlines()
    assert max(len(line) for line in table) <= TABLE_WIDTH == 100
    # Too many columns for a name beside them: the name goes above its values, whole.
    at = table.index(long_name)
    assert table[at + 1].split()[:3] == ["144", "B", "123k"]
    assert table[at + 2].lstrip().startswith("vs sdk 12.5x · vs sdk-session 12.5x")
    assert table[table.index("[codec: messages per second]") + 3].startswith("short ")


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (0.5993, "MISSED (0.599x)"),
        (0.6004, "met (0.6004x)"),
        (0.6, "met (0.60x)"),
        (0.61, "met (0.61x)"),
        (3.9996, "MISSED (3.9996x)"),
        (0.57, "MISSED (0.57x)"),
    ],
)
def test_a_target_ratio_is_shown_with_digits_enough_to_tell_it_from_its_bound(
    ratio: float, shown: str
) -> None:
    from bench._report import format_table
    from bench._results import MCPCORE, Target, WorkloadResult

    bound = 4.0 if ratio > 1 else 0.6
    row = WorkloadResult(
        "asgi",
        "tools/call",
        548,
        "round trips/s",
        {MCPCORE: 1000.0},
        {MCPCORE: [1000.0]},
        {f"{MCPCORE}/ceiling": ratio},
        targets=[Target(f"echo >= {bound}x", f"{MCPCORE}/ceiling", bound)],
    )
    table = format_table([row], Settings(repeat=3, target_seconds=0.01))
    assert f"tools/call: echo >= {bound}x: {shown}" in table
