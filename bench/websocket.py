"""The WebSocket layer: ``tools/call`` round trips between a client and a WebSocket server.

One operation is one ``get_weather`` call made through a client's API, sent as one text
frame over one WebSocket on 127.0.0.1 to a server *process*, answered by its tool
handler, read back as a typed result. Two ways, each in both eras (legacy: initialize
handshake at 2025-11-25, scoped to the connection; modern: 2026-07-28, every request
with its ``_meta`` envelope):

* ``mcpcore``: ``transports.open_websocket_client(url, mode=era)`` and
  ``client.call_tool``, against `transports.serve_websocket` serving the
  `mcpcore.server.Server` of `bench.dispatch.build_server`; trio and wsproto on both
  sides.
* ``ceiling``: no MCP. A bare wsproto + trio client sends the very JSON mcpcore's client
  sends (the id changed each time) as one text frame to a bare wsproto + trio server
  that decodes it with msgspec and answers with mcpcore's result for that era
  (`bench._ws_ceiling`). One call at a time it writes and reads the socket itself; with
  many in flight a reader task routes answers by id and a writer task joins the waiting
  frames into one write.

There is no SDK column: the official SDK's WebSocket transports were deprecated in 1.30
and removed in 2.x (the TypeScript SDK never had a WebSocket server).

Workloads, as for stdio: one call at a time (batches of `SEQUENTIAL_BATCH` calls, each
call's latency recorded), and the concurrency sweep of `bench._process_layer` (8, 64,
256 callers at once on the one connection; 8 alone with ``--quick``). Clients live in
event loops of their own threads and each starts its own server process on a free port
(`bench._process_layer`). Every row runs with busy polling off; one call at a time is
also measured with it on (`bench._busy_poll`): mcpcore's client and server and the
ceiling's client and server spin with the same budget.

    python -m bench --only websocket
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
import trio

from bench._busy_poll import server_arguments
from bench._layer import Context, Layer
from bench._ports import reserve_port
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
from bench._stdio_runner import TrioThread, trio_gather
from bench._ws_ceiling import PATH, CeilingWsClient, open_ceiling_ws
from bench._ws_servers import SCRIPT
from bench.dispatch import ARGUMENTS
from bench.stdio import ERAS, EXPECTED_TEXT, ceiling_text, exchanged_lines
from mcpcore import types
from mcpcore.client import ConnectMode
from mcpcore_cli.bench.timing import Settings
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["LAYER", "SEQUENTIAL_BATCH", "WORKLOADS", "run", "variants"]

#: Calls per timed operation, one at a time (full run and ``--quick``): ~20 ms at the
#: ceiling, so the hand-off to the client's loop (~40-70 µs) is under 1% of it.
SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH = 100, 20
#: Seconds a server process gets to start listening.
START_TIMEOUT: Final = 30.0

#: The issue's goals (issue 6: 70% of the bare wsproto ceiling sequentially, 50% with
#: 100 in flight, checked at 64, the point of the sweep nearest 100).
SEQUENTIAL_NEAR_CEILING = Target("ceiling >= 0.70", "mcpcore/ceiling", 0.70)
PIPELINED_NEAR_CEILING = Target("ceiling >= 0.50", "mcpcore/ceiling", 0.50)

#: One call at a time (busy polling off, and on), then the sweep, all on the same
#: clients and servers.
SEQUENTIAL = Workload(
    "sequential",
    1,
    (SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH),
    (SEQUENTIAL_NEAR_CEILING,),
    with_busy_poll=True,
)
SWEEP = sweep({64: (PIPELINED_NEAR_CEILING,)})
WORKLOADS = (SEQUENTIAL, *SWEEP)


def workload_name(workload: str, era: str) -> str:
    """The row's name: ``tools/call over WebSocket, sequential, legacy (2025-11-25)``."""
    return f"tools/call over WebSocket, {workload}, {era} ({ERAS[era]})"


# ------------------------------------------------------------ server processes


@asynccontextmanager
async def _server(kind: str, *extra: str, busy_poll: float) -> AsyncIterator[int]:
    """A server process busy-polling ``busy_poll``, listening on a free port; its port."""
    port = reserve_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, SCRIPT, *server_arguments(busy_poll), kind, str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(START_TIMEOUT):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                except OSError:
                    if process.returncode is not None:
                        raise BenchmarkError(f"{kind}: the server exited") from None
                    await trio.sleep(0.05)
                    continue
                await stream.aclose()
                break
        yield port
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


# ---------------------------------------------------------------- the variants


def _mcpcore_variant(era: str, budget: float) -> ProcessVariant:
    from transports import open_websocket_client

    @asynccontextmanager
    async def opener() -> AsyncIterator[Any]:
        async with _server("mcpcore", busy_poll=budget) as port:
            mode: ConnectMode = "modern" if era == "modern" else "legacy"
            url = f"ws://127.0.0.1:{port}{PATH}"
            async with open_websocket_client(url, mode=mode, busy_poll=budget) as client:
                yield client

    async def call(client: Any) -> types.CallToolResult:
        result: types.CallToolResult = await client.call_tool("get_weather", ARGUMENTS)
        return result

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


def _ceiling_variant(era: str, budget: float) -> ProcessVariant:
    request, result = exchanged_lines(era)
    result_json = msgspec.json.encode(msgspec.json.decode(result)["result"]).decode()

    @asynccontextmanager
    async def opener() -> AsyncIterator[CeilingWsClient]:
        async with (
            _server("ceiling", result_json, busy_poll=budget) as port,
            open_ceiling_ws(port, request, busy_poll=budget) as client,
        ):
            yield client

    return ProcessVariant(
        variant_name("ceiling", era, budget),
        "ceiling",
        era,
        TrioThread,
        opener,
        CeilingWsClient.call,
        ceiling_text,
        trio_gather,
        call_concurrent=CeilingWsClient.call_pipelined,
        busy_poll=budget,
    )


def variants(context: Context) -> list[ProcessVariant]:
    """Every column of every era: mcpcore and the ceiling once per busy-poll budget."""
    built = []
    for era in ERAS:
        for budget in budgets(context):
            built += [_mcpcore_variant(era, budget), _ceiling_variant(era, budget)]
    return built


def _notes(workload: Workload, era: str, settings: Settings) -> list[str]:
    request, result = exchanged_lines(era)
    shape = (
        "one call at a time" if workload.in_flight == 1 else f"{workload.in_flight} callers at once"
    )
    return [
        f"client API to tool handler and back over one WebSocket on loopback, {shape}, "
        f"{workload.calls_per_batch(settings)} calls per timed batch; each client in its "
        "own thread's event loop",
        f"mcpcore request {len(request)} B + result {len(result)} B, one text frame "
        "each; ceiling: the same JSON, bare wsproto + trio + msgspec, no MCP",
        "no SDK column: the official SDK has no WebSocket transport in 2.x",
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
        unavailable=(),
        parameters={"transport": "websocket"},
    )


LAYER = Layer(
    "websocket", "tools/call between a client and a server process over one WebSocket", run
)
