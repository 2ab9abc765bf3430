"""The large layer: huge messages, as a codec job and end to end over stdio.

Three messages (built by `bench.payloads`, compact JSON): a ``resources/read`` result
carrying one text resource of 1 MiB and of 10 MiB (prose with newlines, tabs and
quotes, so the JSON has escapes), and a ``tools/list`` result of 1,000 tools (each with
name, title, description and an input schema of 2 or 3 properties; 0.6 MB).

**Codec** (messages per second; one operation = the bytes in, typed, and back to
bytes; as the codec layer, whose ``1 MiB`` row is not repeated here):

* ``mcpcore``: `mcpcore_cli.bench.codecs.mcpcore_codec` (the path `mcpcore.Connection` takes);
* ``sdk``: the official SDK's leanest typed path (`bench.sdk.codec`);
* ``msgspec`` and ``orjson``: JSON to builtins and back, the untyped ceilings.

**Huge strings, decode and encode apart** (messages per second): the same 1 MiB and
10 MiB results, each direction alone, to see whether another serializer would pay off
for huge strings. Decode: mcpcore's one-pass typed decode
(``DEFAULT_METHODS["resources/read"].decode_result_message`` after the UTF-8 check),
the SDK's ``validate_json`` + ``ReadResourceResult.model_validate``,
``msgspec.json.decode`` and ``orjson.loads`` to builtins. Encode: mcpcore's
``jsonrpc.encode_result_response`` of the typed result, the SDK's ``model_dump`` +
``JSONRPCResponse.model_dump_json``, ``msgspec.json.encode`` and ``orjson.dumps`` of
the builtins.

**End to end over stdio** (round trips per second): ``client.read_resource(uri)`` of
the 1 MiB and 10 MiB resource, and ``client.list_tools()`` of the 1,000 tools in one
page, legacy era (2025-11-25), one call at a time, each client against a server
process of its own library (`bench._workload_servers` ``large``), no client cache in the
way (mcpcore ``fresh=True``, the SDK ``cache_mode="bypass"``):

* ``mcpcore``: ``transports.open_stdio_client(..., mode="legacy")`` against
  `transports.serve_stdio` serving a `mcpcore.server.Server` (decorator API, the
  resources as functions returning the text, the tools registered with their schemas,
  ``page_size=1000``);
* ``sdk``: ``mcp.Client(StdioServerParameters(...), mode="legacy")`` against its
  low-level ``Server`` with ``on_read_resource`` / ``on_list_tools`` returning
  ready-made models (its leanest server path), on its stdio server.

Each client lives in an event loop of its own thread and starts its server once; per
repetition every variant makes `E2E_CALLS` calls of each kind in a row (interleaved
with the other variants, `bench._storm_runner`), each checked (the text is the
resource's, the tools are the thousand). The rate is calls over their total time;
p50/p99 latency in the notes. mcpcore's client and server run with busy polling off
(`LARGE_BUSY_POLL`, the library's default; `bench._busy_poll`).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import msgspec

from bench import codec, payloads
from bench._busy_poll import OFF, server_arguments
from bench._layer import Context, Layer
from bench._results import MCPCORE, NOT_AVAILABLE, WorkloadResult, from_samples
from bench._stdio_runner import AsyncioThread, TrioThread
from bench._storm_runner import StormOutcome, StormRuns, StormVariant, run_storms
from bench._workload_servers import LARGE_TEXTS, SCRIPT, TOOL_COUNT, resource_uri
from mcpcore import DEFAULT_METHODS, jsonrpc
from mcpcore_cli.bench import codecs
from mcpcore_cli.bench.timing import Variant, measure
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["E2E_CALLS", "LARGE_BUSY_POLL", "LAYER", "decode_only", "encode_only", "run"]

#: Calls of each kind per variant and repetition, end to end: full run and ``--quick``.
#: (A 10 MiB read takes tens of milliseconds even for mcpcore: a few are enough.)
E2E_CALLS: Final = {"1 MiB": (10, 1), "10 MiB": (3, 1), "tools": (20, 2)}
#: Seconds one call may take before its variant is given up on.
CALL_TIMEOUT: Final = 60.0
#: The busy-poll budget of mcpcore's client and server end to end: off, the library's
#: default (a huge message keeps both sides busy: nothing for a spin to save).
LARGE_BUSY_POLL: Final = OFF

_TOOLS_KEY = "tools"


def _texts() -> dict[str, payloads.Payload]:
    return {name: payloads.read_resource_result(size) for name, size in LARGE_TEXTS.items()}


# ---------------------------------------------------------------- codec


def decode_only(payload: payloads.Payload, variant: str) -> Callable[[], object]:
    """Bytes to objects only, for ``variant`` (``mcpcore``, ``sdk``, ``msgspec``, ``orjson``)."""
    data = payload.data
    if variant == MCPCORE:
        decode_message = DEFAULT_METHODS[payload.method].decode_result_message
        is_valid_utf8 = jsonrpc.is_valid_utf8

        def mcpcore_decode() -> object:
            if not is_valid_utf8(data):
                raise BenchmarkError("not UTF-8")
            return decode_message(data)

        return mcpcore_decode
    if variant == "sdk":
        from mcp_types import jsonrpc_message_adapter

        from mcpcore_cli.bench.sdk_codecs import RESULT_TYPES

        validate_json = jsonrpc_message_adapter.validate_json
        result_type = RESULT_TYPES[payload.method]

        def sdk_decode() -> object:
            message: Any = validate_json(data, by_name=False)
            return result_type.model_validate(message.result, by_name=False)

        return sdk_decode
    if variant == "orjson":
        import orjson

        return lambda: orjson.loads(data)
    decode = msgspec.json.Decoder().decode
    return lambda: decode(data)


def encode_only(payload: payloads.Payload, variant: str) -> Callable[[], bytes]:
    """Objects (decoded once, outside the timing) to bytes only, for ``variant``."""
    data = payload.data
    if variant == MCPCORE:
        message = DEFAULT_METHODS[payload.method].decode_result_message(data)
        encode_result: Callable[[Any, Any], bytes] = jsonrpc.encode_result_response
        return lambda: encode_result(message.id, message.result)
    if variant == "sdk":
        from mcp_types import JSONRPCResponse, jsonrpc_message_adapter

        from mcpcore_cli.bench.sdk_codecs import RESULT_TYPES

        envelope: Any = jsonrpc_message_adapter.validate_json(data, by_name=False)
        result = RESULT_TYPES[payload.method].model_validate(envelope.result, by_name=False)

        def sdk_encode() -> bytes:
            out = JSONRPCResponse(
                jsonrpc="2.0",
                id=envelope.id,
                result=result.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
            text: str = out.model_dump_json(by_alias=True, exclude_unset=True)
            return text.encode()

        return sdk_encode
    builtins = msgspec.json.decode(data)
    if variant == "orjson":
        import orjson

        dumps = orjson.dumps
        return lambda: dumps(builtins)
    encode = msgspec.json.Encoder().encode
    return lambda: encode(builtins)


def _columns(context: Context) -> tuple[list[str], tuple[str, ...]]:
    """The codec columns that can run here, and those that can't."""
    wanted = {MCPCORE: None, "sdk": "sdk", "msgspec": None, "orjson": "orjson"}
    running = [
        name for name, needs in wanted.items() if needs is None or needs in context.available
    ]
    return running, tuple(name for name in wanted if name not in running)


def _codec_rows(context: Context) -> list[WorkloadResult]:
    columns, unavailable = _columns(context)
    rows = []
    texts = _texts()
    tools = payloads.list_tools_result(TOOL_COUNT)
    full = [
        ("resources/read result, 10 MiB text", texts["10 MiB"]),
        (f"tools/list result, {TOOL_COUNT:,} tools", tools),
    ]
    for name, payload in full:
        context.log(f"large: codec, {name} ({payload.size:,} B)")
        variants = [
            variant for variant in codec.variants_for(payload, context) if variant.name in columns
        ]
        notes = codecs.verify(payload, variants)
        rows.append(
            from_samples(
                LAYER.name,
                name,
                size_bytes=payload.size,
                unit="msg/s",
                measured=measure(variants, context.settings),
                unavailable=unavailable,
                notes=("bytes to typed objects and back (decode + encode)", *notes),
            )
        )
    for size_name, payload in texts.items():
        for direction, build in (("decode", decode_only), ("encode", encode_only)):
            name = f"{size_name} text result, {direction} only"
            context.log(f"large: {name}")
            variants = [Variant(column, build(payload, column)) for column in columns]
            rows.append(
                from_samples(
                    LAYER.name,
                    name,
                    size_bytes=payload.size,
                    unit="msg/s",
                    measured=measure(variants, context.settings),
                    unavailable=unavailable,
                    notes=(
                        f"{direction} only: mcpcore and sdk typed, msgspec and orjson to/from "
                        "builtins (the question: would orjson pay off for huge strings?)",
                    ),
                )
            )
    return rows


# ---------------------------------------------------------------- end to end


def _kinds(quick: bool) -> dict[str, int]:
    return {kind: calls[1 if quick else 0] for kind, calls in E2E_CALLS.items()}


def _expected() -> dict[str, str]:
    return {name: payloads.text_of_size(size) for name, size in LARGE_TEXTS.items()}


def _check_read(result: Any, expected: str) -> str | None:
    [contents] = result.contents
    text = getattr(contents, "text", None)
    if text != expected:
        size = "none" if text is None else f"{len(text):,} characters"
        return f"read the wrong text ({size}, expected {len(expected):,})"
    return None


def _check_tools(result: Any) -> str | None:
    names = [tool.name for tool in result.tools]
    if names != [f"tool_{index:03d}" for index in range(TOOL_COUNT)]:
        return f"listed {len(names)} tools, not the {TOOL_COUNT:,} expected"
    if getattr(result, "next_cursor", None):  # (None in the SDK, UNSET in mcpcore)
        return "the tools came in more than one page"
    return None


def _e2e_storm(
    calls: dict[str, int],
    read: Callable[[Any, str], Any],
    list_tools: Callable[[Any], Any],
    latencies: dict[str, list[int]],
) -> Callable[[Any], Any]:
    """One repetition: each kind's calls in a row, timed one by one and checked."""
    expected = _expected()
    clock = time.perf_counter_ns

    async def storm(client: Any) -> StormOutcome:
        facts: dict[str, int] = {}
        problem = None
        for kind, count in calls.items():
            total = 0
            for _ in range(count):
                start = clock()
                if kind == _TOOLS_KEY:
                    result = await list_tools(client)
                else:
                    result = await read(client, resource_uri(kind))
                elapsed = clock() - start
                total += elapsed
                latencies[kind].append(elapsed)
                problem = problem or (
                    _check_tools(result)
                    if kind == _TOOLS_KEY
                    else _check_read(result, expected[kind])
                )
            facts[kind] = total
        return StormOutcome(sum(facts.values()), facts, problem)

    return storm


def _mcpcore_e2e(calls: dict[str, int], latencies: dict[str, list[int]]) -> StormVariant:
    from transports import StdioClient, open_stdio_client

    def opener() -> AbstractAsyncContextManager[StdioClient]:
        return open_stdio_client(
            sys.executable,
            args=[SCRIPT, *server_arguments(LARGE_BUSY_POLL), "mcpcore", "large"],
            mode="legacy",
            timeout=CALL_TIMEOUT,
            busy_poll=LARGE_BUSY_POLL,
        )

    async def read(client: StdioClient, uri: str) -> Any:
        return await client.read_resource(uri, fresh=True)

    async def list_tools(client: StdioClient) -> Any:
        return await client.list_tools(fresh=True)

    return StormVariant(
        MCPCORE,
        TrioThread,
        opener,
        _e2e_storm(calls, read, list_tools, latencies),
        busy_poll=LARGE_BUSY_POLL,
    )


def _sdk_e2e(calls: dict[str, int], latencies: dict[str, list[int]]) -> StormVariant:
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=sys.executable, args=[SCRIPT, "sdk", "large"])

    def opener() -> AbstractAsyncContextManager[Client]:
        return Client(parameters, mode="legacy")

    async def read(client: Client, uri: str) -> Any:
        return await asyncio.wait_for(client.read_resource(uri, cache_mode="bypass"), CALL_TIMEOUT)

    async def list_tools(client: Client) -> Any:
        return await asyncio.wait_for(client.list_tools(cache_mode="bypass"), CALL_TIMEOUT)

    return StormVariant(
        "sdk",
        AsyncioThread,
        opener,
        _e2e_storm(calls, read, list_tools, latencies),
        busy_poll=None,
    )


def _percentiles(values: list[int]) -> str:
    ordered = sorted(values)
    p50 = ordered[len(ordered) // 2] / 1e6
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] / 1e6
    return f"{p50:.1f}/{p99:.1f}"


def _e2e_rows(context: Context) -> list[WorkloadResult]:
    calls = _kinds(context.settings.quick)
    context.log("large: resources/read of 1 and 10 MiB and tools/list of 1,000 tools, over stdio")
    latencies: dict[str, dict[str, list[int]]] = {
        column: {kind: [] for kind in calls} for column in (MCPCORE, "sdk")
    }
    variants = [_mcpcore_e2e(calls, latencies[MCPCORE])]
    if "sdk" in context.available:
        variants.append(_sdk_e2e(calls, latencies["sdk"]))
    runs: StormRuns = run_storms(context, LAYER.name, variants)
    sizes = {name: payload.size for name, payload in _texts().items()}
    sizes[_TOOLS_KEY] = payloads.list_tools_result(TOOL_COUNT).size
    rows = []
    for kind, count in calls.items():
        rates = {
            column: [count * 1e9 / outcome.facts[kind] for outcome in outcomes]
            for column, outcomes in runs.outcomes.items()
        }
        ours = rates[MCPCORE]
        values: dict[str, float | None] = {
            column: statistics.median(samples) for column, samples in rates.items()
        }
        ratios: dict[str, float | None] = {
            f"{MCPCORE}/{column}": statistics.median(
                a / b for a, b in zip(ours, samples, strict=True)
            )
            for column, samples in rates.items()
            if column != MCPCORE
        }
        if "sdk" not in rates:
            values["sdk"] = NOT_AVAILABLE
            ratios[f"{MCPCORE}/sdk"] = NOT_AVAILABLE
        latency = ", ".join(f"{column} {_percentiles(latencies[column][kind])}" for column in rates)
        what = (
            f"tools/list of {TOOL_COUNT:,} tools over stdio"
            if kind == _TOOLS_KEY
            else f"resources/read of {kind} text over stdio"
        )
        rows.append(
            WorkloadResult(
                layer=LAYER.name,
                name=what,
                size_bytes=sizes[kind],
                unit="round trips/s",
                values=values,
                samples=rates,
                ratios=ratios,
                notes=[
                    f"client API to server and back, one call at a time, legacy era, {count} "
                    f"calls per repetition, median of {len(ours)} repetitions; the sdk "
                    "server is its low-level Server",
                    f"latency p50/p99 in ms: {latency}",
                    *(f"{column}: n/a: {why}" for column, why in runs.failed.items()),
                ],
                parameters={"busy_poll_seconds": LARGE_BUSY_POLL},
            )
        )
    return rows


def run(context: Context) -> list[WorkloadResult]:
    """Measure the codec rows, then the end-to-end rows."""
    return _codec_rows(context) + _e2e_rows(context)


LAYER = Layer(
    "large", "1 and 10 MiB resources and 1,000 tools: codec, huge strings, over stdio", run
)
