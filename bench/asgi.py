"""The ASGI layer: the same tool from five ASGI apps on the same uvicorn, under ``wrk``.

Like with like: each server is its own ``uvicorn --loop uvloop --http httptools
--workers 1 --log-level warning`` process on 127.0.0.1 (`bench._asgi_apps`), so the
event loop, the HTTP parser and the IO policy are the same; only the app differs:

* ``mcpcore``: `transports.AsgiApp` serving `bench.dispatch.build_server`'s
  ``get_weather`` (the tool of every other HTTP layer);
* ``sdk``: the official SDK's ``MCPServer.streamable_http_app`` with the same tool
  (2026-07-28 row: stateless, JSON responses; 2025-11-25 row: sessions, JSON responses);
* ``core`` (2026-07-28 only): the floor of an MCP app on this core, `bench._asgi_apps.
  core_modern`: the core's own checks, decoding, dispatch and encoding of the call and
  nothing else (no protection, limits or streams): what mcpcore's transport adds is
  the gap between the two;
* ``minimal`` (2026-07-28 only): the same call answered by hand, `bench._asgi_apps.
  minimal_modern`: the headers compared with the body, Structs typed for this one call,
  the tool, mcpcore's very answer encoded. No rule beyond those: what the work itself
  costs in Python, so that the core's row shows what its generality adds;
* ``ceiling``: a bare ASGI app that reads the body, decodes it (msgspec) and answers
  mcpcore's result for the era under the request's id: what any JSON-RPC app on this
  uvicorn must at least pay.

The load comes from outside (`bench._asgi_load`): ``wrk`` where installed, so that the
client is never the bottleneck, else bench's own HTTP/1.1 client (the rows say which).
Each point (1, 8, 64, 256 connections; 8 alone with ``--quick``; or
``BENCH_ASGI_CONNECTIONS=1,8``) runs every server for a fixed time (3 s; 1 s with
``--quick``), the servers interleaved, ``--repeat`` times, in an order that rotates from
one repetition to the next. Every answer is checked (status 200, the tool's text, no
``isError``): a run with a wrong answer or a socket error is no measurement, and the
variant reads ``n/a`` at that point with the errors in the notes.

Both eras: 2026-07-28 ``tools/call`` (the ``_meta`` envelope, ``Mcp-Method`` and
``Mcp-Name`` headers: the very request mcpcore's client sends), and 2025-11-25
``tools/call`` in a session (``initialize`` and ``notifications/initialized`` sent once
per run from Python, then every request carries its ``Mcp-Session-Id``), JSON replies
both (mcpcore's app with ``replies="json"`` in 2025-11-25, whose default answers with
event streams; 2026-07-28 answers with a JSON body by default).

The tool is a plain ``def``; with ``BENCH_ASGI_TOOL=async`` it is an ``async def`` in
mcpcore's app, the SDK's and the core floor (`bench._asgi_apps.TOOL_VARIABLE`: the SDK
runs a plain ``def`` tool on a worker thread, an ``async def`` one in its event loop), and
the rows' names say so.

On a machine of 2 or more CPUs each server runs pinned to CPU 0 and the load generator
to the others (``taskset``), so that they do not take each other's core;
``BENCH_ASGI_PIN=0`` leaves the scheduler to place them.

    python -m bench --only asgi --repeat 5
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench._asgi_apps import REQUEST_HEADERS, TOOL_VARIABLE, tool_kind
from bench._asgi_load import LoadGenerator, LoadRequest, LoadResult, PythonLoad, WrkLoad
from bench._layer import Context, Layer
from bench._listening import wait_listening
from bench._ports import reserve_port
from bench._posting import TIMEOUT, open_session, post
from bench._results import MCPCORE, Target, WorkloadResult
from bench.stdio import ERAS, EXPECTED_TEXT, exchanged_lines
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "CONNECTIONS",
    "LAYER",
    "QUICK_CONNECTIONS",
    "connection_counts",
    "run",
    "workload_name",
]

_ROOT: Final = Path(__file__).resolve().parent.parent
#: The points of the sweep: connections kept busy at once (full run, ``--quick``).
CONNECTIONS: Final = (1, 8, 64, 256)
QUICK_CONNECTIONS: Final = (8,)
#: Seconds of load per server per point and repetition (full run, ``--quick``).
SECONDS, QUICK_SECONDS = 3, 1
#: Environment: the connection counts to measure (``"1,8"``), overriding the above.
CONNECTIONS_VARIABLE: Final = "BENCH_ASGI_CONNECTIONS"
#: Environment: ``"0"`` leaves the processes unpinned.
PIN_VARIABLE: Final = "BENCH_ASGI_PIN"
#: Environment: ``"python"`` uses bench's own client even where wrk is installed.
LOAD_VARIABLE: Final = "BENCH_ASGI_LOAD"
#: Seconds a server process gets to start listening.
START_TIMEOUT: Final = 60.0
#: The CPU the servers run on when pinned; the load generator gets the others.
SERVER_CPU: Final = 0

#: The columns, and the factory of `bench._asgi_apps` serving each (``_modern``,
#: ``_legacy`` appended).
FACTORIES: Final = {
    MCPCORE: "mcpcore",
    "sdk": "sdk",
    "core": "core",
    "minimal": "minimal",
    "ceiling": "echo",
}
#: Columns measured in one era only (their factory exists for that one).
_ERA_ONLY: Final = {"core": "modern", "minimal": "modern"}
#: The issue's goals, at every connection count, 2026-07-28.
BEATS_SDK: Final = Target("SDK >= 4x", "mcpcore/sdk", 4.0)
NEAR_ECHO: Final = Target("echo >= 0.6x", "mcpcore/ceiling", 0.6)
#: What each era's requests carry besides the body (2025-11-25: and the session's id).
#: The session id the ceiling is sent (it keeps no sessions): as long as mcpcore's.
_CEILING_SESSION: Final = "0" * 32


def workload_name(connections: int, era: str, tool: str = "def") -> str:
    """The row's name: ``tools/call over ASGI on uvicorn, JSON replies, 8 connections, …``.

    ``tool``: ``"async"`` for an ``async def`` tool (`bench._asgi_apps.tool_kind`).
    """
    plural = "connection" if connections == 1 else "connections"
    kind = ", async def tool" if tool == "async" else ""
    return (
        f"tools/call over ASGI on uvicorn, JSON replies{kind}, {connections} {plural}, "
        f"{era} ({ERAS[era]})"
    )


def connection_counts(context: Context) -> tuple[int, ...]:
    """The points to measure: `CONNECTIONS_VARIABLE` if set, else by ``--quick``."""
    chosen = os.environ.get(CONNECTIONS_VARIABLE, "").strip()
    if chosen:
        return tuple(int(count) for count in chosen.split(","))
    return QUICK_CONNECTIONS if context.settings.quick else CONNECTIONS


# ------------------------------------------------------------------ the policy


@dataclass(frozen=True)
class _Setup:
    """How every point of the run is measured."""

    load: LoadGenerator
    server_cpus: str | None
    uvicorn_options: tuple[str, ...]
    notes: tuple[str, ...]
    seconds: int
    tool: str = "def"


def _cpus() -> tuple[str | None, str | None]:
    """The servers' CPUs and the load generator's (None, None: unpinned)."""
    available = sorted(os.sched_getaffinity(0))
    if (
        os.environ.get(PIN_VARIABLE) == "0"
        or len(available) < 2
        or SERVER_CPU not in available
        or shutil.which("taskset") is None
    ):
        return None, None
    others = ",".join(str(cpu) for cpu in available if cpu != SERVER_CPU)
    return str(SERVER_CPU), others


def _uvicorn_options() -> tuple[tuple[str, ...], str]:
    """The loop and HTTP parser uvicorn runs, and what the rows say of them."""
    if all(importlib.util.find_spec(name) for name in ("uvloop", "httptools")):
        return ("--loop", "uvloop", "--http", "httptools"), "uvloop + httptools"
    return (
        ("--loop", "asyncio", "--http", "h11"),
        "asyncio + h11 (uvloop or httptools not installed: pip install -e '.[bench]')",
    )


def _setup(context: Context) -> _Setup:
    try:
        tool = tool_kind()
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from None
    server_cpus, load_cpus = _cpus()
    use_wrk = shutil.which("wrk") is not None and os.environ.get(LOAD_VARIABLE) != "python"
    load: LoadGenerator = WrkLoad(load_cpus) if use_wrk else PythonLoad(load_cpus)
    options, stack = _uvicorn_options()
    seconds = QUICK_SECONDS if context.settings.quick else SECONDS
    pinning = (
        f"each server pinned to CPU {server_cpus} (taskset), the load generator to CPU {load_cpus}"
        if server_cpus
        else "no CPU pinning: servers and load generator share the cores"
    )
    notes = (
        f"load: {load.description}; each connection POSTs back to back for {seconds} s per "
        f"run, {context.settings.repeat} runs per server, the servers interleaved",
        f"servers: uvicorn --workers 1 --log-level warning, {stack}, one process each; {pinning}",
        f"the tool: {_TOOL_NOTES[tool]}",
    )
    return _Setup(load, server_cpus, options, notes, seconds, tool)


# ------------------------------------------------------------ server processes


@contextmanager
def _server(factory: str, setup: _Setup) -> Iterator[int]:
    """A uvicorn process serving ``bench._asgi_apps:factory`` on a free port; its port."""
    port = reserve_port()
    command = [
        *([] if setup.server_cpus is None else ["taskset", "-c", setup.server_cpus]),
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        f"bench._asgi_apps:{factory}",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *setup.uvicorn_options,
        "--workers",
        "1",
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(
        command, cwd=_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_listening(port, process, timeout=START_TIMEOUT, name=factory)
        yield port
    finally:
        process.terminate()  # (uvicorn shuts down on SIGTERM: a profile is written)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _open_session(port: int) -> str:
    """A 2025-11-25 session, initialized, on a connection of its own."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        return open_session(connection)
    finally:
        connection.close()


def _request(column: str, port: int, era: str) -> LoadRequest:
    """The load's request to ``column``'s server on ``port``.

    2025-11-25: in a new session, whose id every request carries (the ceiling, which has
    no sessions, gets an id of the same length, so that it reads the same header bytes).
    """
    headers = REQUEST_HEADERS[era]
    if era == "legacy":
        session = _CEILING_SESSION if column == "ceiling" else _open_session(port)
        headers = (*headers, ("Mcp-Session-Id", session))
    return LoadRequest(exchanged_lines(era)[0], headers, EXPECTED_TEXT)


def _check(column: str, port: int, era: str) -> None:
    """One request, outside any timing: the server answers the tool's text."""
    request = _request(column, port, era)
    status, _, body = post(port, request.body, request.headers)
    if status != 200 or EXPECTED_TEXT.encode() not in body or b'"isError":true' in body:
        raise BenchmarkError(f"{column} ({era}) answered {status} {body[:300]!r}")


# ------------------------------------------------------------------ measuring


def _measure_era(
    context: Context, setup: _Setup, era: str, columns: Sequence[str], counts: Sequence[int]
) -> dict[int, dict[str, list[LoadResult]]]:
    """Every point of ``era``: each column's runs (one per repetition), interleaved."""
    settings = context.settings
    measured: dict[int, dict[str, list[LoadResult]]] = {}
    with ExitStack() as stack:
        ports = {
            column: stack.enter_context(_server(f"{FACTORIES[column]}_{era}", setup))
            for column in columns
        }
        for column, port in ports.items():
            _check(column, port, era)
            if not settings.quick:  # a warm-up, untimed (lazy imports, caches)
                setup.load.run(port, _request(column, port, era), counts[0], 1)
        for connections in counts:
            context.log(
                f"asgi: tools/call, {era}, {connections} connection"
                f"{'' if connections == 1 else 's'} ({setup.seconds} s per run, "
                f"{len(columns)} servers)"
            )
            runs: dict[str, list[LoadResult]] = {column: [] for column in columns}
            for repetition in range(settings.repeat):
                settings.report(f"repetition {repetition + 1}/{settings.repeat}")
                shift = repetition % len(columns)
                for column in (*columns[shift:], *columns[:shift]):
                    port = ports[column]
                    request = _request(column, port, era)
                    runs[column].append(setup.load.run(port, request, connections, setup.seconds))
            measured[connections] = runs
    return measured


def _row(
    era: str,
    connections: int,
    runs: dict[str, list[LoadResult]],
    *,
    unavailable: Sequence[str],
    setup: _Setup,
) -> WorkloadResult:
    """One row: medians, per-repetition ratios, latencies, errors, targets."""
    values: dict[str, float | None] = {}
    notes = list(setup.notes)
    for column, results in runs.items():
        failed = [result for result in results if result.errors]
        values[column] = None if failed else statistics.median(r.rate for r in results)
        if failed:
            errors = "; ".join(result.describe_errors() for result in failed)
            notes.append(f"{column}: n/a, {len(failed)} of {len(results)} runs failed: {errors}")
    for column in unavailable:
        values[column] = None
    ratios: dict[str, float | None] = {}
    for column in values:
        if column != MCPCORE:
            ratios[f"{MCPCORE}/{column}"] = _ratio(runs, values, MCPCORE, column)
    # (How far the bare echo itself outruns the SDK: what a ratio to the SDK can reach.)
    headroom = _ratio(runs, values, "ceiling", "sdk")
    if headroom is not None:
        asks = (
            f"; the {BEATS_SDK.label} target asks mcpcore for "
            f"{BEATS_SDK.threshold / headroom:.0%} of the ceiling's rate"
            if era == "modern"
            else ""
        )
        notes.append(
            f"ceiling/sdk {headroom:.2f}x: no app on this server beats the SDK by more{asks}"
        )
    latency = ", ".join(
        f"{column} {_median(r.p50_ms for r in results):.2f}/"
        f"{_median(r.p99_ms for r in results):.2f}, {max(r.max_ms for r in results):.0f}"
        for column, results in runs.items()
    )
    notes.append(f"latency p50/p99 ms (medians of the runs), largest: {latency}")
    request, result = exchanged_lines(era)
    notes.append(
        f"mcpcore request body {len(request)} B + result {len(result)} B; " + _SERVER_NOTES[era]
    )
    parameters: dict[str, str | int | float] = {
        "transport": "asgi",
        "era": era,
        "in_flight": connections,
        "connections": connections,
        "replies": "json",
        "busy_poll_seconds": 0,
        "seconds_per_run": setup.seconds,
        "load": "wrk" if isinstance(setup.load, WrkLoad) else "python",
        "pinned": int(setup.server_cpus is not None),
        "tool": setup.tool,
    }
    if headroom is not None:
        parameters["ceiling_over_sdk"] = headroom
    for column, results in runs.items():
        parameters[f"{column}_p50_ms"] = _median(r.p50_ms for r in results)
        parameters[f"{column}_p99_ms"] = _median(r.p99_ms for r in results)
        parameters[f"{column}_max_ms"] = max(r.max_ms for r in results)
        parameters[f"{column}_errors"] = sum(r.errors for r in results)
    return WorkloadResult(
        layer=LAYER.name,
        name=workload_name(connections, era, setup.tool),
        size_bytes=len(request) + len(result),
        unit="round trips/s",
        values=values,
        samples={column: [r.rate for r in results] for column, results in runs.items()},
        ratios=ratios,
        targets=[BEATS_SDK, NEAR_ECHO] if era == "modern" else [],
        notes=notes,
        parameters=parameters,
    )


def _median(numbers: Iterable[float]) -> float:
    return float(statistics.median(list(numbers)))


def _ratio(
    runs: dict[str, list[LoadResult]], values: dict[str, float | None], mine: str, other: str
) -> float | None:
    """The speed-up of ``mine`` over ``other``: the median of the per-repetition ratios."""
    if values.get(mine) is None or values.get(other) is None:
        return None
    pairs = zip(runs[mine], runs[other], strict=True)
    return _median(ours.rate / theirs.rate for ours, theirs in pairs)


_TOOL_NOTES: Final = {
    "def": "get_weather, a plain def (the SDK runs it on a worker thread; "
    f"{TOOL_VARIABLE}=async: an async def)",
    "async": f"get_weather, an async def ({TOOL_VARIABLE}=async) in mcpcore's, the SDK's "
    "and the core floor's servers",
}
_SERVER_NOTES: Final = {
    "modern": "mcpcore: AsgiApp(server) (default replies: a 2026-07-28 answer is a JSON "
    "body); sdk: MCPServer.streamable_http_app(json_response=True, stateless_http=True), "
    "its result also carries the text as structuredContent; core: the core's work alone "
    "(bench._asgi_apps.core_modern: no protection, limits or streams); minimal: the call "
    "answered by hand with Structs typed for it (bench._asgi_apps.minimal_modern: no rule "
    "beyond the headers, not an MCP server); ceiling: bare ASGI "
    "app, msgspec decode, mcpcore's result under the request's id",
    "legacy": 'mcpcore: AsgiApp(server, replies="json") (its default answers a 2025-11-25 '
    "POST with a primed event stream); sdk: MCPServer.streamable_http_app("
    "json_response=True, stateless_http=False); both in a session opened before each run "
    "(initialize, notifications/initialized), every request with its Mcp-Session-Id; "
    "core, minimal: n/a (2026-07-28 only); ceiling: bare ASGI app, msgspec decode, mcpcore's "
    "result under the request's id",
}


def run(context: Context) -> list[WorkloadResult]:
    """Measure every point of both eras (nothing without uvicorn: it says so on stderr)."""
    if importlib.util.find_spec("uvicorn") is None:
        context.log("asgi: uvicorn is not installed (pip install -e '.[bench]'): layer skipped")
        return []
    setup = _setup(context)
    sdk = ["sdk"] if "sdk" in context.available else []
    everyone = [MCPCORE, *sdk, "core", "minimal", "ceiling"]
    counts = connection_counts(context)
    results = []
    try:
        for era in ("modern", "legacy"):
            columns = [column for column in everyone if _ERA_ONLY.get(column, era) == era]
            unavailable = [column for column in FACTORIES if column not in columns]
            measured = _measure_era(context, setup, era, columns, counts)
            results += [
                _row(era, connections, measured[connections], unavailable=unavailable, setup=setup)
                for connections in counts
            ]
    finally:
        if isinstance(setup.load, WrkLoad):
            setup.load.close()
    return results


LAYER = Layer(
    "asgi",
    "tools/call from mcpcore's AsgiApp, the SDK's Starlette app, the core's work alone, "
    "the call answered by hand and a bare ASGI echo on the same uvicorn, under wrk (1 to 256 "
    "connections, both eras)",
    run,
)
