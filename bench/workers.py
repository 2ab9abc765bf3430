"""The workers layer: ``examples/everything.py`` over HTTP with one and two worker processes.

Issue 18's targets, measured from outside with ``wrk`` (`bench._asgi_load`):

* **2026-07-28** ``tools/call`` of ``test_simple_text`` (the ``_meta`` envelope and the
  ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers; JSON answers), at 8,
  64 and 256 connections (64 alone with ``--quick``). Columns ``1 worker`` (``python
  examples/everything.py --transport http``) and ``2 workers`` (the same with
  ``--workers 2``: a supervisor and two workers sharing one listening socket, no Redis).
  Target: ``2 workers / 1 worker >= 1.7`` at every point.
* **2025-11-25** ``tools/call`` in a session (``initialize`` and
  ``notifications/initialized`` over plain HTTP before each run, then every request with
  its ``Mcp-Session-Id``; answers are event streams, ``replies="auto"``'s default for the
  era), at 64 connections. Columns ``in memory, 1 worker`` (no ``--redis``), ``Redis, 1
  worker`` (``--redis URL``) and ``Redis, 2 workers`` (``--workers 2 --redis URL``: the
  kernel spreads wrk's connections over both workers, so the requests reaching the one
  that does not own the session are forwarded to its owner over Redis pub/sub). Each
  Redis column is compared with ``in memory`` by throughput and by **CPU per request**:
  the user and system time of the server's processes (the supervisor and its workers)
  and, with Redis, of the redis-server, over the run (`bench._process_cpu`), divided by
  the answers. Target: CPU per request ``< 2x`` in memory.

The Redis columns run against one ``redis-server`` the layer starts (`bench._redis_server`;
each server process in a namespace of its own, so the two deployments don't mix); with
no ``redis-server`` on the PATH, or without the redis extra (hiredis), they read ``n/a``
and the row's notes say why.

Every server of a row runs from the start of its era to its end, each on a port of its
own (0: its own pick, read from its banner, printed once every worker serves); the
columns are measured one after another, in an order that rotates from one repetition to
the next, ``--repeat`` times, for 3 s each (1 s with ``--quick``). The row shows each
column's median rate and the median of the per-repetition ratios. Every answer is
checked (status 200, the tool's text, no ``isError``): a run with a wrong answer or a
socket error is no measurement, and its column reads ``n/a`` with the errors in the
notes.

No CPU pinning: on a 2-CPU machine both CPUs are what a second worker is for, so wrk
shares them with the servers (it costs 15-25 µs of CPU per request, measured in each
run's notes, where a worker spends ~100-150). The rows say so.

    python -m bench --only workers --repeat 5
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import msgspec

from bench._asgi_apps import REQUEST_HEADERS
from bench._asgi_load import LoadGenerator, LoadRequest, LoadResult, PythonLoad, WrkLoad
from bench._layer import Context, Layer
from bench._posting import TIMEOUT, open_session, post
from bench._procfs import (
    CpuClock,
    connections_held,
    cpu_seconds_between,
    own_cpu_seconds,
)
from bench._procfs import available as procfs_available
from bench._redis_server import RedisProcess, command_counts, start_redis
from bench._results import Target, WorkloadResult
from mcpcore.versions import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION
from mcpcore_cli.bench.verify import BenchmarkError
from mcpcore_cli.workers import SHUTDOWN_GRACE

__all__ = [
    "CONNECTIONS",
    "COSTS",
    "CPU_COST",
    "EXPECTED_TEXT",
    "IN_MEMORY",
    "LAYER",
    "LEGACY_CONNECTIONS",
    "ONE_WORKER",
    "QUICK_CONNECTIONS",
    "REDIS_ONE_WORKER",
    "REDIS_TWO_WORKERS",
    "SCALES",
    "SCALING",
    "THROUGHPUT",
    "TOOL",
    "TWO_WORKERS",
    "Variant",
    "run",
    "workload_name",
]

_ROOT: Final = Path(__file__).resolve().parent.parent
_SCRIPT: Final = _ROOT / "examples" / "everything.py"
#: The 2026-07-28 points: connections kept busy at once (full run, ``--quick``).
CONNECTIONS: Final = (8, 64, 256)
QUICK_CONNECTIONS: Final = (64,)
#: The 2025-11-25 point (the issue's; also with ``--quick``).
LEGACY_CONNECTIONS: Final = 64
#: Seconds of load per column, point and repetition (full run, ``--quick``).
SECONDS, QUICK_SECONDS = 3, 1
#: Seconds a server gets to print its banner (every worker serving): a cold interpreter
#: importing the server takes ~1 s, each worker of a supervisor as much.
START_TIMEOUT: Final = 60.0
#: Seconds a server gets to exit on SIGTERM: the supervisor's own grace for its workers,
#: and some more for it to see them go.
STOP_TIMEOUT: Final = SHUTDOWN_GRACE + 5.0
#: The tool called, and what it answers.
TOOL: Final = "test_simple_text"
EXPECTED_TEXT: Final = "This is a simple text response for testing."
#: The banner a server prints once it serves (with ``--workers``: once every worker does).
_BANNER: Final = re.compile(rb"Serving the everything server at http://127\.0\.0\.1:(\d+)/mcp")
#: Bytes read from a starting server's stdout at a time (its banner is one line).
_READ_SIZE: Final = 4096

#: The columns.
ONE_WORKER, TWO_WORKERS = "1 worker", "2 workers"
IN_MEMORY, REDIS_ONE_WORKER, REDIS_TWO_WORKERS = (
    "in memory, 1 worker",
    "Redis, 1 worker",
    "Redis, 2 workers",
)
#: The ratios: 2026-07-28's throughput; 2025-11-25's throughput and CPU per request of
#: each Redis column against ``in memory`` (keys of `WorkloadResult.ratios`).
SCALING: Final = f"{TWO_WORKERS}/{ONE_WORKER}"
_REDIS_COLUMNS: Final = (REDIS_ONE_WORKER, REDIS_TWO_WORKERS)
THROUGHPUT: Final = {column: f"{column}/in memory" for column in _REDIS_COLUMNS}
CPU_COST: Final = {column: f"CPU per request, {column}/in memory" for column in _REDIS_COLUMNS}
#: The issue's targets.
SCALES: Final = Target("2 workers >= 1.7x", SCALING, 1.7)
COSTS: Final = tuple(
    Target(f"{column}: CPU per request < 2x in memory", CPU_COST[column], 2.0, at_least=False)
    for column in CPU_COST
)
#: Each era's name in the rows.
_ERAS: Final = {"modern": LATEST_MODERN_VERSION, "legacy": LATEST_LEGACY_VERSION}
#: How each era answers a POST by default (``replies="auto"``).
_REPLIES: Final = {"modern": "JSON replies", "legacy": "SSE replies in a session"}
#: Each server process's Redis namespace: one deployment per column.
_NAMESPACE_PREFIX: Final = "bench-workers-"


@dataclass(frozen=True)
class Variant:
    """One column: how many workers, and whether they share a Redis.

    Attributes:
        column: Its name in the table.
        workers: ``--workers``.
        redis: Whether it runs with ``--redis``.
    """

    column: str
    workers: int
    redis: bool


_VARIANTS: Final = {
    "modern": (Variant(ONE_WORKER, 1, False), Variant(TWO_WORKERS, 2, False)),
    "legacy": (
        Variant(IN_MEMORY, 1, False),
        Variant(REDIS_ONE_WORKER, 1, True),
        Variant(REDIS_TWO_WORKERS, 2, True),
    ),
}


def workload_name(connections: int, era: str) -> str:
    """The row's name: ``tools/call over HTTP to everything.py workers, JSON replies, …``."""
    return (
        f"tools/call over HTTP to everything.py workers, {_REPLIES[era]}, "
        f"{connections} connections, {era} ({_ERAS[era]})"
    )


def _body(era: str) -> bytes:
    """A compact ``tools/call`` with a numeric id (wrk rewrites it per request).

    2026-07-28: with the ``_meta`` envelope the era needs on every request (what mcpcore's
    client sends).
    """
    params: dict[str, object] = {"name": TOOL, "arguments": {}}
    if era == "modern":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": LATEST_MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench-workers", "version": "1.0"},
        }
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return msgspec.json.encode(request)


_BODIES: Final = {era: _body(era) for era in ("modern", "legacy")}
_HEADERS: Final = {
    "modern": (
        ("MCP-Protocol-Version", LATEST_MODERN_VERSION),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", TOOL),
    ),
    "legacy": REQUEST_HEADERS["legacy"],
}


# ------------------------------------------------------------ server processes


@dataclass(frozen=True)
class _Server:
    """A running server: its port, the CPU clock of its processes, its Redis if any."""

    variant: Variant
    pid: int
    port: int
    clock: CpuClock
    redis: RedisProcess | None
    command: str

    def workers(self) -> list[int]:
        """The processes that serve: the workers of a supervisor, else the process itself."""
        if self.variant.workers == 1:
            return [self.pid]
        return [pid for pid in CpuClock((self.pid,)).processes() if pid != self.pid]


def _command(variant: Variant, redis: RedisProcess | None) -> list[str]:
    """The server's command line (port 0: it picks one)."""
    command = [sys.executable, str(_SCRIPT), "--transport", "http", "--host", "127.0.0.1"]
    command += ["--port", "0"]
    if variant.workers > 1:
        command += ["--workers", str(variant.workers)]
    if redis is not None:
        namespace = _NAMESPACE_PREFIX + re.sub(r"[^a-z0-9]+", "-", variant.column.lower())
        command += ["--redis", redis.url, "--redis-namespace", namespace]
    return command


def _shown(command: Sequence[str]) -> str:
    """A command line as the notes show it (the script by its repository path)."""
    words = ["python", "examples/everything.py", *command[2:]]
    return " ".join(words)


def _banner_port(process: subprocess.Popen[bytes], errors: Path, name: str) -> int:
    """Read ``process``'s stdout until its banner; the port it names.

    Raises:
        BenchmarkError: It exited first (with the end of its stderr), or printed no
            banner within `START_TIMEOUT`.
    """
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    output = b""
    while (left := deadline - time.monotonic()) > 0:
        match = _BANNER.search(output)
        if match is not None:
            return int(match.group(1))
        ready, _, _ = select.select([process.stdout], [], [], left)
        data = os.read(process.stdout.fileno(), _READ_SIZE) if ready else b""
        if ready and not data:  # (its stdout closed: it exited)
            process.wait(STOP_TIMEOUT)
            detail = errors.read_text(errors="replace").strip()[-300:]
            raise BenchmarkError(f"{name} exited with status {process.returncode}: {detail}")
        output += data
    raise BenchmarkError(f"{name} printed no banner within {START_TIMEOUT:g} s")


@contextmanager
def _serve(variant: Variant, redis: RedisProcess | None) -> Iterator[_Server]:
    """``examples/everything.py`` as ``variant`` asks, serving; stopped after the block."""
    command = _command(variant, redis if variant.redis else None)
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as directory:
        errors = Path(directory) / "stderr"
        with errors.open("wb") as stderr:
            process = subprocess.Popen(
                command, cwd=_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr
            )
        try:
            port = _banner_port(process, errors, f"everything.py ({variant.column})")
            roots = (process.pid, *([redis.pid] if variant.redis and redis else []))
            yield _Server(
                variant,
                process.pid,
                port,
                CpuClock(roots),
                redis if variant.redis else None,
                _shown(command),
            )
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a supervisor stops its workers, then exits), SIGKILL if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _open_session(server: _Server) -> tuple[str, int | None]:
    """A 2025-11-25 session, initialized; its id and its owner (the worker that answered).

    Both messages go over one connection, and the owner is the worker holding it
    (`bench._procfs.connections_held`; None if none of them seems to).
    """
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        session = open_session(connection)
        assert connection.sock is not None
        mine = connection.sock.getsockname()[1]
        held = connections_held(server.workers(), server.port)
        owner = next((pid for pid, peers in held.items() if mine in peers), None)
    finally:
        connection.close()
    return session, owner


def _request(server: _Server, era: str) -> tuple[LoadRequest, int | None]:
    """The load's request (2025-11-25: in a session opened now), and the session's owner."""
    headers, owner = _HEADERS[era], None
    if era == "legacy":
        session, owner = _open_session(server)
        headers = (*headers, ("Mcp-Session-Id", session))
    return LoadRequest(_BODIES[era], headers, EXPECTED_TEXT), owner


def _check(server: _Server, era: str) -> int:
    """One request, outside any timing: the tool's text; the request and answer bytes."""
    request, _ = _request(server, era)
    status, _, body = post(server.port, request.body, request.headers)
    if status != 200 or EXPECTED_TEXT.encode() not in body or b'"isError":true' in body:
        raise BenchmarkError(f"{server.variant.column} ({era}) answered {status} {body[:300]!r}")
    return len(request.body) + len(body)


# ------------------------------------------------------------------ measuring


@dataclass(frozen=True)
class _Run:
    """One run of one column: the load's numbers, and what it cost whom.

    Attributes:
        load: The load generator's numbers.
        cpu_seconds: The server's CPU time (its processes', and its Redis's).
        load_cpu_seconds: The load generator's CPU time (wrk's; or this process's, when
            it is the load generator).
        redis_commands: The commands Redis ran (None: no Redis).
        redis_publishes: Those that were ``PUBLISH``.
        split: wrk's connections each worker held mid-run (the session's owner first,
            then the others, most first); empty with one worker.
    """

    load: LoadResult
    cpu_seconds: float
    load_cpu_seconds: float
    redis_commands: int | None = None
    redis_publishes: int | None = None
    split: tuple[int, ...] = ()

    def per_request(self, amount: float) -> float:
        """``amount`` divided by the answers (0 with none)."""
        return amount / self.load.answers if self.load.answers else 0.0

    @property
    def cpu_us(self) -> float:
        """The server's CPU microseconds per answer."""
        return self.per_request(self.cpu_seconds * 1e6)

    @property
    def load_cpu_us(self) -> float:
        """The load generator's CPU microseconds per answer."""
        return self.per_request(self.load_cpu_seconds * 1e6)


def _split(server: _Server, owner: int | None) -> tuple[int, ...]:
    """The connections each worker holds now: the owner's first, then most first."""
    held = {
        pid: len(peers) for pid, peers in connections_held(server.workers(), server.port).items()
    }
    first = () if owner is None else (held.pop(owner, 0),)
    return (*first, *sorted(held.values(), reverse=True))


def _measure_once(
    server: _Server, era: str, load: LoadGenerator, connections: int, seconds: int
) -> _Run:
    """One run: the load, and the CPU, Redis commands and connection split it cost."""
    request, owner = _request(server, era)
    redis_port = None if server.redis is None else server.redis.port
    commands_before = None if redis_port is None else command_counts(redis_port)
    splits: list[tuple[int, ...]] = []
    sampler = threading.Timer(seconds / 2, lambda: splits.append(_split(server, owner)))
    cpu_before, load_before = server.clock.read(), own_cpu_seconds()
    if server.variant.workers > 1:
        sampler.start()
    try:
        result = load.run(server.port, request, connections, seconds)
    finally:
        sampler.cancel()
        if sampler.is_alive():
            sampler.join()
    cpu = cpu_seconds_between(cpu_before, server.clock.read())
    measured = _Run(result, cpu, own_cpu_seconds() - load_before, split=splits[0] if splits else ())
    if redis_port is None or commands_before is None:
        return measured
    commands_after = command_counts(redis_port)
    used = {name: calls - commands_before.get(name, 0) for name, calls in commands_after.items()}
    return replace(
        measured, redis_commands=sum(used.values()), redis_publishes=used.get("publish", 0)
    )


@dataclass(frozen=True)
class _Setup:
    """How every point of the run is measured."""

    load: LoadGenerator
    seconds: int
    notes: tuple[str, ...]


def _setup(context: Context) -> _Setup:
    use_wrk = shutil.which("wrk") is not None
    load: LoadGenerator = WrkLoad() if use_wrk else PythonLoad()
    seconds = QUICK_SECONDS if context.settings.quick else SECONDS
    cpus = len(os.sched_getaffinity(0))
    notes = (
        f"load: {load.description}; each connection POSTs back to back for {seconds} s per "
        f"run, {context.settings.repeat} runs per column, the columns interleaved",
        f"no CPU pinning: the servers and the load generator share this machine's {cpus} "
        "CPUs (a second worker needs the second CPU); what the load generator costs is "
        "measured and shown below",
        "busy polling off (the default); every server of the row runs (idle while another "
        "is measured) from the start of the era's rows to their end",
    )
    return _Setup(load, seconds, notes)


def _redis_missing() -> str | None:
    """Why the Redis columns can't run (None: they can)."""
    if importlib.util.find_spec("hiredis") is None:
        return "hiredis is not installed (pip install -e '.[redis]')"
    if shutil.which("redis-server") is None:
        return "no redis-server on the PATH (apt-get install redis-server)"
    return None


Measured = dict[int, dict[str, list[_Run]]]


def _measure_era(
    context: Context,
    setup: _Setup,
    era: str,
    variants: Sequence[Variant],
    *,
    counts: Sequence[int],
    redis: RedisProcess | None,
) -> tuple[Measured, dict[str, str], int]:
    """Every point of ``era``: each column's runs; the command lines; the message bytes."""
    settings = context.settings
    measured: Measured = {}
    with ExitStack() as stack:
        servers = {v.column: stack.enter_context(_serve(v, redis)) for v in variants}
        sizes = [_check(server, era) for server in servers.values()]
        if not settings.quick:  # a warm-up, untimed (lazy imports, caches)
            for server in servers.values():
                _measure_once(server, era, setup.load, counts[0], 1)
        columns = list(servers)
        for connections in counts:
            context.log(
                f"workers: tools/call, {era}, {connections} connections "
                f"({setup.seconds} s per run, {len(columns)} servers)"
            )
            runs: dict[str, list[_Run]] = {column: [] for column in columns}
            for repetition in range(settings.repeat):
                settings.report(f"repetition {repetition + 1}/{settings.repeat}")
                shift = repetition % len(columns)
                for column in (*columns[shift:], *columns[:shift]):
                    runs[column].append(
                        _measure_once(servers[column], era, setup.load, connections, setup.seconds)
                    )
            measured[connections] = runs
        commands = {column: server.command for column, server in servers.items()}
    return measured, commands, sizes[0]


# ------------------------------------------------------------------ the rows


def _median(numbers: Iterable[float]) -> float:
    return float(statistics.median(list(numbers)))


def _slug(column: str) -> str:
    """A column as a parameter's prefix: ``"Redis, 2 workers"`` -> ``"redis_2_workers"``."""
    return re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_")


def _ratio(mine: list[_Run] | None, theirs: list[_Run] | None, *, cpu: bool) -> float | None:
    """The median of the per-repetition ratios (None when either side failed or is n/a)."""
    if not mine or not theirs or any(r.load.errors for r in (*mine, *theirs)):
        return None
    pairs = zip(mine, theirs, strict=True)
    if cpu:
        return _median(a.cpu_us / b.cpu_us for a, b in pairs if b.cpu_us)
    return _median(a.load.rate / b.load.rate for a, b in pairs)


def _ratios(era: str, runs: dict[str, list[_Run]]) -> dict[str, float | None]:
    if era == "modern":
        return {SCALING: _ratio(runs.get(TWO_WORKERS), runs.get(ONE_WORKER), cpu=False)}
    ratios: dict[str, float | None] = {}
    for column, name in THROUGHPUT.items():
        ratios[name] = _ratio(runs.get(column), runs.get(IN_MEMORY), cpu=False)
    for column, name in CPU_COST.items():
        ratios[name] = _ratio(runs.get(column), runs.get(IN_MEMORY), cpu=True)
    return ratios


def _column_parameters(column: str, results: list[_Run]) -> dict[str, str | int | float]:
    prefix = _slug(column)
    loads = [run.load for run in results]
    parameters: dict[str, str | int | float] = {
        f"{prefix}_p50_ms": _median(r.p50_ms for r in loads),
        f"{prefix}_p99_ms": _median(r.p99_ms for r in loads),
        f"{prefix}_max_ms": max(r.max_ms for r in loads),
        f"{prefix}_errors": sum(r.errors for r in loads),
        f"{prefix}_cpu_us_per_request": _median(run.cpu_us for run in results),
        f"{prefix}_load_cpu_us_per_request": _median(run.load_cpu_us for run in results),
    }
    if any(run.split for run in results):
        parameters[f"{prefix}_connections_per_worker"] = "; ".join(map(_shown_split, results))
    if results[0].redis_commands is not None:
        parameters[f"{prefix}_redis_commands_per_request"] = _median(
            run.per_request(run.redis_commands or 0) for run in results
        )
        parameters[f"{prefix}_redis_publish_per_request"] = _median(
            run.per_request(run.redis_publishes or 0) for run in results
        )
    return parameters


def _cost_note(runs: dict[str, list[_Run]], ratios: dict[str, float | None]) -> str:
    """CPU per request of each column, in words (and the Redis commands it took)."""
    parts = []
    for column, results in runs.items():
        text = f"{column} {_median(run.cpu_us for run in results):.0f} µs"
        ratio = ratios.get(CPU_COST.get(column, ""))
        if ratio is not None:
            text += f" ({ratio:.2f}x in memory)"
        if results[0].redis_commands is not None:
            commands = _median(run.per_request(run.redis_commands or 0) for run in results)
            publish = _median(run.per_request(run.redis_publishes or 0) for run in results)
            text += f", {commands:.2f} Redis commands per request ({publish:.2f} PUBLISH)"
        parts.append(text)
    return (
        "CPU per request (user + system time of the server's processes, the supervisor "
        "and its workers, plus the redis-server's with Redis, over each run, divided by "
        "the answers; medians of the runs): " + "; ".join(parts)
    )


def _machine_note(runs: dict[str, list[_Run]]) -> str:
    """How busy the CPUs were: the servers', the load generator's, per column."""
    parts = [
        f"{column} {_median(run.cpu_seconds / run.load.seconds for run in results):.2f} + "
        f"{_median(run.load_cpu_seconds / run.load.seconds for run in results):.2f} "
        f"({_median(run.load_cpu_us for run in results):.0f} µs per request)"
        for column, results in runs.items()
    ]
    return (
        "CPUs kept busy by the server + by the load generator (its CPU per request), "
        "medians of the runs: " + "; ".join(parts)
    )


def _workers(era: str, column: str) -> int:
    return next(variant.workers for variant in _VARIANTS[era] if variant.column == column)


def _shown_split(run: _Run) -> str:
    return "+".join(str(count) for count in run.split) or "?"


def _split_note(era: str, column: str, results: list[_Run]) -> str:
    """How the kernel spread wrk's connections over the workers ("" with one worker)."""
    if _workers(era, column) == 1:
        return ""
    shown = ", ".join(_shown_split(run) for run in results)
    if era == "modern":
        return (
            f"{column}: the kernel hands each of wrk's connections to whichever worker "
            f"accepts it first; connections each worker held mid-run, per run: {shown}"
        )
    return (
        f"{column}: the session lives in the worker that answered initialize; the kernel "
        "hands each of wrk's connections to whichever worker accepts it first, and the "
        "requests reaching the other worker are forwarded to the owner over Redis pub/sub "
        "(PUBLISH per request above); connections held mid-run, the owner's first, per "
        f"run: {shown}"
    )


def _row(
    era: str,
    connections: int,
    runs: dict[str, list[_Run]],
    *,
    size: int,
    commands: dict[str, str],
    unavailable: dict[str, str],
    setup: _Setup,
) -> WorkloadResult:
    """One row: medians, per-repetition ratios, CPU per request, latencies, errors, targets."""
    values: dict[str, float | None] = {}
    notes = list(setup.notes)
    notes += [f"{column}: {command}" for column, command in commands.items()]
    parameters: dict[str, str | int | float] = {
        "transport": "http-workers",
        "era": era,
        "in_flight": connections,
        "connections": connections,
        "replies": "json" if era == "modern" else "sse",
        "busy_poll_seconds": 0,
        "seconds_per_run": setup.seconds,
        "load": "wrk" if isinstance(setup.load, WrkLoad) else "python",
        "pinned": 0,
    }
    for column, results in runs.items():
        failed = [run.load for run in results if run.load.errors]
        values[column] = None if failed else _median(run.load.rate for run in results)
        if failed:
            errors = "; ".join(result.describe_errors() for result in failed)
            notes.append(f"{column}: n/a, {len(failed)} of {len(results)} runs failed: {errors}")
        parameters[f"{_slug(column)}_workers"] = _workers(era, column)
        parameters.update(_column_parameters(column, results))
    for column, reason in unavailable.items():
        values[column] = None
        notes.append(f"{column}: n/a, {reason}")
    ratios = _ratios(era, runs)
    notes += [_cost_note(runs, ratios), _machine_note(runs)]
    latency = ", ".join(
        f"{column} {_median(r.load.p50_ms for r in results):.2f}/"
        f"{_median(r.load.p99_ms for r in results):.2f}, "
        f"{max(r.load.max_ms for r in results):.0f}"
        for column, results in runs.items()
    )
    notes.append(f"latency p50/p99 ms (medians of the runs), largest: {latency}")
    notes += [_split_note(era, column, results) for column, results in runs.items()]
    notes = [note for note in notes if note]
    return WorkloadResult(
        layer=LAYER.name,
        name=workload_name(connections, era),
        size_bytes=size,
        unit="round trips/s",
        values=values,
        samples={column: [run.load.rate for run in results] for column, results in runs.items()},
        ratios=ratios,
        targets=[SCALES] if era == "modern" else list(COSTS),
        notes=notes,
        parameters=parameters,
    )


def run(context: Context) -> list[WorkloadResult]:
    """Measure both eras' rows (the Redis columns n/a without redis-server or hiredis)."""
    if not procfs_available():
        context.log("workers: needs Linux's /proc (CPU time, connections): layer skipped")
        return []
    setup = _setup(context)
    missing = _redis_missing()
    results: list[WorkloadResult] = []
    points = {
        "modern": QUICK_CONNECTIONS if context.settings.quick else CONNECTIONS,
        "legacy": (LEGACY_CONNECTIONS,),
    }
    try:
        with start_redis() if missing is None else nullcontext() as redis:
            for era, counts in points.items():
                variants = [v for v in _VARIANTS[era] if redis is not None or not v.redis]
                unavailable = {v.column: missing or "" for v in _VARIANTS[era] if v not in variants}
                measured, commands, size = _measure_era(
                    context, setup, era, variants, counts=counts, redis=redis
                )
                if redis is not None and era == "legacy":
                    commands["redis"] = f"{redis.version}, {redis.url}, nothing kept on disk"
                results += [
                    _row(
                        era,
                        connections,
                        measured[connections],
                        size=size,
                        commands=commands,
                        unavailable=unavailable,
                        setup=setup,
                    )
                    for connections in counts
                ]
    finally:
        if isinstance(setup.load, WrkLoad):
            setup.load.close()
    return results


LAYER = Layer(
    "workers",
    "examples/everything.py over HTTP under wrk: 2026-07-28 tools/call with 1 and 2 "
    "workers; 2025-11-25 sessions in memory and in Redis (1 and 2 workers), CPU per request",
    run,
)
