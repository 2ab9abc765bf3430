"""The storms, large and memory benchmark layers run, and their checks hold.

Smoke tests only: every workload produced numbers and the correctness checks inside
the layers held (a storm whose answers are wrong stops the run with an error, so a run
that completes has passed them). Never a timing (shared/PERF.md).
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import memory, storms
from bench._layer import Context
from bench._optional import Availability
from mcpcore_cli.bench.timing import Settings

ROOT = Path(__file__).parent.parent
SDK_INSTALLED = all(importlib.util.find_spec(name) for name in ("mcp", "mcp_types"))
ORJSON_INSTALLED = importlib.util.find_spec("orjson") is not None

PROGRESS_ROW = storms.PROGRESS_NAME.format(count=storms.QUICK_PROGRESS_COUNT)
CANCEL_ROW = storms.CANCEL_NAME.format(calls=storms.QUICK_CANCEL_CALLS)
LARGE_ROWS = {
    "resources/read result, 10 MiB text",
    "tools/list result, 1,000 tools",
    "1 MiB text result, decode only",
    "1 MiB text result, encode only",
    "10 MiB text result, decode only",
    "10 MiB text result, encode only",
    "resources/read of 1 MiB text over stdio",
    "resources/read of 10 MiB text over stdio",
    "tools/list of 1,000 tools over stdio",
}


def run_quick(tmp_path: Path, *layers: str) -> dict[str, dict[str, Any]]:
    """``python -m bench --quick --only ...``; the JSON report's workloads by name."""
    report = tmp_path / "bench.json"
    only = [option for layer in layers for option in ("--only", layer)]
    completed = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(report), *only],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document = json.loads(report.read_text())
    return {workload["name"]: workload for workload in document["workloads"]}


def assert_compared(workload: dict[str, Any], column: str, installed: bool) -> None:
    """The column has a number (and mcpcore a ratio to it) exactly when it could run."""
    value = workload["values"][column]
    ratio = workload["ratios"][f"mcpcore/{column}"]
    if installed:
        assert value is not None, (workload["name"], workload["notes"])
        assert value > 0, workload["name"]
        assert ratio is not None, workload["name"]
        assert ratio > 0, workload["name"]
    else:
        assert value is None, workload["name"]
        assert ratio is None, workload["name"]


def test_storms_and_large_layers_report_every_workload(tmp_path: Path) -> None:
    workloads = run_quick(tmp_path, "storms", "large")
    assert set(workloads) == {PROGRESS_ROW, CANCEL_ROW} | LARGE_ROWS
    for name, workload in workloads.items():
        assert workload["values"]["mcpcore"] > 0, name
        assert workload["samples"]["mcpcore"], name
        assert_compared(workload, "sdk", SDK_INSTALLED)
        assert not any("n/a:" in note for note in workload["notes"]), workload["notes"]
        # Over stdio, busy polling off (the library's default), the ceiling's too.
        if "over stdio" in name:
            assert workload["parameters"]["busy_poll_seconds"] == 0.0, name

    progress = workloads[PROGRESS_ROW]
    assert progress["unit"] == "msg/s"
    assert_compared(progress, "ceiling", True)
    # The SDK and the ceiling ran one callback per notification (checked in the layer);
    # mcpcore's ran at least once (the last progress always reaches it).
    [callbacks] = [note for note in progress["notes"] if note.startswith("progress callbacks")]
    counts = dict(re.findall(r"(mcpcore|sdk|ceiling) ([\d,]+)", callbacks))
    assert int(counts["ceiling"].replace(",", "")) == storms.QUICK_PROGRESS_COUNT
    assert 1 <= int(counts["mcpcore"].replace(",", "")) <= storms.QUICK_PROGRESS_COUNT

    cancel = workloads[CANCEL_ROW]
    assert cancel["unit"] == "ms"
    [settled] = [note for note in cancel["notes"] if note.startswith("per storm")]
    for column, cancelled, answered in re.findall(
        r"(mcpcore|sdk) ([\d,]+) cancelled, ([\d,]+) answered", settled
    ):
        total = int(cancelled.replace(",", "")) + int(answered.replace(",", ""))
        assert total == storms.QUICK_CANCEL_CALLS, (column, settled)
        assert int(cancelled.replace(",", "")) <= storms.QUICK_CANCEL_CALLS // 2, settled

    for name in LARGE_ROWS:
        workload = workloads[name]
        assert workload["size_bytes"] > 500_000, name
        if "over stdio" in name:
            assert workload["unit"] == "round trips/s", name
            assert any(note.startswith("latency p50/p99") for note in workload["notes"]), name
        else:
            assert workload["values"]["msgspec"] > 0, name
            assert_compared(workload, "orjson", ORJSON_INSTALLED)


def test_memory_layer_reports_bytes_per_session_and_per_request() -> None:
    settings = Settings(repeat=1, target_seconds=0.01, quick=True)
    results = memory.run(Context(settings, Availability()))
    assert [result.name for result in results] == [
        f"memory per idle legacy session (client + server), {memory.QUICK_SESSIONS:,} at once",
        f"memory per tools/call in flight (client + server), {memory.QUICK_IN_FLIGHT:,} at once",
        "memory per idle legacy session over Streamable HTTP, "
        f"{memory.QUICK_HTTP_SESSIONS:,} at once",
    ]
    for result in results:
        ours = result.value("mcpcore")
        sdk = result.value("sdk")
        assert ours is not None, result.name
        assert (sdk is not None) is SDK_INSTALLED, result.name
        assert (result.ratios["mcpcore/sdk"] is not None) is SDK_INSTALLED
        if "Streamable HTTP" not in result.name:
            # Traced Python memory: a session or a call holds some, far less than a MiB.
            # (The HTTP row is a process's RSS grown, which pages and arenas make coarse.)
            assert 0 < ours < 1024 * 1024, result.name
            assert sdk is None or sdk > 0, result.name
    core = [note for note in results[1].notes if "sans-IO Connections alone" in note]
    assert len(core) == 1


def test_cancel_storm_checks_catch_wrong_outcomes() -> None:
    calls = 6
    cancelled = storms._to_cancel(calls, [False, True, False, False, False, False])
    # Half of all calls, every other one among those still waiting first.
    assert cancelled == [0, 3, 5]
    answers = {index: str(index) for index in range(calls) if index not in cancelled}
    assert storms._check_cancel_storm(calls, cancelled, answers, set(cancelled)) is None
    # A cancelled call whose answer won the race is fine; a wrong answer is not.
    raced = {**answers, 3: "3"}
    assert storms._check_cancel_storm(calls, cancelled, raced, {0, 5}) is None
    wrong = {**answers, 1: "2"}
    assert "call 1" in str(storms._check_cancel_storm(calls, cancelled, wrong, set(cancelled)))
    # A call nobody cancelled must be answered; a cancelled one must settle somehow.
    missing = {index: text for index, text in answers.items() if index != 4}
    assert "call 4" in str(storms._check_cancel_storm(calls, cancelled, missing, set(cancelled)))
    assert storms._check_cancel_storm(calls, cancelled, answers, {0, 3}) is not None
    assert storms._check_cancel_storm(calls, [0], answers, {0, 1}) is not None
