"""The stdio layer: ``tools/call`` round trips between a client and a server process.

One operation is one ``get_weather`` call made through a client's API, carried over the
server process's stdin and stdout as JSON lines, answered by the server's tool handler.
Three ways, each in both eras (legacy: initialize handshake at 2025-11-25; modern:
2026-07-28):

* ``mcpcore``: ``transports.open_stdio_client(sys.executable, args=[_stdio_servers.py,
  "mcpcore"], mode=era)`` and ``client.call_tool``, against `transports.serve_stdio`
  serving the `mcpcore.server.Server` of `bench.dispatch.build_server`; trio on both
  sides.
* ``sdk``: the official SDK's ``mcp.Client(StdioServerParameters(...), mode=...)``
  against its ``MCPServer`` run on stdio (`bench.sdk_stdio`); asyncio on both sides.
* ``ceiling``: no MCP at all. A trio client writes the very request line mcpcore's
  client sends (the id changed each time, encoded by msgspec) to a trio server process
  (`bench._stdio_servers`), which decodes it with msgspec and answers with the very
  result line mcpcore's server sends, encoded by msgspec; the client decodes that and
  checks its id. Plain ``FdStream.send_all`` / ``receive_some`` on the same kind of
  pipes. One call at a time it writes and reads the pipes itself; with many in flight
  a reader task routes the answers by id and a writer task joins the waiting requests
  into one write.

Workloads: one call at a time (batches of `SEQUENTIAL_BATCH` calls, each call's
latency recorded), and the concurrency sweep of `bench._process_layer` (8, 64, 256
callers at once on the one client; 8 alone with ``--quick``). Every row runs with busy
polling off; one call at a time is also measured with it on (`bench._busy_poll`): then
mcpcore's client and server and the ceiling's client and server all spin with the same
budget (the ceiling registers its pipes with `transports.BusyPolling`), the SDK can't.
Each client runs in an event loop of its own thread (`bench._stdio_runner`); the
harness hands it one batch per operation. Servers start once per variant for all the
workloads, before any timing; every variant's answer is checked outside the timing;
every server process is stopped at the end, killed if need be.

    python -m bench --only stdio
    python -m bench.stdio --handoff     # the cost of handing a batch to each kind of loop
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import msgspec
import trio

from bench._busy_poll import busy_polling, server_arguments
from bench._layer import Context, Layer
from bench._process_layer import (
    ProcessVariant,
    Workload,
    budgets,
    content_text,
    measure_rows,
    selected,
    sweep,
    variant_name,
)
from bench._results import MCPCORE, Target, WorkloadResult
from bench._stdio_runner import (
    AsyncioThread,
    LoopThread,
    TrioThread,
    asyncio_gather,
    trio_gather,
)
from bench._stdio_servers import READ_SIZE, SCRIPT
from bench.dispatch import ARGUMENTS, MemoryDriver, build_server, weather
from mcpcore import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, types
from mcpcore.client import ConnectMode, Outcome
from mcpcore_cli.bench.timing import Settings, Variant, measure
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "LAYER",
    "SEQUENTIAL_BATCH",
    "WORKLOADS",
    "CeilingClient",
    "ceiling_text",
    "exchanged_lines",
    "handoff",
    "open_ceiling",
    "run",
    "variants",
    "workload_name",
]

#: Calls per timed operation, one at a time (full run and ``--quick``): ~12 ms at the
#: ceiling, so the hand-off to the client's loop (~40-70 µs) is under 1% of it.
SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH = 200, 50

#: The issue's goals. "30x the SDK with 100 in flight" is checked at 64 in flight, the
#: point of the sweep nearest 100.
SEQUENTIAL_BEATS_SDK = Target("SDK >= 10x", "mcpcore/sdk", 10.0)
NEAR_CEILING = Target("ceiling >= 0.70", "mcpcore/ceiling", 0.70)
IN_FLIGHT_BEATS_SDK = Target("SDK >= 30x", "mcpcore/sdk", 30.0)

ERAS = {"legacy": LATEST_LEGACY_VERSION, "modern": LATEST_MODERN_VERSION}
#: What every variant's tool answers.
EXPECTED_TEXT = weather(ARGUMENTS["location"], ARGUMENTS["units"])


def workload_name(workload: str, era: str) -> str:
    """The row's name: ``tools/call over stdio, sequential, legacy (2025-11-25)``."""
    return f"tools/call over stdio, {workload}, {era} ({ERAS[era]})"


# ---------------------------------------------------------------- the raw ceiling


@functools.cache
def exchanged_lines(era: str) -> tuple[bytes, bytes]:
    """The request and result mcpcore's client and server exchange for one call in ``era``.

    Captured from an in-memory `bench.dispatch.MemoryDriver` pair (the same
    `ClientSession` and `Server` the stdio variant runs), outside any timing.
    """

    class Recorder(MemoryDriver):
        sent: list[bytes]
        received: list[bytes]

        async def request(
            self, request_id: types.RequestId, data: bytes, *, timeout: float | None = None
        ) -> Outcome:
            self.sent.append(data)
            return await super().request(request_id, data, timeout=timeout)

        async def to_client(self, data: bytes) -> Outcome | None:
            self.received.append(data)
            return await super().to_client(data)

    async def exchange() -> tuple[bytes, bytes]:
        recorder = Recorder(build_server())
        recorder.sent, recorder.received = [], []
        await recorder.session.connect("modern" if era == "modern" else "legacy")
        await recorder.session.call_tool("get_weather", ARGUMENTS)
        return recorder.sent[-1], recorder.received[-1]

    return asyncio.run(exchange())


class _Pending:
    """One pipelined call of the ceiling client, waiting for its answer."""

    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.answer: Any = None


class CeilingClient:
    """The raw ceiling's client: JSON lines over a process's pipes, msgspec, nothing else.

    `call` writes and reads the pipes itself (one call at a time); `call_pipelined`
    leaves the writing to `write_requests` and the reading to `read_answers`, which run
    as tasks in ``nursery`` from the first pipelined call on, so that many calls can be
    in flight (and `call` pipelines too from then on: only one task may read).
    """

    def __init__(self, process: trio.Process, request: bytes, nursery: trio.Nursery) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._request: dict[str, Any] = msgspec.json.decode(request)
        self._encode = msgspec.json.Encoder().encode
        self._decode = msgspec.json.Decoder().decode
        self._next_id = 0
        self._rest = b""
        self._pending: dict[int, _Pending] = {}
        self._outbox, self._queued = trio.open_memory_channel[bytes](float("inf"))
        self._nursery = nursery
        self._pipelining = False

    def _line(self) -> tuple[int, bytes]:
        self._next_id += 1
        self._request["id"] = self._next_id
        return self._next_id, self._encode(self._request) + b"\n"

    async def call(self) -> Any:
        """One call, alone on the pipes: write the request, read the answer; its result."""
        if self._pipelining:
            return await self.call_pipelined()
        request_id, line = self._line()
        await self._stdin.send_all(line)
        rest = self._rest
        while (end := rest.find(b"\n")) < 0:
            chunk = await self._stdout.receive_some(READ_SIZE)
            if not chunk:
                raise BenchmarkError("ceiling: the server hung up")
            rest += chunk
        self._rest = rest[end + 1 :]
        answer = self._decode(rest[:end])
        if answer["id"] != request_id:
            raise BenchmarkError(f"ceiling: answer {answer['id']!r} to request {request_id}")
        return answer["result"]

    async def call_pipelined(self) -> Any:
        """One call among many in flight; its result."""
        if not self._pipelining:
            self._pipelining = True
            self._nursery.start_soon(self.write_requests)
            self._nursery.start_soon(self.read_answers)
        request_id, line = self._line()
        pending = self._pending[request_id] = _Pending()
        self._outbox.send_nowait(line)
        await pending.event.wait()
        return pending.answer

    async def write_requests(self) -> None:
        """The writer task: every waiting request line, joined into one write."""
        queued = self._queued
        async for first in queued:
            lines = [first]
            while True:
                try:
                    lines.append(queued.receive_nowait())
                except trio.WouldBlock:
                    break
            await self._stdin.send_all(first if len(lines) == 1 else b"".join(lines))

    async def read_answers(self) -> None:
        """The reader task: each answer to the call waiting for it."""
        rest = self._rest
        decode, pending = self._decode, self._pending
        while chunk := await self._stdout.receive_some(READ_SIZE):
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines:
                answer = decode(line)
                waiting = pending.pop(answer["id"])
                waiting.answer = answer["result"]
                waiting.event.set()
        raise BenchmarkError("ceiling: the server hung up")


@asynccontextmanager
async def open_ceiling(
    request: bytes, result: bytes, busy_poll: float
) -> AsyncIterator[CeilingClient]:
    """Spawn the ceiling's server process answering with ``result``; a client to it.

    Both spin up to ``busy_poll`` seconds before their event loop sleeps, on the pipe
    their peer writes to, as `transports.open_stdio_client` and `transports.serve_stdio`
    do with the same budget.
    """
    process = await trio.lowlevel.open_process(
        [sys.executable, SCRIPT, *server_arguments(busy_poll), "ceiling", result.decode()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    # (The descriptor as open_stdio_client finds it: -1, nothing to watch, if not a pipe.)
    stdout = process.stdout
    fd = stdout.fileno() if isinstance(stdout, trio.lowlevel.FdStream) else -1
    try:
        async with trio.open_nursery() as nursery:
            with busy_polling(fd, busy_poll):
                yield CeilingClient(process, request, nursery)
            nursery.cancel_scope.cancel()
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


# ---------------------------------------------------------------- the variants


def _mcpcore_variant(era: str, budget: float) -> ProcessVariant:
    from transports import StdioClient, open_stdio_client

    mode: ConnectMode = "modern" if era == "modern" else "legacy"

    def opener() -> AbstractAsyncContextManager[StdioClient]:
        return open_stdio_client(
            sys.executable,
            args=[SCRIPT, *server_arguments(budget), "mcpcore"],
            mode=mode,
            busy_poll=budget,
        )

    async def call(client: StdioClient) -> types.CallToolResult:
        return await client.call_tool("get_weather", ARGUMENTS)

    return ProcessVariant(
        variant_name(MCPCORE, era, budget),
        MCPCORE,
        era,
        TrioThread,
        opener,
        call,
        content_text,
        trio_gather,
        busy_poll=budget,
    )


def _sdk_variant(era: str) -> ProcessVariant:
    from bench import sdk_dispatch, sdk_stdio

    return ProcessVariant(
        variant_name("sdk", era),
        "sdk",
        era,
        AsyncioThread,
        sdk_stdio.open_client(era),
        sdk_dispatch.call_tool(ARGUMENTS),
        content_text,
        asyncio_gather,
        busy_poll=None,  # (the SDK has no busy polling: one variant for every row)
    )


def _ceiling_variant(era: str, budget: float) -> ProcessVariant:
    request, result = exchanged_lines(era)
    result_json = msgspec.json.encode(msgspec.json.decode(result)["result"])

    def opener() -> AbstractAsyncContextManager[CeilingClient]:
        return open_ceiling(request, result_json, budget)

    return ProcessVariant(
        variant_name("ceiling", era, budget),
        "ceiling",
        era,
        TrioThread,
        opener,
        CeilingClient.call,
        ceiling_text,
        trio_gather,
        call_concurrent=CeilingClient.call_pipelined,
        busy_poll=budget,
    )


def ceiling_text(answer: Any) -> str:
    """The text of a raw ceiling's answer (a result decoded to builtins)."""
    [block] = answer["content"]
    return str(block["text"])


# ---------------------------------------------------------------- the workloads

#: One call at a time (with busy polling off, and on), then the sweep, all on the same
#: clients and servers.
SEQUENTIAL = Workload(
    "sequential",
    1,
    (SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH),
    (SEQUENTIAL_BEATS_SDK, NEAR_CEILING),
    with_busy_poll=True,
)
SWEEP = sweep({64: (IN_FLIGHT_BEATS_SDK,)})
WORKLOADS = (SEQUENTIAL, *SWEEP)


def variants(context: Context) -> list[ProcessVariant]:
    """Every column of every era: mcpcore and the ceiling once per busy-poll budget."""
    built = []
    for era in ERAS:
        if "sdk" in context.available:
            built.append(_sdk_variant(era))
        for budget in budgets(context):
            built += [_mcpcore_variant(era, budget), _ceiling_variant(era, budget)]
    return built


_SDK_NOTE = (
    "sdk: MCPServer's result also carries the text as structuredContent "
    '({"result": ...}), as it does for every tool returning str'
)


def _notes(workload: Workload, era: str, settings: Settings) -> list[str]:
    request, result = exchanged_lines(era)
    shape = (
        "one call at a time"
        if workload.in_flight == 1
        else f"{workload.in_flight} callers at once on one client"
    )
    return [
        "client API to tool handler and back through a server process's stdin/stdout, "
        f"{shape}, {workload.calls_per_batch(settings)} calls per timed batch; each client "
        "in its own thread's event loop",
        f"mcpcore request {len(request)} B + result {len(result)} B; ceiling: the same "
        "bytes, trio + msgspec to builtins, no MCP",
        _SDK_NOTE,
    ]


def run(context: Context) -> list[WorkloadResult]:
    """Measure one call at a time, then the sweep, both eras; one row per workload and era."""
    return measure_rows(
        context,
        layer=LAYER.name,
        label="tools/call",
        workloads=selected(WORKLOADS, context.settings),
        variants=variants(context),
        expected_text=EXPECTED_TEXT,
        row_name=workload_name,
        sizes=lambda era: sum(map(len, exchanged_lines(era))),
        notes=functools.partial(_notes, settings=context.settings),
        unavailable=() if "sdk" in context.available else ("sdk",),
        parameters={"transport": "stdio"},
    )


LAYER = Layer("stdio", "tools/call between a client and a server process over stdio", run)


# ---------------------------------------------------------------- the hand-off


def handoff(settings: Settings) -> dict[str, float]:
    """Microseconds one empty batch costs on each kind of loop (the harness's hand-off)."""

    @asynccontextmanager
    async def nothing() -> AsyncIterator[None]:
        yield None

    async def empty_batch(target: None) -> None:
        return None

    threads: dict[str, LoopThread[None]] = {
        "trio": TrioThread("trio", nothing, empty_batch),
        "asyncio": AsyncioThread("asyncio", nothing, empty_batch),
    }
    try:
        for thread in threads.values():
            thread.start()
            thread.wait_ready()
        measured = measure(
            [Variant(name, thread.operation) for name, thread in threads.items()], settings
        )
    finally:
        for thread in threads.values():
            thread.close()
    return {name: 1e6 / samples.median for name, samples in measured.items()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--handoff"]:
        sys.exit("usage: python -m bench.stdio --handoff")
    for loop, micros in handoff(Settings(repeat=7, target_seconds=0.15)).items():
        print(f"{loop}: {micros:.1f} µs per batch handed over")
    print(f"(one call at a time, a batch is {SEQUENTIAL_BATCH} calls)")
