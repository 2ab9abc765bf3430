"""The ``asgi`` layer's load generators: ``wrk`` where installed, else bench's own client.

Both keep ``connections`` keep-alive HTTP/1.1 connections each POSTing the same request
back to back for a fixed time, each request with an id of its own (two requests of one
2025-11-25 session in flight with one id would be a protocol error), check every answer
(status 200, the tool's text in the body, no ``"isError":true``), and report a
`LoadResult`: answers, wrong answers, socket errors, and the latency percentiles.

* `WrkLoad`: ``wrk`` (a C load generator, ``apt-get install wrk``) with
  ``bench/wrk/asgi_call.lua``, ``min(connections, 2)`` threads, ``--timeout 10s``. The
  client is not the bottleneck: it costs 15-25 µs of CPU per request on this project's
  2-CPU machine (mostly the kernel's socket work; ~16 µs without the Lua checks,
  measured by the ``workers`` layer), where the servers spend ~100 and more. Its
  percentiles are wrk's, corrected for coordinated omission.
* `PythonLoad`, the fallback: the same loop in this process, one trio task per
  connection, HTTP/1.1 framed by `transports._net.http1` (as the HTTP ceiling's client).
  It costs about as much CPU per request as the fastest server, so it caps the rates it
  measures: its rows say so. Its percentiles are of the requests as they ran.

Either may run pinned to CPUs of its own (``cpus``), away from the server's.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

import trio

from mcpcore_cli.bench.verify import BenchmarkError
from transports._net import http1

__all__ = [
    "LUA_SCRIPT",
    "LoadGenerator",
    "LoadRequest",
    "LoadResult",
    "PythonLoad",
    "WrkLoad",
    "parse_wrk",
]

#: The wrk script.
LUA_SCRIPT: Final = Path(__file__).resolve().parent / "wrk" / "asgi_call.lua"
#: wrk's request timeout: slower requests are not in its histogram but counted as errors
#: (its default, 2 s, would count a loaded server's tail as errors).
WRK_TIMEOUT: Final = "10s"
#: Seconds a run may take beyond its duration before it is stopped and counted failed.
RUN_GRACE: Final = 60.0
#: An answer with this is a tool error, whatever its status.
_TOOL_ERROR: Final = b'"isError":true'
_ID: Final = re.compile(rb'"id":(\d+)')
#: Bytes asked of a socket per read (the fallback client).
_READ_SIZE: Final = 64 * 1024
_WRK_LINE: Final = re.compile(
    r"asgi: requests=(\d+) duration_us=(\d+) bad_status=(\d+) bad_body=(\d+) "
    r"socket_errors=(\d+),(\d+),(\d+),(\d+) p50_us=(\d+) p90_us=(\d+) p99_us=(\d+) max_us=(\d+)"
)


@dataclass(frozen=True)
class LoadRequest:
    """What every connection POSTs to ``/mcp``, and what every answer must hold.

    Attributes:
        body: The JSON-RPC request.
        headers: Its headers besides ``Host``, ``Content-Type``, ``Accept``, length.
        expected: Text every right answer's body holds (the tool's).
    """

    body: bytes
    headers: tuple[tuple[str, str], ...]
    expected: str


@dataclass(frozen=True)
class LoadResult:
    """One run's numbers.

    Attributes:
        answers: Responses received whole (right or wrong).
        seconds: How long the run lasted.
        bad_status: Answers whose status was not 200.
        bad_body: Answers with status 200 whose body was not the tool's result.
        socket_errors: Connections that failed (connect, read, write) and requests that
            timed out.
        p50_ms: The median latency.
        p99_ms: The 99th percentile latency.
        max_ms: The largest latency.
    """

    answers: int
    seconds: float
    bad_status: int
    bad_body: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    max_ms: float

    @property
    def errors(self) -> int:
        """Every wrong answer and socket error: a run with any is not a measurement."""
        return self.bad_status + self.bad_body + self.socket_errors

    @property
    def rate(self) -> float:
        """Right answers per second."""
        return (self.answers - self.bad_status - self.bad_body) / self.seconds

    def describe_errors(self) -> str:
        """The errors in words (``"3 answers not 200, 1 socket error"``)."""
        parts = [
            f"{self.bad_status} answers not 200" if self.bad_status else "",
            f"{self.bad_body} wrong bodies" if self.bad_body else "",
            f"{self.socket_errors} socket errors" if self.socket_errors else "",
        ]
        return ", ".join(part for part in parts if part) or "no errors"


class LoadGenerator(Protocol):
    """Runs the load of one point against one server."""

    @property
    def description(self) -> str:  # pragma: no cover - a protocol
        """How the rows name it."""
        ...

    def run(
        self, port: int, request: LoadRequest, connections: int, seconds: int
    ) -> LoadResult:  # pragma: no cover - a protocol
        """``connections`` connections POSTing ``request`` for ``seconds``; the numbers."""
        ...


def _pinned(cpus: str | None) -> list[str]:
    """The command prefix that pins a process to ``cpus`` (none: no prefix)."""
    return [] if cpus is None else ["taskset", "-c", cpus]


def parse_wrk(output: str) -> LoadResult:
    """The ``asgi:`` line of wrk (printed by ``asgi_call.lua``'s ``done``) as a `LoadResult`.

    Raises:
        BenchmarkError: No such line (wrk failed; its output is in the message).
    """
    match = _WRK_LINE.search(output)
    if match is None:
        raise BenchmarkError(f"wrk printed no result: {output.strip()[-400:]!r}")
    numbers = [int(group) for group in match.groups()]
    answers, duration, bad_status, bad_body = numbers[:4]
    p50, _, p99, largest = numbers[8:]
    return LoadResult(
        answers=answers,
        seconds=duration / 1e6,
        bad_status=bad_status,
        bad_body=bad_body,
        socket_errors=sum(numbers[4:8]),
        p50_ms=p50 / 1000,
        p99_ms=p99 / 1000,
        max_ms=largest / 1000,
    )


@dataclass
class WrkLoad:
    """``wrk`` with ``bench/wrk/asgi_call.lua`` (pinned to ``cpus`` if given)."""

    cpus: str | None = None
    executable: str = field(default_factory=lambda: shutil.which("wrk") or "wrk")
    _bodies: dict[bytes, Path] = field(default_factory=dict, repr=False)

    @property
    def description(self) -> str:
        """How the rows name it."""
        version = subprocess.run(
            [self.executable, "--version"], capture_output=True, text=True, check=False
        )
        words = (version.stdout or version.stderr).split()
        name = " ".join(words[:2]) if words else "wrk"
        where = f", pinned to CPU {self.cpus}" if self.cpus else ""
        return f"{name} (min(connections, 2) threads, Lua-checked answers{where})"

    def _body_file(self, body: bytes) -> Path:
        if body not in self._bodies:
            handle, name = tempfile.mkstemp(prefix="bench-asgi-", suffix=".json")
            with os.fdopen(handle, "wb") as file:
                file.write(body)
            self._bodies[body] = Path(name)
        return self._bodies[body]

    def close(self) -> None:
        """Remove the body files."""
        for path in self._bodies.values():
            path.unlink(missing_ok=True)
        self._bodies.clear()

    def run(self, port: int, request: LoadRequest, connections: int, seconds: int) -> LoadResult:
        """One wrk run; its checked numbers."""
        command = [
            *_pinned(self.cpus),
            self.executable,
            f"-t{min(connections, 2)}",
            f"-c{connections}",
            f"-d{seconds}s",
            f"--timeout={WRK_TIMEOUT}",
            "-s",
            str(LUA_SCRIPT),
            f"http://127.0.0.1:{port}/mcp",
            "--",
            str(self._body_file(request.body)),
            request.expected,
            *(f"{name}: {value}" for name, value in request.headers),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, check=False, timeout=seconds + RUN_GRACE
            )
        except subprocess.TimeoutExpired:
            raise BenchmarkError(f"wrk ran over {seconds + RUN_GRACE:g} s") from None
        return parse_wrk(done.stdout + done.stderr)


# ------------------------------------------------------------ the fallback


@dataclass
class _Tally:
    """What the fallback's connections counted."""

    latencies: list[float] = field(default_factory=list)
    bad_status: int = 0
    bad_body: int = 0
    socket_errors: int = 0


@dataclass
class PythonLoad:
    """bench's own client (trio, `transports._net.http1`), in this process.

    ``cpus``: the CPUs this process runs on meanwhile (none: wherever it was).
    """

    cpus: str | None = None

    @property
    def description(self) -> str:
        """How the rows name it."""
        where = f", pinned to CPU {self.cpus}" if self.cpus else ""
        return (
            "bench's own HTTP/1.1 client (trio + transports._net.http1, one task per "
            f"connection, in the bench process{where}): wrk is not installed, and this "
            "client is slower than wrk, so it may cap the rates (apt-get install wrk)"
        )

    def run(self, port: int, request: LoadRequest, connections: int, seconds: int) -> LoadResult:
        """One run in a trio loop of its own; its checked numbers."""
        previous = os.sched_getaffinity(0) if self.cpus else None
        if self.cpus:
            os.sched_setaffinity(0, _cpu_set(self.cpus))
        try:
            tally = _Tally()
            started = time.perf_counter()
            trio.run(_load, port, request, connections, seconds, tally)
            elapsed = time.perf_counter() - started
        finally:
            if previous is not None:
                os.sched_setaffinity(0, previous)
        latencies = sorted(tally.latencies) or [0.0]
        return LoadResult(
            answers=len(tally.latencies),
            seconds=elapsed,
            bad_status=tally.bad_status,
            bad_body=tally.bad_body,
            socket_errors=tally.socket_errors,
            p50_ms=statistics.median(latencies) * 1000,
            p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
            max_ms=latencies[-1] * 1000,
        )


def _cpu_set(cpus: str) -> set[int]:
    """``"1"`` or ``"1-3"`` or ``"0,2"`` as a set of CPU numbers."""
    chosen: set[int] = set()
    for part in cpus.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return chosen


async def _load(
    port: int, request: LoadRequest, connections: int, seconds: int, tally: _Tally
) -> None:
    deadline = trio.current_time() + seconds
    async with trio.open_nursery() as nursery:
        for index in range(connections):
            first_id = (index + 1) * 1_000_000_000
            nursery.start_soon(_connection, port, request, deadline, tally, first_id)


async def _connection(
    port: int, request: LoadRequest, deadline: float, tally: _Tally, first_id: int
) -> None:
    """POST ``request`` back to back on one keep-alive connection until ``deadline``.

    Each request has an id of its own (from ``first_id`` on), as with wrk.
    """
    headers = [
        (b"host", f"127.0.0.1:{port}".encode()),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        *((name.encode("latin-1"), value.encode("latin-1")) for name, value in request.headers),
    ]
    expected = request.expected.encode()
    head, tail = _split_at_id(request.body)
    request_id = first_id
    clock = time.perf_counter
    try:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
    except OSError:
        tally.socket_errors += 1
        return
    async with stream:
        connection = http1.ClientConnection()
        while trio.current_time() < deadline:
            request_id += 1
            body = head + str(request_id).encode() + tail
            started = clock()
            data = connection.send_request(b"POST", b"/mcp", headers, body)
            try:
                await stream.send_all(data)
                status, answer = await _response(connection, stream)
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                tally.socket_errors += 1
                return
            tally.latencies.append(clock() - started)
            if status != 200:
                tally.bad_status += 1
            elif expected not in answer or _TOOL_ERROR in answer:
                tally.bad_body += 1
            if not connection.reusable:
                return
            connection.start_next_cycle()


def _split_at_id(body: bytes) -> tuple[bytes, bytes]:
    """The body before and after its id's digits."""
    match = _ID.search(body)
    if match is None:
        raise BenchmarkError(f"the request has no numeric id: {body[:80]!r}")
    return body[: match.start(1)], body[match.end(1) :]


async def _response(
    connection: http1.ClientConnection, stream: trio.SocketStream
) -> tuple[int, bytes]:
    """The status and body of the next response on ``connection``."""
    status, body = 0, b""
    while True:
        event = connection.next_event()
        if event is http1.NEED_DATA:
            connection.receive_data(await stream.receive_some(_READ_SIZE))
        elif isinstance(event, http1.Response):
            status = event.status
        elif isinstance(event, http1.Data):
            body += event.data
        elif event is http1.END:
            return status, body
        elif event is http1.CLOSED:
            raise trio.BrokenResourceError("the server closed the connection mid-response")
