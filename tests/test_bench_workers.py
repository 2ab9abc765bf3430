"""The ``workers`` benchmark layer runs, and the pieces it stands on read what they should.

Smoke tests only: they check that every row has numbers and no errors, never how fast
anything was (a test never asserts a timing, see shared/PERF.md).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench import workers
from bench._procfs import CpuClock, connections_held, cpu_seconds_between, own_cpu_seconds
from bench._redis_server import command_counts, start_redis
from bench._report import OWN_RATIO_DEFINITION, format_table
from bench._results import MCPCORE, Target, WorkloadResult
from mcpcore_cli.bench.timing import Settings
from tests.test_bench_smoke import in_table, run_bench, workloads_by_name

WRK_INSTALLED = shutil.which("wrk") is not None
REDIS_RUNS = (
    shutil.which("redis-server") is not None and importlib.util.find_spec("hiredis") is not None
)
needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
COLUMNS = {
    "modern": [workers.ONE_WORKER, workers.TWO_WORKERS],
    "legacy": [workers.IN_MEMORY, workers.REDIS_ONE_WORKER, workers.REDIS_TWO_WORKERS],
}
REDIS_COLUMNS = {workers.REDIS_ONE_WORKER, workers.REDIS_TWO_WORKERS}


def test_quick_run_measures_every_column_of_both_rows_without_errors(tmp_path: Path) -> None:
    table, _, document = run_bench(tmp_path, "--only", "workers", "--repeat", "1")
    rows = workloads_by_name(document)
    names = {era: workers.workload_name(64, era) for era in COLUMNS}
    assert set(rows) == set(names.values())
    for era, name in names.items():
        row = rows[name]
        assert in_table(name, table)
        assert (row["layer"], row["unit"]) == ("workers", "round trips/s")
        parameters = row["parameters"]
        assert parameters["connections"] == 64, name
        assert parameters["load"] == ("wrk" if WRK_INSTALLED else "python"), name
        assert row["size_bytes"] > 0, name
        for column in COLUMNS[era]:
            prefix = workers._slug(column)
            if column in REDIS_COLUMNS and not REDIS_RUNS:
                assert row["values"][column] is None, column
                assert any(note.startswith(f"{column}: n/a") for note in row["notes"])
                continue
            assert column in table
            assert row["values"][column] > 0, (name, column)
            assert all(rate > 0 for rate in row["samples"][column]), (name, column)
            assert parameters[f"{prefix}_errors"] == 0, (name, column)
            assert parameters[f"{prefix}_p50_ms"] > 0, (name, column)
            assert parameters[f"{prefix}_cpu_us_per_request"] > 0, (name, column)
            assert parameters[f"{prefix}_workers"] == (2 if "2 workers" in column else 1)
        metrics = {target["metric"] for target in row["targets"]}
        if era == "modern":
            assert row["ratios"][workers.SCALING] > 0
            assert metrics == {workers.SCALING}
            # how the kernel spread wrk's connections over the two workers, per run
            assert parameters["2_workers_connections_per_worker"].count("+") == 1
        else:
            assert metrics == set(workers.CPU_COST.values())
            for ratio in (*workers.THROUGHPUT.values(), *workers.CPU_COST.values()):
                assert (row["ratios"][ratio] is not None) is REDIS_RUNS, ratio
            if REDIS_RUNS:  # a forwarded request is published: Redis saw commands
                assert parameters["redis_2_workers_redis_commands_per_request"] >= 0
                assert "redis_1_worker_redis_publish_per_request" in parameters


# ------------------------------------------------------------------ /proc


def test_the_cpu_clock_follows_children_and_counts_their_time() -> None:
    # The child burns 0.2 s of CPU, says so, and waits to be killed.
    burn = "end = time.process_time() + 0.2\nwhile time.process_time() < end: pass"
    with subprocess.Popen(
        [sys.executable, "-c", f"import sys, time\n{burn}\nprint(flush=True)\nsys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as child:
        try:
            clock = CpuClock((os.getpid(),))
            before = clock.read()
            assert {os.getpid(), child.pid} <= set(before)
            assert child.stdout is not None
            child.stdout.readline()  # (the child has burnt its CPU)
            after = clock.read()
        finally:
            child.kill()
    assert after[child.pid] >= 0.2
    assert cpu_seconds_between(before, after) > 0
    assert own_cpu_seconds() > 0


def test_connections_held_names_the_process_holding_each_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            with accepted:
                held = connections_held([os.getpid()], port)
                assert held == {os.getpid(): {client.getsockname()[1]}}
        assert connections_held([os.getpid()], port) == {os.getpid(): set()}


@needs_redis
def test_command_counts_count_what_redis_ran() -> None:
    with start_redis() as redis:
        assert redis is not None
        assert redis.url == f"redis://127.0.0.1:{redis.port}"
        before = command_counts(redis.port)
        with socket.create_connection(("127.0.0.1", redis.port)) as connection:
            connection.sendall(b"PING\r\nPING\r\n")
            received = b""
            while received.count(b"\r\n") < 2:
                received += connection.recv(64)
        after = command_counts(redis.port)
    assert after["ping"] - before.get("ping", 0) == 2
    assert "info" not in after


# ------------------------------------------------------------------ the table


def test_a_section_with_columns_of_its_own_gets_its_own_header() -> None:
    rows = [
        WorkloadResult(
            "codec", "tools/call request", 144, "msg/s", {MCPCORE: 1e6}, {MCPCORE: [1e6]}, {}
        ),
        WorkloadResult(
            "workers",
            "tools/call, 64 connections",
            500,
            "round trips/s",
            {"1 worker": 6000.0, "2 workers": None},
            {"1 worker": [6000.0]},
            {"2 workers/1 worker": None},
            targets=[Target("2 workers >= 1.7x", "2 workers/1 worker", 1.7)],
        ),
    ]
    table = format_table(rows, Settings(repeat=1, target_seconds=0.01)).splitlines()
    assert OWN_RATIO_DEFINITION.startswith(table[table.index("") - 2])  # (wrapped to 100)
    section = table.index("[workers: round trips per second]")
    header, rule, line, ratios = table[section + 1 : section + 5]
    assert header.split()[-4:] == ["1", "worker", "2", "workers"]
    assert len(rule) == len(header)
    assert line.split()[-2:] == ["6000", "n/a"]
    assert ratios.split() == ["2", "workers/1", "worker", "n/a"]  # (named in full)
    assert "1 worker" not in table[table.index("[codec: messages per second]") + 1]
    assert "2 workers >= 1.7x: n/a" in "\n".join(table)
