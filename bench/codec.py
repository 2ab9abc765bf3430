"""The codec layer: decode one message into its typed form and encode it back to bytes.

Every workload is one wire message (see `bench.payloads`); every variant turns its
bytes into objects and back into bytes, once per operation:

* ``mcpcore``: the path `mcpcore.Connection` takes. The nesting is checked first
  (`jsonrpc.nests_too_deeply`, a length comparison for a short message); a request or
  notification is read in one pass into its typed params (`MethodTable.call_decoder`);
  a result in one pass too (with requests of one method in flight the result type is
  known in advance).
  `encode_request` / `encode_notification` / `encode_result_response` write it back.
* ``sdk``: the official SDK's leanest typed path; ``sdk-session``: the same plus the
  checks its session and runner add. See `bench.sdk` for exactly what each does.
* ``msgspec``: bare ``msgspec.json`` to builtins and back: the ceiling of an untyped
  msgspec path on the same bytes.
* ``json`` and ``orjson``: the same untyped job with the standard library and orjson.

Outside the timing, every variant's output is checked to parse to the same JSON as its
input. mcpcore must pass; another variant that doesn't gets a note in the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from bench import payloads
from bench._layer import Context, Layer
from bench._results import MCPCORE, Target, WorkloadResult, from_samples
from bench._verify import BenchmarkError, json_differences
from bench.payloads import Payload
from mcpcore import DEFAULT_METHODS, jsonrpc
from mcpcore_cli.bench.timing import Variant, measure

__all__ = ["LAYER", "WORKLOADS", "Workload", "mcpcore_codec", "run"]

#: "mcpcore within 1.5x of bare msgspec on the same bytes".
NEAR_MSGSPEC = Target("msgspec >= 0.67", "mcpcore/msgspec", 0.67)
#: "tools/call >= 15x the official SDK", against both SDK paths.
BEATS_SDK = Target("SDK >= 15x", "mcpcore/sdk", 15.0)
BEATS_SDK_SESSION = Target("SDK session >= 15x", "mcpcore/sdk-session", 15.0)


@dataclass(frozen=True)
class Workload:
    """One codec workload: a named message and the goals it is held to."""

    name: str
    build: Callable[[], Payload]
    targets: tuple[Target, ...] = (NEAR_MSGSPEC,)


WORKLOADS = (
    Workload(
        "tools/call request",
        payloads.tools_call_request,
        (BEATS_SDK, BEATS_SDK_SESSION, NEAR_MSGSPEC),
    ),
    Workload("CallToolResult response", payloads.call_tool_result),
    Workload(
        "resources/read result, 1 KiB text", lambda: payloads.read_resource_result(payloads.KIB)
    ),
    Workload(
        "resources/read result, 1 MiB text", lambda: payloads.read_resource_result(payloads.MIB)
    ),
    Workload("tools/list result, 100 tools", payloads.list_tools_result),
    Workload("progress notification", payloads.progress_notification),
)


def mcpcore_codec(payload: Payload) -> Callable[[], bytes]:
    """Decode to typed and encode back the way `mcpcore.Connection` does it.

    Receiving checks the nesting (`jsonrpc.nests_too_deeply`, past `SHALLOW_SIZE`
    bytes) and UTF-8 once, then reads a request or notification in one pass
    (`MethodTable.call_decoder`), and a result in one pass too: with requests of one
    method in flight, the client knows the result type before reading the id.
    """
    data = payload.data
    spec = DEFAULT_METHODS[payload.method]
    is_valid_utf8 = jsonrpc.is_valid_utf8
    shallow, too_deep = jsonrpc.SHALLOW_SIZE, jsonrpc.nests_too_deeply
    if payload.kind == "result":
        # A client with requests of one method in flight knows the result type before
        # reading the id, and decodes the whole response in one pass.
        decode_message = spec.decode_result_message
        encode_result: Callable[[Any, Any], bytes] = jsonrpc.encode_result_response
        prefix = b'{"jsonrpc":"2.0","id":'

        def result_codec() -> bytes:
            if len(data) > shallow and too_deep(data):
                raise BenchmarkError("nested too deeply")
            if not is_valid_utf8(data) or not data.startswith(prefix):
                raise BenchmarkError("not a plain result")
            message = decode_message(data)
            return encode_result(message.id, message.result)

        return result_codec

    decode_call = DEFAULT_METHODS.call_decoder.decode
    if payload.kind == "request":
        encode_request: Callable[[Any, Any, Any], bytes] = jsonrpc.encode_request

        def request_codec() -> bytes:
            # Requests reach servers, which try the one pass directly.
            if (len(data) > shallow and too_deep(data)) or not is_valid_utf8(data):
                raise BenchmarkError("not a valid request")
            call = decode_call(data)
            return encode_request(call.id, call.spec.name, call.params)

        return request_codec

    encode_notification: Callable[[Any, Any], bytes] = jsonrpc.encode_notification

    def notification_codec() -> bytes:
        # Notifications reach clients, which know one by its first bytes.
        if len(data) > shallow and too_deep(data):
            raise BenchmarkError("nested too deeply")
        if not is_valid_utf8(data) or not data.startswith(b'{"jsonrpc":"2.0","method":'):
            raise BenchmarkError("not a valid notification")
        call = decode_call(data)
        return encode_notification(call.spec.name, call.params)

    return notification_codec


def msgspec_codec(data: bytes) -> Callable[[], bytes]:
    """Bare msgspec: JSON to builtins and back, with its Decoder and Encoder made once."""
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode
    return lambda: encode(decode(data))


def json_codec(data: bytes) -> Callable[[], bytes]:
    """The standard library: ``json.loads``, compact ``json.dumps``, UTF-8 bytes out."""
    loads, dumps = json.loads, json.dumps
    return lambda: dumps(loads(data), separators=(",", ":")).encode()


def orjson_codec(data: bytes) -> Callable[[], bytes]:
    """orjson: ``orjson.loads`` and ``orjson.dumps``."""
    import orjson

    loads, dumps = orjson.loads, orjson.dumps
    return lambda: dumps(loads(data))


def variants_for(payload: Payload, context: Context) -> list[Variant]:
    """Every variant that can run here, mcpcore first."""
    variants = [Variant(MCPCORE, mcpcore_codec(payload))]
    if "sdk" in context.available:
        from bench import sdk

        variants.append(Variant("sdk", sdk.codec(payload)))
        variants.append(Variant("sdk-session", sdk.session_codec(payload)))
    variants.append(Variant("msgspec", msgspec_codec(payload.data)))
    variants.append(Variant("json", json_codec(payload.data)))
    if "orjson" in context.available:
        variants.append(Variant("orjson", orjson_codec(payload.data)))
    return variants


def verify(payload: Payload, variants: list[Variant]) -> list[str]:
    """Check each variant's output against the input; notes for those that differ.

    Raises:
        BenchmarkError: mcpcore's output differs.
    """
    notes = []
    for variant in variants:
        output = variant.operation()
        if not isinstance(output, bytes):
            raise BenchmarkError(f"{variant.name} returned {type(output).__name__}, not bytes")
        differences = json_differences(payload.data, output)
        if differences and variant.name == MCPCORE:
            raise BenchmarkError(f"mcpcore changed the message: {', '.join(differences)}")
        if differences:
            notes.append(f"{variant.name} output differs: {', '.join(differences)}")
    return notes


def run(context: Context) -> list[WorkloadResult]:
    """Measure every codec workload, all variants side by side."""
    results = []
    unavailable = tuple(
        name
        for name, needs in (("sdk", "sdk"), ("sdk-session", "sdk"), ("orjson", "orjson"))
        if needs not in context.available
    )
    for workload in WORKLOADS:
        payload = workload.build()
        context.log(f"codec: {workload.name} ({payload.size} B)")
        variants = variants_for(payload, context)
        notes = verify(payload, variants)
        measured = measure(variants, context.settings)
        results.append(
            from_samples(
                LAYER.name,
                workload.name,
                size_bytes=payload.size,
                unit="msg/s",
                measured=measured,
                unavailable=unavailable,
                targets=workload.targets,
                notes=tuple(notes),
            )
        )
    return results


LAYER = Layer("codec", "decode one message to typed objects and encode it back", run)
