"""``python -m bench.profiling``: where mcpcore's time goes, for fixing the core.

For each codec workload, the time of each step of mcpcore's path next to bare msgspec's
(measured like the benchmark: calibrated, interleaved, medians), then a cProfile of
mcpcore's whole operation. ``--roundtrip`` profiles the in-memory round trip instead.

Examples::

    python -m bench.profiling                                       # every codec workload
    python -m bench.profiling "resources/read result, 1 KiB text"   # one of them
    python -m bench.profiling --roundtrip legacy --top 25
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from bench import codec, roundtrip
from bench.payloads import Payload
from mcpcore import DEFAULT_METHODS, jsonrpc
from mcpcore_cli.bench import codecs
from mcpcore_cli.bench.timing import Settings, Variant, calibrate, measure

__all__ = ["main", "profile_operation", "steps"]

SETTINGS = Settings(repeat=5, target_seconds=0.05)
#: How long the cProfile run lasts, in seconds of unprofiled time.
PROFILE_SECONDS = 0.5


def steps(payload: Payload) -> list[Variant]:
    """The steps of mcpcore's path and of bare msgspec's, each alone, on ``payload``."""
    data = payload.data
    envelope = jsonrpc.decode_envelope(data)
    if isinstance(envelope, jsonrpc.MalformedMessage):
        raise SystemExit(f"not a valid message: {envelope.message}")
    spec = DEFAULT_METHODS[payload.method]
    decode_body: Callable[[Any], Any]
    encode: Callable[[], bytes]
    # The envelope's members, typed loosely as the Connection's own code passes them on.
    body: Any
    request_id: Any = envelope.id
    if payload.kind == "result":
        body = envelope.result
        decode_body = jsonrpc.decoder_for(spec.result_type).decode
        typed = decode_body(body)

        def encode() -> bytes:
            return jsonrpc.encode_result_response(request_id, typed)
    else:
        body = envelope.params
        decode_body = spec.decode_params
        typed = decode_body(body)
        method = payload.method
        if payload.kind == "request":

            def encode() -> bytes:
                return jsonrpc.encode_request(request_id, method, typed)
        else:

            def encode() -> bytes:
                return jsonrpc.encode_notification(method, typed)

    untyped = msgspec.json.decode(data)
    plain_encoder = msgspec.json.Encoder()
    plain_decoder = msgspec.json.Decoder()
    return [
        Variant("mcpcore: decode_envelope", lambda: jsonrpc.decode_envelope(data)),
        Variant("mcpcore: typed decode of the body", lambda: decode_body(body)),
        Variant("mcpcore: encode", encode),
        Variant("mcpcore: whole operation", codecs.mcpcore_codec(payload)),
        Variant("msgspec: decode to builtins", lambda: plain_decoder.decode(data)),
        Variant("msgspec: encode builtins", lambda: plain_encoder.encode(untyped)),
        Variant("msgspec: whole operation", codecs.msgspec_codec(data)),
    ]


def profile_operation(operation: Callable[[], object], top: int) -> str:
    """A cProfile of ``operation`` repeated for about `PROFILE_SECONDS`, top functions."""
    iterations = calibrate(operation, PROFILE_SECONDS)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(iterations):
        operation()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return f"{iterations} operations profiled\n{out.getvalue()}"


def print_steps(payload: Payload) -> None:
    """Print the time of each step, in nanoseconds per operation."""
    measured = measure(steps(payload), SETTINGS)
    for name, samples in measured.items():
        print(f"  {name:<36}{1e9 / samples.median:>14,.0f} ns")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.profiling", description=__doc__)
    parser.add_argument("workload", nargs="*", help="codec workloads to profile (default: all)")
    parser.add_argument("--roundtrip", choices=[era for era, _ in roundtrip.ERAS])
    parser.add_argument("--top", type=int, default=15, help="functions to list (default 15)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Profile what the command line asks for."""
    args = parse_args(argv)
    if args.roundtrip:
        client, server = roundtrip.connected_pair(args.roundtrip)
        print(f"== tools/call round trip, {args.roundtrip}")
        print(profile_operation(roundtrip.mcpcore_round_trip(client, server), args.top))
        return 0
    known = {workload.name: workload for workload in codec.WORKLOADS}
    unknown = [name for name in args.workload if name not in known]
    if unknown:
        print(f"unknown workloads {unknown}; choose from {sorted(known)}", file=sys.stderr)
        return 2
    for name in args.workload or list(known):
        payload = known[name].build()
        print(f"== {name} ({payload.size} B)")
        print_steps(payload)
        print(profile_operation(codecs.mcpcore_codec(payload), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
