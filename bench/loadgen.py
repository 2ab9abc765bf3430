"""The loadgen layer: ``mcpcore bench run`` beside ``wrk``, against the same server.

Issue 20's acceptance: the load generator is not the bottleneck where the server is
saturated, i.e. against the same server and connection count ``mcpcore bench run``
sustains at least 85% of the throughput ``wrk`` measures, at 8 and 64 connections.

The server is ``python examples/everything.py --transport http`` (one worker, busy
polling off), started once; the workload is the **2026-07-28** ``tools/call`` of
``test_simple_text`` (JSON answers), every answer checked by both clients. At each
connection count (1, 8, 64, 256; 8 and 64 with ``--quick``) each repetition runs both
clients one after the other, in an order that alternates from one repetition to the
next, for 3 s each (1 s with ``--quick``):

* ``wrk``: ``bench/wrk/asgi_call.lua`` (`bench._asgi_load.WrkLoad`), ``min(c, 2)``
  threads, ``c`` connections;
* ``mcpcore``: the installed command, as a user runs it, in a process of its own:
  ``mcpcore bench run URL --tool test_simple_text --concurrency c --duration S
  --warmup 0``, its rate read from ``--json``.

Nothing is pinned: on this project's 2-CPU machine the server, the client and whatever
else runs share both CPUs (the numbers are the ratio's, measured side by side). The row
shows each client's median rate and the median of the per-repetition ratios.

    python -m bench --only loadgen --repeat 3
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

from bench._asgi_load import LoadRequest, WrkLoad
from bench._layer import Context, Layer
from bench._results import Target, WorkloadResult
from bench.workers import _BODIES, _HEADERS, EXPECTED_TEXT, ONE_WORKER, TOOL, Variant, _serve
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["CONNECTIONS", "LAYER", "QUICK_CONNECTIONS", "measure_ours", "run"]

#: The connection counts of a full run (the issue's), and of ``--quick``.
CONNECTIONS: Final = (1, 8, 64, 256)
QUICK_CONNECTIONS: Final = (8, 64)
#: Seconds each client loads the server per repetition (full, and ``--quick``).
SECONDS, QUICK_SECONDS = 3, 1
#: The issue's target: within 15% of wrk, where the server is saturated.
NOT_THE_BOTTLENECK: Final = Target("wrk >= 0.85x", "mcpcore/wrk", 0.85)
#: The connection counts the target applies to (at 1 nothing saturates the server; at 256
#: wrk's own socket errors make its number no reference).
TARGETED: Final = frozenset({8, 64})
#: Seconds a run of ours may take past its duration (start-up, connections, the report).
RUN_GRACE: Final = 60.0


def _command() -> list[str]:
    """How to run the installed ``mcpcore`` command of this interpreter."""
    found = shutil.which("mcpcore", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "mcpcore_cli.cli"]


def measure_ours(port: int, connections: int, seconds: int) -> float:
    """One ``mcpcore bench run``: successes per second.

    Raises:
        BenchmarkError: It failed, or counted an error.
    """
    with tempfile.TemporaryDirectory(prefix="bench-loadgen-") as directory:
        report = Path(directory) / "run.json"
        command = [
            *_command(),
            "bench",
            "run",
            f"http://127.0.0.1:{port}/mcp",
            "--tool",
            TOOL,
            "--mode",
            "modern",
            "--concurrency",
            str(connections),
            "--duration",
            str(seconds),
            "--warmup",
            "0",
            "--json",
            str(report),
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=seconds + RUN_GRACE
        )
        if done.returncode != 0 or not report.exists():
            raise BenchmarkError(f"mcpcore bench run failed: {done.stderr.strip()[-300:]}")
        (record,) = json.loads(report.read_text())
    if record["errors"]:
        raise BenchmarkError(f"mcpcore bench run counted errors: {record['errors_by_kind']}")
    rate: float = record["rps"]
    return rate


def _point(port: int, wrk: WrkLoad, connections: int, context: Context) -> WorkloadResult:
    seconds = QUICK_SECONDS if context.settings.quick else SECONDS
    request = LoadRequest(_BODIES["modern"], _HEADERS["modern"], EXPECTED_TEXT)
    rates: dict[str, list[float]] = {"mcpcore": [], "wrk": []}
    notes: list[str] = []
    for repetition in range(context.settings.repeat):
        order = ("wrk", "mcpcore") if repetition % 2 == 0 else ("mcpcore", "wrk")
        for column in order:
            if column == "wrk":
                result = wrk.run(port, request, connections, seconds)
                if result.errors:
                    notes.append(f"wrk at {connections}: {result.describe_errors()}")
                rates["wrk"].append(result.rate)
            else:
                rates["mcpcore"].append(measure_ours(port, connections, seconds))
    ratios = [ours / theirs for ours, theirs in zip(rates["mcpcore"], rates["wrk"], strict=True)]
    return WorkloadResult(
        layer=LAYER.name,
        name=f"2026-07-28 tools/call over HTTP to everything.py, {connections} connections",
        size_bytes=len(request.body),
        unit="round trips/s",
        values={column: statistics.median(values) for column, values in rates.items()},
        samples=rates,
        ratios={"mcpcore/wrk": statistics.median(ratios)},
        targets=[NOT_THE_BOTTLENECK] if connections in TARGETED else [],
        notes=notes,
        # (no "transport": the chart draws the transport layers' sweeps, not this one)
        parameters={"connections": connections, "era": "modern"},
    )


def run(context: Context) -> list[WorkloadResult]:
    """Each connection count, both clients interleaved (skipped without wrk)."""
    if shutil.which("wrk") is None:
        context.log("loadgen: needs wrk (apt-get install wrk): layer skipped")
        return []
    points = QUICK_CONNECTIONS if context.settings.quick else CONNECTIONS
    wrk = WrkLoad()
    results: list[WorkloadResult] = []
    try:
        with _serve(Variant(ONE_WORKER, 1, False), None) as server:
            for connections in points:
                context.log(f"loadgen: {connections} connections, wrk and mcpcore bench run")
                results.append(_point(server.port, wrk, connections, context))
    finally:
        wrk.close()
    return results


LAYER = Layer(
    "loadgen",
    "mcpcore bench run beside wrk against everything.py over HTTP (2026-07-28 tools/call) "
    "at 1/8/64/256 connections: the load generator is not the bottleneck",
    run,
)
