"""`python -m bench --quick` runs, with and without the optional comparisons.

A smoke test only: it checks that every workload ran and produced numbers, never how
fast anything was (a test never asserts a timing, see shared/PERF.md).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent

#: The workloads the issue names; later layers may add more.
EXPECTED_WORKLOADS = {
    "tools/call request",
    "CallToolResult response",
    "resources/read result, 1 KiB text",
    "resources/read result, 1 MiB text",
    "tools/list result, 100 tools",
    "progress notification",
    "tools/call round trip, legacy (2025-11-25)",
    "tools/call round trip, modern (2026-07-28)",
    "tools/call via Server dispatch, legacy (2025-11-25)",
    "tools/call via Server dispatch, modern (2026-07-28)",
    "tools/call over stdio, sequential, legacy (2025-11-25)",
    "tools/call over stdio, sequential, modern (2026-07-28)",
    "tools/call over stdio, 100 in flight, legacy (2025-11-25)",
    "tools/call over stdio, 100 in flight, modern (2026-07-28)",
    "tools/call over HTTP, sequential, 1 connection, legacy (2025-11-25)",
    "tools/call over HTTP, sequential, 1 connection, modern (2026-07-28)",
    "tools/call over HTTP, 8 callers, legacy (2025-11-25)",
    "tools/call over HTTP, 8 callers, modern (2026-07-28)",
    "tools/call over WebSocket, sequential, legacy (2025-11-25)",
    "tools/call over WebSocket, sequential, modern (2026-07-28)",
    "tools/call over WebSocket, 100 in flight, legacy (2025-11-25)",
    "tools/call over WebSocket, 100 in flight, modern (2026-07-28)",
    "import time (net of interpreter start)",
}
SDK_INSTALLED = all(importlib.util.find_spec(name) for name in ("mcp", "mcp_types"))
#: Layers without an SDK column: the official SDK 2.x has no WebSocket transport.
NO_SDK_LAYERS = {"websocket"}


def run_bench(tmp_path: Path, *options: str) -> tuple[str, dict[str, Any]]:
    """Run a quick benchmark; return the printed table and the JSON report."""
    report = tmp_path / "bench.json"
    completed = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(report), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document: dict[str, Any] = json.loads(report.read_text())
    return completed.stdout, document


def workloads_by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {workload["name"]: workload for workload in document["workloads"]}


def assert_every_workload_has_mcpcore_numbers(document: dict[str, Any]) -> None:
    workloads = workloads_by_name(document)
    assert set(workloads) >= EXPECTED_WORKLOADS
    for name, workload in workloads.items():
        assert workload["values"]["mcpcore"] > 0, name
        assert workload["samples"]["mcpcore"], name


def test_quick_run_reports_every_workload(tmp_path: Path) -> None:
    table, document = run_bench(tmp_path)
    assert_every_workload_has_mcpcore_numbers(document)
    for name in EXPECTED_WORKLOADS:
        assert name in table
    assert document["settings"]["quick"] is True
    assert document["environment"]["packages"]["mcpcore"]
    codec = [w for w in document["workloads"] if w["layer"] == "codec"]
    for workload in codec:
        assert workload["size_bytes"] > 0
        for variant in ("msgspec", "json"):
            assert workload["values"][variant] > 0
            assert workload["ratios"][f"mcpcore/{variant}"] > 0
        assert any(target["metric"] == "mcpcore/msgspec" for target in workload["targets"])
    # The SDK column is filled exactly when the SDK is installed (CI installs no SDK).
    assert document["available"]["sdk"] is SDK_INSTALLED
    for name, workload in workloads_by_name(document).items():
        if workload["layer"] in NO_SDK_LAYERS:
            assert "sdk" not in workload["values"], name
        elif SDK_INSTALLED:
            assert workload["values"]["sdk"] > 0, name
            assert workload["ratios"]["mcpcore/sdk"] > 0, name
        else:
            assert workload["values"]["sdk"] is None, name
    dispatch = [w for w in document["workloads"] if w["layer"] == "dispatch"]
    assert len(dispatch) == 2
    for workload in dispatch:
        lowlevel = workload["values"]["sdk-lowlevel"]
        assert (lowlevel is not None and lowlevel > 0) is SDK_INSTALLED
        assert {t["metric"] for t in workload["targets"]} == {"mcpcore/sdk", "mcpcore/sdk-lowlevel"}
    assert_process_rows(document)
    assert_websocket_rows(document)


def assert_websocket_rows(document: dict[str, Any]) -> None:
    """WebSocket: mcpcore against the bare wsproto ceiling, the issue's targets."""
    rows = [w for w in document["workloads"] if w["layer"] == "websocket"]
    assert len(rows) == 4
    for workload in rows:
        name = workload["name"]
        assert workload["values"]["ceiling"] > 0, name
        assert workload["ratios"]["mcpcore/ceiling"] > 0, name
        assert workload["size_bytes"] > 0, name
        [target] = workload["targets"]
        assert target["metric"] == "mcpcore/ceiling", name
        assert target["threshold"] == (0.70 if "sequential" in name else 0.50), name
        latency = [note for note in workload["notes"] if note.startswith("latency p50/p99")]
        assert len(latency) == ("sequential" in name), name


def assert_process_rows(document: dict[str, Any]) -> None:
    """stdio and HTTP: the raw ceiling always runs, the sequential rows carry latencies."""
    stdio = [w for w in document["workloads"] if w["layer"] in ("stdio", "http")]
    assert len(stdio) == 8
    for workload in stdio:
        name = workload["name"]
        assert workload["values"]["ceiling"] > 0, name
        assert workload["ratios"]["mcpcore/ceiling"] > 0, name
        assert workload["size_bytes"] > 0, name
        metrics = {t["metric"] for t in workload["targets"]}
        if "sequential" in name:
            assert metrics == {"mcpcore/sdk", "mcpcore/ceiling"}, name
            [latency] = [note for note in workload["notes"] if note.startswith("latency p50/p99")]
            assert "mcpcore " in latency, name
            assert "ceiling " in latency, name
            assert ("sdk " in latency) is document["available"]["sdk"], name
        elif workload["layer"] == "stdio":
            assert metrics == {"mcpcore/sdk"}, name
        else:
            assert metrics == set(), name


def test_without_the_optional_libraries_their_columns_are_na(tmp_path: Path) -> None:
    table, document = run_bench(tmp_path, "--without", "sdk", "--without", "orjson")
    assert_every_workload_has_mcpcore_numbers(document)
    assert document["available"] == {"sdk": False, "orjson": False}
    for name, workload in workloads_by_name(document).items():
        if workload["layer"] in NO_SDK_LAYERS:
            continue
        assert workload["values"]["sdk"] is None, name
        assert workload["ratios"]["mcpcore/sdk"] is None, name
    tools_call = workloads_by_name(document)["tools/call request"]
    assert tools_call["values"]["orjson"] is None
    assert "n/a" in table
    assert_process_rows(document)
    assert_websocket_rows(document)
