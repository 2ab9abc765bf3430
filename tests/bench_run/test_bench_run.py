"""``mcpcore bench run`` against real servers: its counts are the servers' own.

Every server is started by the test (or, over stdio, by the command), on 127.0.0.1; each
run is a few dozen requests (``--requests``), so that the tests check counts, never
timings. The servers are mcpcore's (`transports.serve_http` in both eras, WebSocket,
stdio) and the official SDK's (``MCPServer`` over stdio and over Streamable HTTP under
uvicorn), each in both eras.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest

from bench._ports import reserve_port
from mcpcore_cli.bench.operations import TOOL_ERROR
from mcpcore_cli.cli import main
from tests.bench_run.conftest import CountingServer

pytestmark = pytest.mark.timeout(120)

#: Requests per level: enough for every worker to send several, few enough to be quick.
REQUESTS: Final = 40
#: The fields every --json record has (the issue's, and the rest of the table's).
RECORD_FIELDS: Final = {
    "concurrency",
    "requests",
    "errors",
    "rps",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    "errors_by_kind",
    "warmup_requests",
    "protocol_version",
    "target",
    "operation",
}
MODERN, LEGACY = "2026-07-28", "2025-11-25"


def bench(
    server: CountingServer, tmp_path: Path, *options: str, warmup: str = "0"
) -> tuple[int, list[dict[str, Any]]]:
    """Run ``mcpcore bench run`` with ``options`` against ``server``: status and records."""
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    target = server.target
    url = [] if target[0] == "--" else target
    command = [*(target if target[0] == "--" else [])]
    argv = ["bench", "run", *url, "--warmup", warmup, "--json", str(report), *options, *command]
    status = main(argv)
    records = json.loads(report.read_text()) if report.exists() else []
    return status, records


# (server, --mode, the era the run must have spoken)
CASES = [
    ("mcpcore http", "modern", MODERN),
    ("mcpcore http", "legacy", LEGACY),
    ("mcpcore http", "auto", MODERN),
    ("mcpcore ws", "modern", MODERN),
    ("mcpcore ws", "legacy", LEGACY),
    ("mcpcore stdio", "modern", MODERN),
    ("mcpcore stdio", "legacy", LEGACY),
    ("sdk http", "legacy", LEGACY),
    ("sdk http", "modern", MODERN),
    ("sdk http", "auto", MODERN),
    # (the 2024-11-05 HTTP+SSE transport: its GET stream holds a connection of its own)
    ("sdk sse", "legacy", LEGACY),
    ("sdk stdio", "legacy", LEGACY),
    ("sdk stdio", "modern", MODERN),
]


@pytest.mark.parametrize(
    ("counting_server", "mode", "era"),
    CASES,
    indirect=["counting_server"],
    ids=[f"{server}-{mode}".replace(" ", "-") for server, mode, _ in CASES],
)
def test_the_reported_count_is_the_servers(
    counting_server: CountingServer, mode: str, era: str, tmp_path: Path
) -> None:
    status, records = bench(
        counting_server,
        tmp_path,
        "--tool",
        "echo",
        "--args",
        '{"text": "hello"}',
        "--mode",
        mode,
        "--requests",
        str(REQUESTS),
        "--concurrency",
        "1,4",
    )
    assert status == 0
    assert [record["concurrency"] for record in records] == [1, 4]
    for record in records:
        assert set(record) >= RECORD_FIELDS
        assert (record["requests"], record["errors"]) == (REQUESTS, 0)
        assert record["protocol_version"] == era
        assert record["rps"] > 0
        assert 0 < record["p50_ms"] <= record["p99_ms"] <= record["max_ms"]
    assert counting_server.counts() == {"echo": 2 * REQUESTS}


ERROR_CASES = [
    ("mcpcore http", "fail", TOOL_ERROR, {"fail": REQUESTS}),
    ("mcpcore http", "nonexistent", "JSON-RPC error -32602", {}),
    ("mcpcore stdio", "fail", TOOL_ERROR, {"fail": REQUESTS}),
    ("sdk http", "fail", TOOL_ERROR, {"fail": REQUESTS}),
]


@pytest.mark.parametrize(
    ("counting_server", "case"),
    [(server, case) for server, *case in ERROR_CASES],
    indirect=["counting_server"],
    ids=[f"{server}-{tool}".replace(" ", "-") for server, tool, _, _ in ERROR_CASES],
)
def test_an_error_answer_is_an_error_of_its_kind(
    counting_server: CountingServer,
    case: tuple[str, str, dict[str, int]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tool, kind, counted = case
    status, records = bench(
        counting_server, tmp_path, "--tool", tool, "--requests", str(REQUESTS), "--concurrency", "2"
    )
    assert status == 1  # every request failed
    (record,) = records
    assert record["requests"] == record["errors"] == REQUESTS
    assert record["rps"] == 0
    if counting_server.target[0] == "--" or "sdk" not in str(counting_server.target):
        assert record["errors_by_kind"] == {kind: REQUESTS}
    assert counting_server.counts() == counted
    captured = capsys.readouterr()
    assert f"{REQUESTS} x {kind}" in captured.out
    assert captured.err == "mcpcore bench run: every request failed\n"


@pytest.mark.parametrize("counting_server", ["sdk http"], indirect=True)
def test_the_sdks_unknown_tool_is_an_error(counting_server: CountingServer, tmp_path: Path) -> None:
    status, records = bench(counting_server, tmp_path, "--tool", "nonexistent", "--requests", "5")
    assert status == 1
    assert all(record["errors"] == record["requests"] == 5 for record in records)
    assert all(record["errors_by_kind"] for record in records)
    assert counting_server.counts() == {}


@pytest.mark.parametrize("counting_server", ["mcpcore http", "sdk stdio"], indirect=True)
def test_resources_and_prompts_are_counted(counting_server: CountingServer, tmp_path: Path) -> None:
    status, records = bench(
        counting_server,
        tmp_path,
        "--resource",
        "count://answers",
        "--requests",
        "10",
        "--concurrency",
        "3",
    )
    assert status == 0
    assert records[0]["operation"] == "resources/read count://answers"
    status, records = bench(
        counting_server,
        tmp_path,
        "--prompt",
        "greet",
        "--args",
        '{"name": "Ada"}',
        "--requests",
        "10",
        "--concurrency",
        "3",
    )
    assert status == 0
    assert records[0]["operation"] == "prompts/get greet"
    assert counting_server.counts() == {"resource": 10, "prompt": 10}


@pytest.mark.parametrize("counting_server", ["mcpcore http"], indirect=True)
def test_an_open_loop_sends_rate_times_duration(
    counting_server: CountingServer, tmp_path: Path
) -> None:
    # 200/s for 0.25 s: 50 requests due, all sent (the in-flight bound is far off).
    args = ["--tool", "echo", "--args", '{"text": "x"}', "--concurrency", "4"]
    status, records = bench(counting_server, tmp_path, *args, "--rate", "200", "--duration", "0.25")
    assert status == 0
    (record,) = records
    assert (record["rate"], record["requests"], record["errors"]) == (200, 50, 0)
    # By count, the rate only spaces them.
    status, records = bench(counting_server, tmp_path, *args, "--rate", "400", "--requests", "30")
    assert status == 0
    assert (records[0]["requests"], records[0]["errors"]) == (30, 0)
    assert counting_server.counts() == {"echo": 80}


@pytest.mark.parametrize("counting_server", ["mcpcore ws"], indirect=True)
def test_the_warmup_is_reported_apart(counting_server: CountingServer, tmp_path: Path) -> None:
    status, records = bench(
        counting_server,
        tmp_path,
        "--tool",
        "echo",
        "--args",
        '{"text": "x"}',
        "--requests",
        "20",
        "--concurrency",
        "2",
        warmup="0.1",
    )
    assert status == 0
    (record,) = records
    assert record["requests"] == 20
    assert record["warmup_requests"] > 0
    assert counting_server.counts() == {"echo": 20 + record["warmup_requests"]}


@pytest.mark.parametrize("counting_server", ["mcpcore http"], indirect=True)
def test_the_table_fits_80_columns_and_the_chart_is_drawn(
    counting_server: CountingServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart.png"
    status, records = bench(
        counting_server,
        tmp_path,
        "--tool",
        "echo",
        "--args",
        '{"text": "x"}',
        "--requests",
        "10",
        "--concurrency",
        "1,2,256",
        "--plot",
        str(chart),
    )
    assert status == 0
    assert len(records) == 3
    output = capsys.readouterr()
    lines = output.out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert any("p99.9" in line for line in lines)
    assert output.err == ""  # no progress bar for a short run off a terminal
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_an_unreachable_url_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    port = reserve_port()  # nothing listens on it: the connection is refused
    status = main(
        ["bench", "run", f"http://127.0.0.1:{port}/mcp", "--tool", "x", "--requests", "1"]
    )
    assert status == 1
    error = capsys.readouterr().err
    assert error.startswith(f"mcpcore bench run: can't load http://127.0.0.1:{port}/mcp: ")
    assert error.count("\n") == 1


def test_a_command_that_does_not_start_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no-such-server")
    status = main(["bench", "run", "--tool", "x", "--requests", "1", "--", missing])
    assert status == 1
    error = capsys.readouterr().err
    assert error.startswith(f"mcpcore bench run: can't load {missing}: ")
    assert error.count("\n") == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--tool", "x"], "give a URL"),
        (["ftp://host/x", "--tool", "x"], "must be http(s):// or ws(s)://"),
        (["http://127.0.0.1:1/mcp", "--resource", "a://b", "--args", "{}"], "--args goes with"),
        (["http://127.0.0.1:1/mcp", "--prompt", "p", "--args", '{"a": 1}'], "are strings"),
    ],
)
def test_arguments_that_make_no_test_are_refused(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "run", *arguments]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments",
    [
        ["http://x/mcp"],  # neither --tool nor --resource nor --prompt
        ["http://x/mcp", "--tool", "t", "--concurrency", "0"],
        ["http://x/mcp", "--tool", "t", "--requests", "5", "--duration", "1"],
        ["http://x/mcp", "--tool", "t", "--args", "[1]"],
        ["http://x/mcp", "--tool", "t", "--timeout", "600"],
    ],
)
def test_bad_options_are_refused_by_argparse(arguments: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "run", *arguments])
    assert exited.value.code == 2


def test_without_the_extra_it_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mcpcore_cli.bench

    for module in list(sys.modules):
        if module.startswith(("mcpcore_cli.bench.", "hdrh")) and module != "mcpcore_cli.bench.run":
            monkeypatch.delitem(sys.modules, module)
            # (`from mcpcore_cli.bench import loadtest` would find the package's attribute)
            monkeypatch.delattr(mcpcore_cli.bench, module.rpartition(".")[2], raising=False)
    monkeypatch.setitem(sys.modules, "hdrh", None)  # (an import of it fails)
    status = main(["bench", "run", "http://127.0.0.1:1/mcp", "--tool", "x"])
    assert status == 2
    assert capsys.readouterr().err == (
        "mcpcore bench run: needs hdrh.histogram, which is not installed: "
        "pip install 'mcpcore[bench]'\n"
    )


def test_the_installed_command_runs_from_anywhere(tmp_path: Path) -> None:
    command = shutil.which("mcpcore", path=str(Path(sys.executable).parent))
    assert command is not None
    script = Path(__file__).resolve().parent / "counting_server.py"
    completed = subprocess.run(
        [
            command,
            "bench",
            "run",
            "--tool",
            "echo",
            "--args",
            '{"text": "x"}',
            "--requests",
            "5",
            "--concurrency",
            "1",
            "--warmup",
            "0",
            "--",
            sys.executable,
            str(script),
            "mcpcore",
            "stdio",
            str(tmp_path / "counts.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "tools/call echo" in completed.stdout
    assert json.loads((tmp_path / "counts.json").read_text()) == {"echo": 5}
