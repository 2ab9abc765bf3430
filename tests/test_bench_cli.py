"""``mcpcore bench``: its installed subcommands, the benchmarks behind it, their refusals.

Smoke tests only: the one run here is a single fast layer, checked for its numbers and
output, never for how fast anything was.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpcore_cli.cli import NO_BENCHMARKS, bench_subcommands, main, run_bench, run_bench_command

ROOT = Path(__file__).resolve().parent.parent


def mcpcore_command() -> str:
    command = shutil.which("mcpcore", path=str(Path(sys.executable).parent))
    assert command is not None
    return command


def test_mcpcore_bench_runs_the_benchmarks_with_their_arguments(tmp_path: Path) -> None:
    report = tmp_path / "codec.json"
    # Run from elsewhere than the checkout: the command finds the benchmarks by itself.
    completed = subprocess.run(
        [
            mcpcore_command(),
            "bench",
            "--quick",
            "--only",
            "codec",
            "--repeat",
            "1",
            "--without",
            "sdk",
            "--json",
            str(report),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "tools/call request" in completed.stdout
    assert "codec: tools/call request" in completed.stderr  # progress goes to stderr
    document = json.loads(report.read_text())
    assert document["settings"] == {"repeat": 1, "target_seconds": 0.01, "quick": True}
    assert {workload["layer"] for workload in document["workloads"]} == {"codec"}
    for workload in document["workloads"]:
        assert workload["values"]["mcpcore"] > 0


def test_mcpcore_bench_help_lists_run_then_the_benchmarks_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: mcpcore bench")
    commands = shown[: shown.index("--only")]
    assert "run       load-test an MCP server" in commands
    assert ("codec " in commands) == ("codec" in bench_subcommands())
    for option in ("--only", "--repeat", "--quick", "--json", "--plot", "--without"):
        assert option in shown


def test_the_installed_subcommands_go_to_their_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[argparse.Namespace] = []

    def run(arguments: argparse.Namespace) -> int:
        seen.append(arguments)
        return 7

    monkeypatch.setattr("mcpcore_cli.bench.run.run", run)
    assert main(["bench", "run", "http://127.0.0.1:1/mcp", "--tool", "t", "--requests", "3"]) == 7
    (arguments,) = seen
    assert (arguments.bench_command, arguments.target, arguments.tool) == (
        "run",
        ["http://127.0.0.1:1/mcp"],
        "t",
    )
    assert arguments.requests == 3


def test_without_a_checkout_mcpcore_bench_help_lists_run_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_bench_command(["--help"], checkout=tmp_path) == 0
    shown = capsys.readouterr().out
    assert "run       load-test an MCP server" in shown
    assert shown.endswith(NO_BENCHMARKS + "\n")


def test_mcpcore_help_lists_bench(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "bench" in capsys.readouterr().out


def test_bad_bench_arguments_are_refused_by_the_benchmarks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--only", "nonsense"])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: mcpcore bench")
    assert "invalid choice: 'nonsense'" in error


def test_without_a_checkout_mcpcore_bench_says_where_the_benchmarks_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An installation from the wheel: transports/ without bench/ next to it.
    assert run_bench(["--quick"], checkout=tmp_path) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == NO_BENCHMARKS + "\n"
    assert "pip install -e '.[bench]'" in captured.err


def test_the_checkout_is_where_the_benchmarks_are() -> None:
    assert (ROOT / "bench" / "__main__.py").is_file()
    assert run_bench.__defaults__ == (ROOT,)
