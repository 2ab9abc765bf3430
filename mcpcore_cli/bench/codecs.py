"""The codecs ``mcpcore bench codec`` times: one message to typed objects and back.

* `mcpcore_codec`: the path `mcpcore.Connection` takes. The nesting is checked first
  (`jsonrpc.nests_too_deeply`, a length comparison for a short message); a request or
  notification is read in one pass into its typed params (`MethodTable.call_decoder`);
  a result in one pass too (with requests of one method in flight the result type is
  known in advance). `encode_request` / `encode_notification` /
  `encode_result_response` write it back.
* `msgspec_codec`: bare ``msgspec.json`` to builtins and back: the ceiling of an
  untyped msgspec path on the same bytes.
* `json_codec` and `orjson_codec`: the same untyped job with the standard library and
  orjson.

`python -m bench`'s codec layer times the same functions on its own workloads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

from mcpcore import DEFAULT_METHODS, jsonrpc
from mcpcore_cli.bench.messages import Payload
from mcpcore_cli.bench.timing import MCPCORE, Variant
from mcpcore_cli.bench.verify import BenchmarkError, json_differences

__all__ = ["json_codec", "mcpcore_codec", "msgspec_codec", "orjson_codec", "verify"]


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
