"""The memory layer: bytes per idle session and per request in flight.

Every measurement runs in a fresh interpreter (``python -m bench.memory --probe NAME
COUNT [--rss]``), so that no run inherits another's heap. Inside, the probe imports and
builds everything it needs first (the server, one warm-up session), then measures
``COUNT`` more of the thing, keeping them all alive:

* with ``tracemalloc`` (the default): the Python heap retained by the ``COUNT`` objects
  (current traced size after minus before) and the peak while they were made, each
  divided by ``COUNT``;
* with ``--rss`` (a separate process, tracemalloc off): the resident set size grown
  (``/proc/self/statm`` after minus before), divided by ``COUNT``; this includes the
  allocator's slack and what C extensions allocate outside Python's allocator. Not
  measured with ``--quick`` (each probe process costs seconds of imports).

The table shows the tracemalloc bytes retained (lower is better; the ratio is
``sdk / mcpcore``, above 1 mcpcore uses less); the notes give peak and RSS.

Workloads (both in memory, client and server in one process, asyncio):

* **idle legacy sessions** (`SESSIONS`, `QUICK_SESSIONS` with ``--quick``): each
  session has done its ``initialize`` handshake (2025-11-25) and has nothing in
  flight. ``mcpcore``: a `mcpcore.client.ClientSession` joined to one shared
  `mcpcore.server.Server` by `bench.dispatch.MemoryDriver` (a server `Connection`
  attached to the server, and a client `Connection`), ``connect("legacy")``.
  ``sdk``: ``mcp.Client(server, mode="legacy")`` entered against one shared
  ``MCPServer`` (its in-memory streams and the server's run loop in a task, per
  session).
* **requests in flight** (`IN_FLIGHT`, `QUICK_IN_FLIGHT` with ``--quick``): one
  session, and that many ``tools/call`` waiting at once, each in its own task, each
  tool handler parked on an event. ``mcpcore``: one caller task per call on a
  `MemoryDriver` pair (the handler runs inside the caller's task, so one task per
  request holds the client's pending call, the server's incoming request and the
  handler). ``sdk``: one caller task per call on ``mcp.Client(server)``, each handler
  in a server task of its own. Once every handler has started, the memory is read;
  then the event is set and every call must return its own answer (checked). The
  notes also give what mcpcore's sans-IO `Connection`s alone hold per request in
  flight (a client `Connection` after ``send_request``, a server `Connection` after
  ``receive``, no tasks).

Over Streamable HTTP, **idle legacy sessions** (`HTTP_SESSIONS`,
`QUICK_HTTP_SESSIONS` with ``--quick``) are measured on the server *process*: a fresh
server per measurement, `HTTP_WARM_UP` sessions opened untimed, its RSS read
(``/proc/PID/statm``), then ``COUNT`` more sessions (``initialize`` then
``notifications/initialized``, 2025-11-25, one keep-alive connection, the session ids
simply kept by nobody), and the RSS grown divided by ``COUNT``. ``mcpcore``:
`transports.serve_http` serving `bench.dispatch.build_server`
(``bench/_http_servers.py mcpcore``). ``sdk``: its ``MCPServer`` as
``streamable_http_app(json_response=True)`` (stateful: sessions need it) on uvicorn
(``bench/_workload_servers.py sdk sessions``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import os
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Final, NoReturn

from bench._layer import Context, Layer
from bench._listening import wait_listening
from bench._ports import reserve_port
from bench._results import MCPCORE, NOT_AVAILABLE, Unit, WorkloadResult
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "HTTP_SESSIONS",
    "IN_FLIGHT",
    "LAYER",
    "QUICK_HTTP_SESSIONS",
    "QUICK_IN_FLIGHT",
    "QUICK_SESSIONS",
    "SESSIONS",
    "http_sessions",
    "probe",
    "run",
]

#: Idle sessions per measurement: the issue's 1,000 (``--quick``: 20).
SESSIONS, QUICK_SESSIONS = 1_000, 20
#: Requests in flight per measurement: the issue's 10,000 (``--quick``: 200).
IN_FLIGHT, QUICK_IN_FLIGHT = 10_000, 200
#: Idle sessions opened over Streamable HTTP per measurement (``--quick``: 100, enough
#: to grow the server's RSS by pages rather than by noise). mcpcore's server holds at
#: most 1,024 sessions (`transports` ``MAX_SESSIONS``): the warm-up's and these fit.
HTTP_SESSIONS, QUICK_HTTP_SESSIONS = 1_000, 100
#: Sessions opened before the baseline is read (lazy imports, first-use caches).
HTTP_WARM_UP: Final = 5
#: Seconds an HTTP server process may take to listen, and one request to be answered.
HTTP_START_TIMEOUT, HTTP_REQUEST_TIMEOUT = 60.0, 30.0
#: Fresh processes per probe and kind of measurement (the median is reported): memory
#: counts barely move between runs, and each run pays an interpreter and its imports.
RUNS, QUICK_RUNS = 3, 1
#: Seconds one probe process may take.
PROBE_TIMEOUT: Final = 300.0
#: The unit of this layer's rows: bytes, lower is better, ratios ``other / mcpcore``.
#: (``python -m bench.memory`` prints this layer's rows alone.)
BYTES: Final[Unit] = "bytes"

_ROOT = Path(__file__).resolve().parent.parent
_ARGUMENTS = {"location": "New York", "units": "metric"}


# ---------------------------------------------------------------- inside a probe


class _Meter:
    """Reads the memory a probe's objects hold: tracemalloc, or RSS."""

    def __init__(self, rss: bool) -> None:
        self._rss = rss
        self._before = 0
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _resident(self) -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * self._page

    def start(self) -> None:
        """Mark the baseline (after everything shared was built)."""
        if self._rss:
            self._before = self._resident()
        else:
            tracemalloc.reset_peak()
            self._before = tracemalloc.get_traced_memory()[0]

    def read(self, count: int) -> dict[str, float]:
        """Bytes per object since `start`."""
        if self._rss:
            return {"rss": (self._resident() - self._before) / count}
        current, peak = tracemalloc.get_traced_memory()
        return {"retained": (current - self._before) / count, "peak": (peak - self._before) / count}


async def _wait_for(condition: Callable[[], bool]) -> None:
    """Yield to the other tasks until ``condition()``, bounded in time."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PROBE_TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise BenchmarkError(f"not ready within {PROBE_TIMEOUT:g} s")
        await asyncio.sleep(0)


async def _mcpcore_sessions(count: int, meter: _Meter) -> dict[str, float]:
    from bench.dispatch import MemoryDriver, build_server

    server = build_server()
    await MemoryDriver(server).session.connect("legacy")  # warm-up: every import done
    meter.start()
    sessions = []
    for _ in range(count):
        session = MemoryDriver(server).session
        await session.connect("legacy")
        sessions.append(session)
    return meter.read(count)


async def _sdk_sessions(count: int, meter: _Meter) -> NoReturn:
    from mcp import Client

    from bench.dispatch import weather
    from bench.sdk_dispatch import high_level_server

    server = high_level_server(weather)
    # Never closed: the process ends once the numbers are out (closing a thousand
    # sessions measures nothing and takes seconds).
    stack = AsyncExitStack()
    await stack.enter_async_context(Client(server, mode="legacy"))  # warm-up
    meter.start()
    for _ in range(count):
        await stack.enter_async_context(Client(server, mode="legacy"))
    os._exit(_report(meter.read(count)))


def _core_in_flight(count: int) -> dict[str, float]:
    """What mcpcore's sans-IO Connections alone hold per request in flight."""
    from mcpcore import CLIENT, SERVER, Connection, types

    client = Connection(CLIENT)
    server = Connection(SERVER)
    client.start_modern()
    params = types.CallToolRequestParams(name="get_weather", arguments=_ARGUMENTS)
    before = tracemalloc.get_traced_memory()[0]
    requests = [client.send_request("tools/call", params)[1] for _ in range(count)]
    middle = tracemalloc.get_traced_memory()[0]
    for data in requests:
        server.receive(data)
    after = tracemalloc.get_traced_memory()[0]
    if server.requests_in_flight != count or len(client.pending_requests) != count:
        raise BenchmarkError("the Connections do not hold every request")
    del requests  # (the bytes sent are the driver's, not the Connection's)
    return {
        "core_client": (middle - before) / count,
        "core_server": (after - middle) / count,
    }


async def _mcpcore_in_flight(count: int, meter: _Meter) -> dict[str, float]:
    from bench.dispatch import MemoryDriver
    from mcpcore.server import Server

    release = asyncio.Event()
    started = 0
    server = Server("mcpcore-bench-memory", "1.0")

    @server.tool()
    async def wait(index: int) -> str:
        """Wait for the release, then answer the index."""
        nonlocal started
        started += 1
        await release.wait()
        return str(index)

    session = MemoryDriver(server).session
    await session.connect("legacy")
    await _call_wait(session.call_tool, 0, release, warm_up=True)
    started = 0
    meter.start()
    tasks = [asyncio.create_task(_call_wait(session.call_tool, i, release)) for i in range(count)]
    await _wait_for(lambda: started == count)
    measured = meter.read(count)
    release.set()
    await _check_answers(tasks)
    return measured


async def _sdk_in_flight(count: int, meter: _Meter) -> dict[str, float]:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    release = asyncio.Event()
    started = 0
    server = MCPServer("sdk-bench-memory")

    async def wait(index: int) -> str:
        """Wait for the release, then answer the index."""
        nonlocal started
        started += 1
        await release.wait()
        return str(index)

    server.tool()(wait)
    async with Client(server, mode="legacy") as client:
        await _call_wait(client.call_tool, 0, release, warm_up=True)
        started = 0
        meter.start()
        tasks = [
            asyncio.create_task(_call_wait(client.call_tool, i, release)) for i in range(count)
        ]
        await _wait_for(lambda: started == count)
        measured = meter.read(count)
        release.set()
        await _check_answers(tasks)
    return measured


async def _call_wait(
    call: Callable[..., Awaitable[Any]], index: int, release: asyncio.Event, warm_up: bool = False
) -> bool:
    """Call ``wait(index)``; whether it answered its own index."""
    if warm_up:
        release.set()
    result = await call("wait", {"index": index})
    if warm_up:
        release.clear()
    return str(getattr(result.content[0], "text", "")) == str(index)


async def _check_answers(tasks: list[asyncio.Task[bool]]) -> None:
    answers = await asyncio.wait_for(asyncio.gather(*tasks), PROBE_TIMEOUT)
    if not all(answers):
        raise BenchmarkError(f"{answers.count(False)} calls did not get their own answer")


_PROBES: dict[str, Callable[[int, _Meter], Coroutine[Any, Any, dict[str, float]]]] = {
    "mcpcore-sessions": _mcpcore_sessions,
    "sdk-sessions": _sdk_sessions,
    "mcpcore-in-flight": _mcpcore_in_flight,
    "sdk-in-flight": _sdk_in_flight,
}


def _report(measured: dict[str, float]) -> int:
    print(json.dumps(measured), flush=True)
    return 0


def probe(name: str, count: int, *, rss: bool) -> dict[str, float]:
    """Run one probe in this process; bytes per object (see the module's docstring)."""
    # Imported before tracing starts: tracing the imports would only slow them down
    # (what they allocate is in the baseline either way).
    import bench.dispatch

    if name.startswith("sdk"):
        import mcp.server.mcpserver  # noqa: F401

        import bench.sdk_dispatch  # noqa: F401
    if not rss:
        tracemalloc.start()
    measured: dict[str, float] = asyncio.run(_PROBES[name](count, _Meter(rss)))
    if name == "mcpcore-in-flight" and not rss:
        measured.update(_core_in_flight(count))
    return measured


# ---------------------------------------------------------------- the layer


def _start_probe(name: str, count: int, *, rss: bool) -> subprocess.Popen[str]:
    """One probe in a fresh interpreter, started."""
    command = [sys.executable, "-m", "bench.memory", "--probe", name, str(count)]
    return subprocess.Popen(
        [*command, "--rss"] if rss else command,
        cwd=_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish_probe(name: str, process: subprocess.Popen[str]) -> dict[str, float]:
    """Wait for a probe (bounded); what it measured."""
    try:
        stdout, stderr = process.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise BenchmarkError(f"memory probe {name} took over {PROBE_TIMEOUT:g} s") from None
    if process.returncode != 0:
        reason = stderr.strip().splitlines()[-1:]
        raise BenchmarkError(f"memory probe {name} failed: {' '.join(reason) or 'no message'}")
    result: dict[str, float] = json.loads(stdout.strip().splitlines()[-1])
    return result


def _probe(name: str, count: int, *, rss: bool) -> dict[str, float]:
    """One probe in a fresh interpreter, waited for; what it measured."""
    return _finish_probe(name, _start_probe(name, count, rss=rss))


def _measure_all(
    probes: list[tuple[str, int]], runs: int, *, with_rss: bool
) -> dict[str, dict[str, list[float]]]:
    """Every probe ``runs`` times (and as often with ``--rss``), a few side by side.

    Each probe is a process of its own and reads only its own memory, so they may run
    side by side (one per core: more would only stretch each one's time limit).
    """
    jobs = [
        (name, count, rss)
        for _ in range(runs)
        for name, count in probes
        for rss in ((False, True) if with_rss else (False,))
    ]
    samples: dict[str, dict[str, list[float]]] = {name: {} for name, _ in probes}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        futures = [(name, pool.submit(_probe, name, count, rss=rss)) for name, count, rss in jobs]
        for name, future in futures:
            for key, value in future.result().items():
                samples[name].setdefault(key, []).append(value)
    return samples


# ---------------------------------------------------------------- over Streamable HTTP

_LEGACY = "2025-11-25"
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _http_server_command(column: str, port: int) -> list[str]:
    """The server process of ``column`` on ``port`` (sessions kept, legacy era)."""
    if column == MCPCORE:
        return [sys.executable, str(_ROOT / "bench" / "_http_servers.py"), MCPCORE, str(port)]
    from bench._workload_servers import SCRIPT

    return [sys.executable, SCRIPT, "sdk", "sessions", str(port)]


def _open_http_session(connection: http.client.HTTPConnection, index: int) -> None:
    """``initialize`` then ``notifications/initialized``: one idle legacy session."""
    initialize = {
        "jsonrpc": "2.0",
        "id": index,
        "method": "initialize",
        "params": {
            "protocolVersion": _LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench-memory", "version": "1.0"},
        },
    }
    connection.request("POST", "/mcp", json.dumps(initialize), _HEADERS)
    response = connection.getresponse()
    body = response.read()
    session = response.getheader("mcp-session-id")
    if response.status != 200 or not session or b'"result"' not in body:
        raise BenchmarkError(f"initialize answered {response.status}: {body[:200]!r}")
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": _LEGACY}
    connection.request("POST", "/mcp", json.dumps(initialized), headers)
    response = connection.getresponse()
    response.read()
    if response.status != 202:
        raise BenchmarkError(f"notifications/initialized answered {response.status}")


def _resident(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def http_sessions(column: str, count: int) -> float:
    """Bytes of server RSS per idle legacy session over Streamable HTTP (fresh server)."""
    port = reserve_port()
    server = subprocess.Popen(
        _http_server_command(column, port),
        cwd=_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, server, timeout=HTTP_START_TIMEOUT, name="the HTTP server")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HTTP_REQUEST_TIMEOUT)
        try:
            for index in range(HTTP_WARM_UP):
                _open_http_session(connection, index)
            before = _resident(server.pid)
            for index in range(count):
                _open_http_session(connection, HTTP_WARM_UP + index)
            return (_resident(server.pid) - before) / count
        finally:
            connection.close()
    finally:
        server.kill()
        server.wait()


def _http_row(columns: list[str], count: int, runs: int) -> WorkloadResult:
    samples: dict[str, list[float]] = {column: [] for column in columns}
    with concurrent.futures.ThreadPoolExecutor(len(columns)) as pool:
        for _ in range(runs):
            # Each server is a process of its own: their RSS don't mix.
            futures = {column: pool.submit(http_sessions, column, count) for column in columns}
            for column, future in futures.items():
                samples[column].append(future.result())
    values: dict[str, float | None] = {
        column: statistics.median(found) for column, found in samples.items()
    }
    values.setdefault("sdk", NOT_AVAILABLE)
    ours, sdk = values[MCPCORE], values["sdk"]
    return WorkloadResult(
        layer=LAYER.name,
        name=f"memory per idle legacy session over Streamable HTTP, {count:,} at once",
        size_bytes=None,
        unit=BYTES,
        values=values,
        samples=samples,
        ratios={f"{MCPCORE}/sdk": None if sdk is None or not ours else sdk / ours},
        notes=[
            f"server process RSS grown per session ({count:,} sessions after "
            f"{HTTP_WARM_UP} untimed, one keep-alive connection; median of {runs} fresh "
            "servers): initialize + notifications/initialized, 2025-11-25",
            "mcpcore: transports.serve_http (bench/_http_servers.py); sdk: MCPServer's "
            "streamable_http_app(json_response=True), stateful, on uvicorn",
        ],
    )


def _row(
    measured: dict[str, dict[str, list[float]]],
    *,
    what: str,
    count: int,
    runs: int,
) -> WorkloadResult:
    """One row from the probes' samples (``measured`` by column)."""
    values: dict[str, float | None] = {
        column: statistics.median(found["retained"]) for column, found in measured.items()
    }
    ours = values[MCPCORE]
    sdk = values.get("sdk", NOT_AVAILABLE)
    values["sdk"] = sdk
    ratio = None if sdk is None or not ours else sdk / ours
    details = "; ".join(
        f"{column} peak {statistics.median(found['peak']):,.0f}, RSS "
        + (f"{statistics.median(found['rss']):,.0f}" if "rss" in found else "not measured")
        for column, found in measured.items()
    )
    notes = [
        f"bytes per {what} ({count:,} of them, fresh process per measurement, median of "
        f"{runs}): tracemalloc retained in the table; {details}",
    ]
    core = measured[MCPCORE]
    if "core_client" in core:
        notes.append(
            "mcpcore's sans-IO Connections alone per request in flight: client "
            f"{statistics.median(core['core_client']):,.0f} B, server "
            f"{statistics.median(core['core_server']):,.0f} B"
        )
    return WorkloadResult(
        layer=LAYER.name,
        name=f"memory per {what}, {count:,} at once",
        size_bytes=None,
        unit=BYTES,
        values=values,
        samples={column: found["retained"] for column, found in measured.items()},
        ratios={f"{MCPCORE}/sdk": ratio},
        notes=notes,
    )


def run(context: Context) -> list[WorkloadResult]:
    """Measure idle sessions and requests in flight, mcpcore and the SDK."""
    quick = context.settings.quick
    runs = QUICK_RUNS if quick else RUNS
    sessions = QUICK_SESSIONS if quick else SESSIONS
    in_flight = QUICK_IN_FLIGHT if quick else IN_FLIGHT
    context.log(f"memory: {sessions:,} idle legacy sessions, {in_flight:,} requests in flight")
    columns = [MCPCORE] + (["sdk"] if "sdk" in context.available else [])
    workloads = {
        "sessions": ("idle legacy session (client + server)", sessions),
        "in-flight": ("tools/call in flight (client + server)", in_flight),
    }
    probes = [
        (f"{column}-{workload}", count)
        for workload, (_, count) in workloads.items()
        for column in columns
    ]
    samples = _measure_all(probes, runs, with_rss=not quick)
    http_count = QUICK_HTTP_SESSIONS if quick else HTTP_SESSIONS
    context.log(f"memory: {http_count:,} idle legacy sessions over Streamable HTTP")
    return [
        _row(
            {column: samples[f"{column}-{workload}"] for column in columns},
            what=what,
            count=count,
            runs=runs,
        )
        for workload, (what, count) in workloads.items()
    ] + [_http_row(columns, http_count, runs)]


LAYER = Layer("memory", "bytes per idle session and per request in flight, in memory", run)


def _main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"] and len(argv) in (3, 4):
        return _report(probe(argv[1], int(argv[2]), rss=argv[3:] == ["--rss"]))
    from bench._optional import Availability
    from mcpcore_cli.bench.timing import Settings

    settings = Settings(repeat=1, target_seconds=0.0, quick="--quick" in argv)
    for result in run(Context(settings, Availability())):
        cells = ", ".join(
            f"{column} {'n/a' if value is None else f'{value:,.0f} B'}"
            for column, value in result.values.items()
        )
        ratio = result.ratios.get(f"{MCPCORE}/sdk")
        print(f"{result.name}: {cells}" + ("" if ratio is None else f" (sdk/mcpcore {ratio:.2f}x)"))
        for note in result.notes:
            print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
