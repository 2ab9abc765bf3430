"""The HTTP layer: ``tools/call`` round trips between a client and a Streamable HTTP server.

One operation is one ``get_weather`` call made through a client's API, POSTed to a server
*process* on 127.0.0.1, answered by its tool handler, read back as a typed result. Three
ways, each in both eras (legacy: initialize handshake at 2025-11-25, then the session;
modern: 2026-07-28, every request with its ``_meta`` envelope and headers):

* ``mcpcore``: ``transports.open_http_client(url, mode=era)`` and ``client.call_tool``,
  against `transports.serve_http` serving the `mcpcore.server.Server` of
  `bench.dispatch.build_server`; trio and `transports._net.http1` on both sides.
* ``sdk``: the official SDK's ``mcp.Client(url, mode=...)`` (httpx) against its
  ``MCPServer`` as a Streamable HTTP app on uvicorn, in the SDK's fastest configuration
  (`bench.sdk_http`); asyncio on both sides.
* ``ceiling``: no MCP. A bare HTTP/1.1 + trio client POSTs the very body mcpcore's client
  sends (the id changed each time) with the same MCP headers, over keep-alive
  connections, to a bare HTTP/1.1 + trio server that decodes it with msgspec and answers
  with mcpcore's result for that era (`bench._http_ceiling`; HTTP/1.1 parsed and framed
  by the same code as mcpcore's).

Every workload runs twice: with JSON replies (each answer a JSON body) and with SSE
replies (each answer an event stream of one event), every server configured for it
(`bench._http_servers`; mcpcore's with ``serve_http(replies="json" | "stream")``).
Workloads: one call at a time on one connection (batches of `SEQUENTIAL_BATCH` calls,
each call's latency recorded), then the concurrency sweep of `bench._process_layer` (8,
64, 256 callers at once on the one client; 8 alone with ``--quick``); each client opens
the connections it needs: the ceiling one per caller, mcpcore and the SDK as their pools
decide. Clients live in event loops of their own threads and each starts its own server
process on a free port (`bench._process_layer`); per reply mode, one client and server
per variant serves every workload. Every row runs with busy polling off; one call at a
time is also measured with it on (`bench._busy_poll`): mcpcore's client and server and
the ceiling's client and server spin with the same budget on every connection, the SDK
can't.

    python -m bench --only http
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
import trio

from bench._busy_poll import server_arguments
from bench._http_ceiling import CeilingHttpClient, open_ceiling_http
from bench._http_servers import SCRIPT
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
from bench._stdio_runner import AsyncioThread, TrioThread, asyncio_gather, trio_gather
from bench.dispatch import ARGUMENTS
from bench.stdio import ERAS, EXPECTED_TEXT, ceiling_text, exchanged_lines
from mcpcore import types
from mcpcore.client import ConnectMode
from mcpcore_cli.bench.timing import Settings
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["LAYER", "REPLIES", "SEQUENTIAL_BATCH", "WORKLOADS", "run", "variants"]

#: Calls per timed operation, one at a time (full run and ``--quick``): ~30 ms at the
#: ceiling, so the hand-off to the client's loop (~40-70 µs) is well under 1% of it.
SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH = 100, 20
#: Seconds a server process gets to start listening.
START_TIMEOUT: Final = 30.0

#: The issue's goals (issue 5: sequential at least 5x the SDK and 70% of the bare ceiling).
SEQUENTIAL_BEATS_SDK = Target("SDK >= 5x", "mcpcore/sdk", 5.0)
NEAR_CEILING = Target("ceiling >= 0.70", "mcpcore/ceiling", 0.70)

#: One call at a time on one connection (busy polling off, and on), then the sweep,
#: all on the same clients.
WORKLOADS = (
    Workload(
        "sequential, 1 connection",
        1,
        (SEQUENTIAL_BATCH, QUICK_SEQUENTIAL_BATCH),
        (SEQUENTIAL_BEATS_SDK, NEAR_CEILING),
        with_busy_poll=True,
    ),
    *sweep(),
)
#: How the servers answer, each a workload of its own: the row's words for it.
REPLIES: Final = {"json": "JSON replies", "sse": "SSE replies"}
#: What a Streamable HTTP client sends besides the body, per era (the ceiling sends it
#: too, so that the same header block is parsed on both sides).
_MCP_HEADERS: Final = {
    "legacy": [("mcp-protocol-version", ERAS["legacy"]), ("mcp-session-id", "0" * 32)],
    "modern": [
        ("mcp-protocol-version", ERAS["modern"]),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_weather"),
    ],
}


def workload_name(replies: str, workload: str, era: str) -> str:
    """The row's name: ``tools/call over HTTP, SSE replies, 64 in flight, legacy (…)``."""
    return f"tools/call over HTTP, {REPLIES[replies]}, {workload}, {era} ({ERAS[era]})"


# ------------------------------------------------------------ server processes


def _command(kind: str, port: int, *extra: str, options: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, SCRIPT, *options, kind, str(port), *extra]


@asynccontextmanager
async def _trio_server(kind: str, *extra: str, busy_poll: float) -> AsyncIterator[int]:
    """A server process busy-polling ``busy_poll`` on a free port (from trio); its port."""
    port = reserve_port()
    command = _command(kind, port, *extra, options=tuple(server_arguments(busy_poll)))
    process = await trio.lowlevel.open_process(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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


@asynccontextmanager
async def _asyncio_server(kind: str, *extra: str) -> AsyncIterator[int]:
    """A server process listening on a free port (from an asyncio loop); its port."""
    port = reserve_port()
    process = await asyncio.create_subprocess_exec(
        *_command(kind, port, *extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT
    try:
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if process.returncode is not None or loop.time() > deadline:
                    raise BenchmarkError(f"{kind}: the server did not start") from None
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            break
        yield port
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def _url(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp"


# ---------------------------------------------------------------- the variants


def _mode_arguments(replies: str) -> tuple[str, ...]:
    """The server script's arguments that pick the reply mode."""
    return ("sse",) if replies == "sse" else ()


def _mcpcore_variant(era: str, replies: str, budget: float) -> ProcessVariant:
    from transports import open_http_client

    @asynccontextmanager
    async def opener() -> AsyncIterator[Any]:
        async with _trio_server("mcpcore", *_mode_arguments(replies), busy_poll=budget) as port:
            mode: ConnectMode = "modern" if era == "modern" else "legacy"
            async with open_http_client(_url(port), mode=mode, busy_poll=budget) as client:
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


def _sdk_variant(era: str, replies: str) -> ProcessVariant:
    from bench import sdk_dispatch, sdk_http

    @asynccontextmanager
    async def opener() -> AsyncIterator[Any]:
        async with (
            _asyncio_server("sdk", *_mode_arguments(replies)) as port,
            sdk_http.open_client(_url(port), era)() as client,
        ):
            yield client

    return ProcessVariant(
        variant_name("sdk", era),
        "sdk",
        era,
        AsyncioThread,
        opener,
        sdk_dispatch.call_tool(ARGUMENTS),
        content_text,
        asyncio_gather,
        busy_poll=None,  # (the SDK has no busy polling: one variant for every row)
    )


def _ceiling_variant(era: str, replies: str, budget: float) -> ProcessVariant:
    request, result = exchanged_lines(era)
    result_json = msgspec.json.encode(msgspec.json.decode(result)["result"]).decode()
    sse = replies == "sse"

    @asynccontextmanager
    async def opener() -> AsyncIterator[CeilingHttpClient]:
        async with (
            _trio_server(
                "ceiling", result_json, *_mode_arguments(replies), busy_poll=budget
            ) as port,
            open_ceiling_http(
                port, request, _MCP_HEADERS[era], sse=sse, busy_poll=budget
            ) as client,
        ):
            yield client

    return ProcessVariant(
        variant_name("ceiling", era, budget),
        "ceiling",
        era,
        TrioThread,
        opener,
        CeilingHttpClient.call,
        ceiling_text,
        trio_gather,
        busy_poll=budget,
    )


def variants(context: Context, replies: str) -> list[ProcessVariant]:
    """Every column of every era, for ``replies``: mcpcore and the ceiling per budget."""
    built = []
    for era in ERAS:
        if "sdk" in context.available:
            built.append(_sdk_variant(era, replies))
        for budget in budgets(context):
            built += [
                _mcpcore_variant(era, replies, budget),
                _ceiling_variant(era, replies, budget),
            ]
    return built


_SDK_NOTE = {
    "json": "sdk: MCPServer.streamable_http_app(json_response=True, stateless_http=True) on "
    "uvicorn (uvloop, httptools); its result also carries the text as structuredContent",
    "sse": "sdk: MCPServer.streamable_http_app(json_response=False, stateless_http=True) on "
    "uvicorn (uvloop, httptools); its result also carries the text as structuredContent",
}
_REPLY_NOTE = {
    "json": 'every answer a JSON body; mcpcore: serve_http(replies="json") (legacy too: '
    "no priming event, nothing stored for resumption)",
    "sse": "every answer an event stream, the answer its one event; mcpcore: serve_http("
    'replies="stream") (legacy 2025-11-25: a priming event first, both stored for resumption)',
}


def _notes(workload: Workload, era: str, *, replies: str, settings: Settings) -> list[str]:
    request, result = exchanged_lines(era)
    shape = (
        "one call at a time on one keep-alive connection"
        if workload.in_flight == 1
        else f"{workload.in_flight} callers at once on one client"
    )
    return [
        f"client API to tool handler and back over HTTP/1.1 on loopback, {shape}, "
        f"{workload.calls_per_batch(settings)} calls per timed batch; each client in its "
        "own thread's event loop",
        f"mcpcore request body {len(request)} B + result {len(result)} B; ceiling: the same "
        "bodies and MCP headers, bare HTTP/1.1 + trio + msgspec, no MCP, one connection per caller",
        _REPLY_NOTE[replies],
        _SDK_NOTE[replies],
    ]


def run(context: Context) -> list[WorkloadResult]:
    """Measure every workload with JSON replies, then with SSE replies, both eras."""
    results = []
    for replies, words in REPLIES.items():
        results += measure_rows(
            context,
            layer=LAYER.name,
            label=f"tools/call, {words}",
            workloads=selected(WORKLOADS, context.settings),
            variants=variants(context, replies),
            expected_text=EXPECTED_TEXT,
            row_name=functools.partial(workload_name, replies),
            sizes=lambda era: sum(map(len, exchanged_lines(era))),
            notes=functools.partial(_notes, replies=replies, settings=context.settings),
            unavailable=() if "sdk" in context.available else ("sdk",),
            parameters={"transport": f"http-{replies}", "replies": replies},
        )
    return results


LAYER = Layer(
    "http",
    "tools/call between a client and a server process over Streamable HTTP, "
    "JSON replies and SSE replies",
    run,
)
