"""``python -m bench.fairness``: `serve_http` under ``wrk``, many keep-alive connections.

The latency tail of a loaded server: ``wrk`` (a C load generator, ``apt-get install
wrk``) keeps ``--connections`` connections each sending 2026-07-28 ``tools/call``
requests back to back (`bench/wrk/tools_call_modern.lua`) to one server process
(``bench/_http_servers.py mcpcore``: one worker, JSON replies), with busy polling on
(`bench._busy_poll.RECOMMENDED_BUSY_POLL`, the budget `transports` recommends) and off.
A fair server answers every request within a few rounds of the others: p99 a small
multiple of p50, nothing near a second (issue 15: p99 ~3 s at 256 connections, new
connections accepted one per turn of the scheduler).

    python -m bench.fairness                       # 256 connections, 5 runs of 10 s
    python -m bench.fairness --connections 64 --runs 3 --duration 5

Each run starts a fresh server (the variants interleaved, run by run) and prints wrk's
numbers; the table at the end has the median of each column. The percentiles are
wrk's, corrected for coordinated omission (see the Lua script); ">1 s" and ">2 s" are
the shares of that histogram above 1 and 2 seconds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from bench._busy_poll import RECOMMENDED_BUSY_POLL, server_arguments
from bench._listening import wait_listening
from bench._ports import reserve_port

__all__ = ["main", "run_once"]

_ROOT: Final = Path(__file__).resolve().parent.parent
SCRIPT: Final = _ROOT / "bench" / "wrk" / "tools_call_modern.lua"
#: Seconds a server process gets to start listening.
START_TIMEOUT: Final = 30.0
#: wrk's own timeout: a request slower than this is not in the histogram, only counted
#: as a timeout error (wrk's default, 2 s, would hide the tail this measures).
WRK_TIMEOUT: Final = "10s"
_COLUMNS: Final = ("rps", "p50", "p75", "p90", "p99", "p99.9", "max", "over1s", "over2s")


def run_once(busy_poll: float, connections: int, duration: int) -> dict[str, float]:
    """One wrk run against a fresh server: wrk's ``tail:`` line as numbers (ms, shares)."""
    port = reserve_port()
    command = [
        sys.executable,
        str(_ROOT / "bench" / "_http_servers.py"),
        *server_arguments(busy_poll),
        "mcpcore",
        str(port),
    ]
    server = subprocess.Popen(command, cwd=_ROOT)
    try:
        wait_listening(port, server, timeout=START_TIMEOUT)
        wrk = subprocess.run(
            [
                "wrk",
                f"-t{min(2, connections)}",
                f"-c{connections}",
                f"-d{duration}s",
                f"--timeout={WRK_TIMEOUT}",
                "-s",
                str(SCRIPT),
                f"http://127.0.0.1:{port}/mcp",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        server.terminate()
        server.wait()
    return _parse_tail(wrk.stdout)


def _parse_tail(output: str) -> dict[str, float]:
    """``tail: p50=1.2ms ... errors=0,0,0,0,0`` as a dict (the errors summed)."""
    line = next(line for line in output.splitlines() if line.startswith("tail:"))
    numbers: dict[str, float] = {}
    for field in line.split()[1:]:
        name, _, value = field.partition("=")
        if name == "errors":
            numbers[name] = sum(int(count) for count in value.split(","))
        else:
            numbers[name] = float(value.removesuffix("ms"))
    return numbers


def _row(label: str, numbers: dict[str, float]) -> str:
    cells = [f"{numbers['rps']:.0f}"]
    cells += [f"{numbers[name]:.1f}" for name in ("p50", "p75", "p90", "p99", "p99.9", "max")]
    cells += [f"{numbers[name]:.2%}" for name in ("over1s", "over2s")]
    cells.append(f"{numbers['errors']:.0f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench.fairness", description=__doc__)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--busy-poll",
        type=float,
        action="append",
        help=f"seconds (repeatable; default: {RECOMMENDED_BUSY_POLL:g} and 0)",
    )
    arguments = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    budgets = arguments.busy_poll or [RECOMMENDED_BUSY_POLL, 0.0]
    runs: dict[float, list[dict[str, float]]] = {budget: [] for budget in budgets}
    for index in range(arguments.runs):
        for budget in budgets:
            numbers = run_once(budget, arguments.connections, arguments.duration)
            runs[budget].append(numbers)
            print(_row(f"run {index + 1}, busy poll {budget:g} s", numbers), flush=True)
    print(f"\nmedians of {arguments.runs} runs, {arguments.connections} connections (ms)\n")
    print("| busy poll | req/s | p50 | p75 | p90 | p99 | p99.9 | max | >1 s | >2 s | errors |")
    print("|---|" + "---|" * 10)
    for budget, measured in runs.items():
        medians = {
            name: statistics.median(run[name] for run in measured) for name in (*_COLUMNS, "errors")
        }
        print(_row(f"{budget * 1e6:g} µs", medians))
    return 0


if __name__ == "__main__":
    sys.exit(main())
