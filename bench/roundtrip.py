"""The round-trip layer: one ``tools/call`` through two in-memory mcpcore Connections.

One operation is the whole exchange, with no IO at all::

    request_id, data = client.send_request("tools/call", params)
    server.receive(data)                      # -> RequestReceived
    reply = server.send_result(request_id, CallToolResult(...))
    client.receive(reply)                     # -> ResponseReceived

in both eras: legacy (after an ``initialize`` handshake at 2025-11-25) and 2026-07-28
(after ``client.start_modern()``, every request stamped with its ``_meta`` envelope and
every result shaped for the modern era).

The comparisons do the codec work of the same round trip on the same bytes, without any
state machine, so they are lower bounds of what a full peer pays:

* ``sdk``: the official SDK's four codec steps (see `bench.sdk.round_trip`). The SDK's
  own in-memory client/server pair, sessions and tasks included, is a separate, later
  benchmark.
* ``msgspec``: bare msgspec encoding and decoding the same two messages as builtins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from bench._layer import Context, Layer
from bench._results import MCPCORE, WorkloadResult, from_samples
from mcpcore import (
    CLIENT,
    LATEST_LEGACY_VERSION,
    LATEST_MODERN_VERSION,
    SERVER,
    Connection,
    RequestReceived,
    ResponseReceived,
    types,
)
from mcpcore_cli.bench.timing import Variant, measure
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["LAYER", "Exchange", "connected_pair", "mcpcore_round_trip", "run"]

INFO = types.Implementation(name="mcpcore-bench", version="1.0")
PARAMS = types.CallToolRequestParams(
    name="get_weather", arguments={"location": "New York", "units": "metric"}
)
RESULT = types.CallToolResult(
    content=[types.TextContent(text="Current weather in New York: 22 degrees C, partly cloudy")],
    is_error=False,
)


def server_capabilities() -> types.ServerCapabilities:
    """A server that offers tools."""
    return types.ServerCapabilities(tools=types.ServerToolsCapability())


def connected_pair(era: str) -> tuple[Connection, Connection]:
    """A client and a server ready for ``tools/call`` in ``era`` (``"legacy"``/``"modern"``)."""
    client = Connection(CLIENT, capabilities=types.ClientCapabilities(), implementation=INFO)
    server = Connection(SERVER, capabilities=server_capabilities(), implementation=INFO)
    if era == "modern":
        client.start_modern(LATEST_MODERN_VERSION)
        return client, server
    hello = types.InitializeRequestParams(
        protocol_version=LATEST_LEGACY_VERSION,
        capabilities=types.ClientCapabilities(),
        client_info=INFO,
    )
    request_id, data = client.send_request("initialize", hello)
    [request] = server.receive(data)
    if not isinstance(request, RequestReceived):
        raise BenchmarkError(f"initialize was not accepted: {request}")
    welcome = types.InitializeResult(
        protocol_version=LATEST_LEGACY_VERSION,
        capabilities=server_capabilities(),
        server_info=INFO,
    )
    reply = server.send_result(request_id, welcome)
    if reply is None:
        raise BenchmarkError("the server sent no initialize result")
    [response] = client.receive(reply)
    if not isinstance(response, ResponseReceived):
        raise BenchmarkError(f"the initialize result was not accepted: {response}")
    server.receive(client.send_notification("notifications/initialized"))
    return client, server


@dataclass(frozen=True)
class Exchange:
    """The bytes of one round trip, captured outside the timing to feed the comparisons."""

    request: bytes
    response: bytes


def mcpcore_round_trip(client: Connection, server: Connection) -> Callable[[], object]:
    """One ``tools/call`` round trip through ``client`` and ``server``."""
    send_request = client.send_request
    receive_request: Callable[[bytes], Any] = server.receive
    send_result: Callable[[Any, Any], Any] = server.send_result
    receive_reply: Callable[[bytes], Any] = client.receive
    params, result = PARAMS, RESULT

    def run() -> object:
        request_id, data = send_request("tools/call", params)
        receive_request(data)
        return receive_reply(send_result(request_id, result))

    return run


def capture_exchange(client: Connection, server: Connection) -> Exchange:
    """Run one round trip step by step, check every event, and keep the bytes."""
    request_id, data = client.send_request("tools/call", PARAMS)
    [request] = server.receive(data)
    if not (
        isinstance(request, RequestReceived)
        and request.params.name == PARAMS.name
        and request.params.arguments == PARAMS.arguments
    ):
        raise BenchmarkError(f"the server did not receive the call: {request}")
    reply = server.send_result(request_id, RESULT)
    if reply is None:
        raise BenchmarkError("the server sent no result")
    [response] = client.receive(reply)
    if not (isinstance(response, ResponseReceived) and response.result.content == RESULT.content):
        raise BenchmarkError(f"the client did not receive the result: {response}")
    return Exchange(data, reply)


def msgspec_round_trip(exchange: Exchange) -> Callable[[], object]:
    """Bare msgspec: encode and decode both messages as builtins."""
    encode = msgspec.json.Encoder().encode
    decode = msgspec.json.Decoder().decode
    request, response = decode(exchange.request), decode(exchange.response)

    def run() -> object:
        decode(encode(request))
        return decode(encode(response))

    return run


ERAS = (
    ("legacy", f"tools/call round trip, legacy ({LATEST_LEGACY_VERSION})"),
    ("modern", f"tools/call round trip, modern ({LATEST_MODERN_VERSION})"),
)


def run(context: Context) -> list[WorkloadResult]:
    """Measure the round trip in both eras."""
    results = []
    for era, name in ERAS:
        context.log(f"roundtrip: {name}")
        client, server = connected_pair(era)
        exchange = capture_exchange(client, server)
        variants = [Variant(MCPCORE, mcpcore_round_trip(client, server))]
        if "sdk" in context.available:
            from bench import sdk

            variants.append(Variant("sdk", sdk.round_trip(exchange.request, exchange.response)))
        variants.append(Variant("msgspec", msgspec_round_trip(exchange)))
        measured = measure(variants, context.settings)
        if client.requests_in_flight or server.requests_in_flight:
            raise BenchmarkError("requests were left in flight: the round trip leaks state")
        results.append(
            from_samples(
                LAYER.name,
                name,
                size_bytes=len(exchange.request) + len(exchange.response),
                unit="round trips/s",
                measured=measured,
                unavailable=() if "sdk" in context.available else ("sdk",),
                notes=(
                    "sdk and msgspec: codec work only, no session or state machine",
                    f"request {len(exchange.request)} B + result {len(exchange.response)} B",
                ),
            )
        )
    return results


LAYER = Layer("roundtrip", "one tools/call through an in-memory client and server", run)
