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

from collections.abc import Callable
from dataclasses import dataclass

from bench import payloads
from bench._layer import Context, Layer
from bench._results import MCPCORE, Target, WorkloadResult, from_samples
from mcpcore_cli.bench.codecs import (
    json_codec,
    mcpcore_codec,
    msgspec_codec,
    orjson_codec,
    verify,
)
from mcpcore_cli.bench.messages import Payload
from mcpcore_cli.bench.timing import Variant, measure

__all__ = ["LAYER", "WORKLOADS", "Workload", "run", "variants_for"]

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
