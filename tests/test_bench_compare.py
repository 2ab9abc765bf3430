"""`python -m bench.compare`: every row's change between two sets of bench --json files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import compare

ROOT = Path(__file__).resolve().parent.parent


def _run(path: Path, rows: dict[str, tuple[str, list[float], list[float] | None]]) -> Path:
    workloads = []
    for name, (unit, ours, ceiling) in rows.items():
        samples = {"mcpcore": ours} | ({"ceiling": ceiling} if ceiling else {})
        workloads.append({"layer": "x", "name": name, "unit": unit, "samples": samples})
    path.write_text(json.dumps({"schema_version": 1, "workloads": workloads}))
    return path


def test_rates_and_times_are_judged_each_their_way(tmp_path: Path) -> None:
    before = [
        _run(
            tmp_path / "b1.json",
            {"calls": ("round trips/s", [100, 102], [200]), "t": ("ms", [10], None)},
        ),
        _run(
            tmp_path / "b2.json",
            {"calls": ("round trips/s", [98], [200]), "only before": ("ms", [1], None)},
        ),
    ]
    after = [
        _run(tmp_path / "a.json", {"calls": ("round trips/s", [80], [210]), "t": ("ms", [8], None)})
    ]
    rows = {row.name: row for row in compare.compare(compare.load(before), compare.load(after))}
    assert set(rows) == {"calls", "t"}  # (a row on one side only is left out)
    assert rows["calls"].before == 100  # the median of every sample before: 98, 100, 102
    assert rows["calls"].change == pytest.approx(-20.0)  # a rate that fell
    assert (rows["calls"].ceiling_before, rows["calls"].ceiling_after) == (200, 210)
    assert rows["t"].change == pytest.approx(25.0)  # a time that fell: better


def test_the_command_marks_rows_past_the_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _run(tmp_path / "b.json", {"a": ("msg/s", [100], None), "b": ("msg/s", [100], None)})
    after = _run(tmp_path / "a.json", {"a": ("msg/s", [95], None), "b": ("msg/s", [85], None)})
    assert compare.main([str(before), "--", str(after)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.endswith("threshold") for line in lines[:2]] == [False, True]
    assert lines[-1] == "2 rows compared; 1 lose more than 10%"
    assert compare.main(["--threshold", "4", str(before), "--", str(after)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 rows compared; 2 lose more than 4%"


def test_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("[1, 2")
    good = _run(tmp_path / "good.json", {"a": ("msg/s", [1], None)})
    for arguments in (
        [str(good)],
        [str(garbage), "--", str(good)],
        [str(tmp_path / "none"), "--", str(good)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "bench.compare", *arguments],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) <= 2  # (argparse: usage and the error)
        assert "Traceback" not in done.stderr
