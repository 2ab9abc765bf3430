"""The ``asgi`` benchmark layer runs, and its load generators count wrong answers as errors.

Smoke tests only: they check that every row has numbers and no errors, never how fast
anything was (a test never asserts a timing, see shared/PERF.md).
"""

from __future__ import annotations

import importlib.util
import shutil
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import _asgi_apps, asgi, asgi_profile
from bench._asgi_load import LoadRequest, PythonLoad, WrkLoad, parse_wrk
from bench._layer import Context
from bench._optional import Availability
from bench.stdio import EXPECTED_TEXT, exchanged_lines
from mcpcore_cli.bench.timing import Settings
from tests.test_bench_smoke import in_table, run_bench, workloads_by_name

ROOT = Path(__file__).parent.parent
UVICORN_INSTALLED = importlib.util.find_spec("uvicorn") is not None
needs_uvicorn = pytest.mark.skipif(not UVICORN_INSTALLED, reason="uvicorn is not installed")
SDK_INSTALLED = all(importlib.util.find_spec(name) for name in ("mcp", "mcp_types"))
WRK_INSTALLED = shutil.which("wrk") is not None
MODERN_HEADERS = (
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "get_weather"),
)


@needs_uvicorn
def test_quick_run_at_one_connection_count_has_both_eras_and_no_errors(tmp_path: Path) -> None:
    table, _, document = run_bench(tmp_path, "--only", "asgi", env={asgi.CONNECTIONS_VARIABLE: "8"})
    rows = workloads_by_name(document)
    assert set(rows) == {asgi.workload_name(8, "modern"), asgi.workload_name(8, "legacy")}
    columns = ["mcpcore", "ceiling", *(["sdk"] if SDK_INSTALLED else [])]
    for name, row in rows.items():
        assert in_table(name, table)
        assert row["layer"] == "asgi"
        assert row["unit"] == "round trips/s"
        parameters = row["parameters"]
        assert parameters["connections"] == 8, name
        assert parameters["load"] == ("wrk" if WRK_INSTALLED else "python"), name
        for column in columns:
            assert row["values"][column] > 0, (name, column)
            assert all(rate > 0 for rate in row["samples"][column]), (name, column)
            assert parameters[f"{column}_errors"] == 0, (name, column)
            assert parameters[f"{column}_p50_ms"] > 0, (name, column)
        assert row["ratios"]["mcpcore/ceiling"] > 0, name
        for column in ("core", "minimal"):  # (the core's floor, the call by hand: 2026-07-28)
            if "modern" in name:
                assert row["values"][column] > 0, (name, column)
                assert row["parameters"][f"{column}_errors"] == 0, (name, column)
                assert row["ratios"][f"mcpcore/{column}"] > 0, (name, column)
            else:
                assert row["values"][column] is None, (name, column)
        if SDK_INSTALLED:
            assert row["ratios"]["mcpcore/sdk"] > 0, name
            # (the echo's own lead over the SDK: the headroom any ratio to it has)
            samples = row["samples"]
            headroom = statistics.median(
                ceiling / sdk
                for ceiling, sdk in zip(samples["ceiling"], samples["sdk"], strict=True)
            )
            assert parameters["ceiling_over_sdk"] == pytest.approx(headroom), name
            assert any(f"ceiling/sdk {headroom:.2f}x" in note for note in row["notes"]), name
        else:
            assert row["values"]["sdk"] is None, name
        metrics = {target["metric"] for target in row["targets"]}
        assert metrics == ({"mcpcore/sdk", "mcpcore/ceiling"} if "modern" in name else set())


@pytest.fixture(scope="module")
def echo_port() -> Iterator[int]:
    """A uvicorn process serving the layer's bare ASGI echo (2026-07-28)."""
    setup = asgi._Setup(PythonLoad(), None, asgi._uvicorn_options()[0], (), 1)
    with asgi._server("echo_modern", setup) as port:
        yield port


def _request(expected: str = EXPECTED_TEXT) -> LoadRequest:
    return LoadRequest(exchanged_lines("modern")[0], MODERN_HEADERS, expected)


@needs_uvicorn
def test_the_python_fallback_counts_right_answers(echo_port: int) -> None:
    result = PythonLoad().run(echo_port, _request(), connections=2, seconds=1)
    assert result.answers > 0
    assert result.errors == 0
    assert result.rate > 0
    assert result.max_ms >= result.p99_ms >= result.p50_ms > 0


@needs_uvicorn
def test_the_python_fallback_counts_a_wrong_body_as_an_error(echo_port: int) -> None:
    result = PythonLoad().run(echo_port, _request("not in the answer"), connections=1, seconds=1)
    assert result.answers > 0
    assert result.bad_body == result.answers
    assert result.rate == 0


@needs_uvicorn
@pytest.mark.skipif(not WRK_INSTALLED, reason="wrk is not installed")
def test_wrk_counts_a_wrong_body_as_an_error(echo_port: int) -> None:
    load = WrkLoad()
    try:
        right = load.run(echo_port, _request(), connections=2, seconds=1)
        wrong = load.run(echo_port, _request("not in the answer"), connections=2, seconds=1)
    finally:
        load.close()
    assert right.answers > 0
    assert right.errors == 0
    assert wrong.answers > 0
    assert wrong.bad_body == wrong.answers
    assert wrong.rate == 0


def test_parse_wrk_reads_the_lua_script_s_line() -> None:
    line = (
        "Running 1s test\nasgi: requests=1000 duration_us=2000000 bad_status=3 bad_body=2 "
        "socket_errors=1,0,0,4 p50_us=1500 p90_us=2500 p99_us=9000 max_us=12000\n"
    )
    result = parse_wrk(line)
    assert (result.answers, result.seconds) == (1000, 2.0)
    assert (result.bad_status, result.bad_body, result.socket_errors) == (3, 2, 5)
    assert (result.p50_ms, result.p99_ms, result.max_ms) == (1.5, 9.0, 12.0)
    assert result.errors == 10
    assert result.rate == 497.5
    assert "3 answers not 200" in result.describe_errors()


def test_the_connection_counts_follow_quick_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def context(quick: bool) -> Context:
        return Context(Settings(repeat=1, target_seconds=0.01, quick=quick), Availability())

    monkeypatch.delenv(asgi.CONNECTIONS_VARIABLE, raising=False)
    assert asgi.connection_counts(context(quick=False)) == (1, 8, 64, 256)
    assert asgi.connection_counts(context(quick=True)) == (8,)
    monkeypatch.setenv(asgi.CONNECTIONS_VARIABLE, "64,256")
    assert asgi.connection_counts(context(quick=True)) == (64, 256)


def test_the_tool_kind_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_asgi_apps.TOOL_VARIABLE, raising=False)
    assert _asgi_apps.tool_kind() == "def"
    assert _asgi_apps.mcpcore_modern().server.tools.standalone("get_weather").awaits is False
    monkeypatch.setenv(_asgi_apps.TOOL_VARIABLE, "async")
    assert _asgi_apps.tool_kind() == "async"
    assert _asgi_apps.mcpcore_modern().server.tools.standalone("get_weather").awaits is True
    assert "async def tool" in asgi.workload_name(8, "modern", "async")
    assert "async" not in asgi.workload_name(8, "modern")
    monkeypatch.setenv(_asgi_apps.TOOL_VARIABLE, "sync")
    with pytest.raises(ValueError, match="BENCH_ASGI_TOOL='sync'"):
        _asgi_apps.tool_kind()


def test_every_app_answers_the_call_of_an_async_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """In process (`bench.asgi_profile`, which checks each app's answer before timing it)."""
    monkeypatch.setenv(_asgi_apps.TOOL_VARIABLE, "async")
    costs = asgi_profile.per_request("modern", requests=5, runs=1)
    expected = {"mcpcore", "core", "minimal", "ceiling", *(["sdk"] if SDK_INSTALLED else [])}
    assert set(costs) == expected
    assert all(cost > 0 for cost in costs.values())
