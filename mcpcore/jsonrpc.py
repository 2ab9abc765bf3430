"""The JSON-RPC 2.0 layer: error codes, the envelope, and the encoder and decoders, made once.

Decoding happens in two stages. `decode_envelope` reads the message once into a
`WireMessage` whose ``params``, ``result`` and ``error`` stay as `msgspec.Raw` (a
view into the input bytes, not a copy). The `Connection` then decodes each body into
the type the method table names: a request is parsed exactly once, and nothing is
ever built as a dict first.

Encoding goes the other way: the outgoing envelope Structs below hold the typed body
and one module-level `msgspec.json.Encoder` writes them out directly.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore._nesting import DECODE_ERRORS, MAX_JSON_DEPTH, SHALLOW_SIZE, nests_too_deeply
from mcpcore.types import Error, RequestId

__all__ = [
    "DECODE_ERRORS",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "INVALID_UTF8",
    "MAX_JSON_DEPTH",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "SHALLOW_SIZE",
    "TOO_DEEP",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "MalformedMessage",
    "WireError",
    "WireMessage",
    "decode_envelope",
    "decode_error",
    "decoder_for",
    "encode",
    "encode_error_response",
    "encode_notification",
    "encode_request",
    "encode_result_response",
    "is_valid_utf8",
    "nests_too_deeply",
    "peek_id",
    "peek_result_id",
]

# JSON-RPC 2.0 codes (2024-11-05 basic/index).
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
#: Legacy resource-not-found (2024-11-05 … 2025-11-25). 2026-07-28 servers MUST NOT
#: emit it and use -32602 instead, but clients SHOULD still accept it.
RESOURCE_NOT_FOUND: Final = -32002
#: 2026-07-28 codes, from the range reserved for the spec (-32020 … -32099).
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: 2025-11-25 only; reserved (never emitted) from 2026-07-28 on.
URL_ELICITATION_REQUIRED: Final = -32042


class WireError(msgspec.Struct, kw_only=True, gc=False):
    """The ``error`` member of a response, with ``data`` left undecoded."""

    code: int
    message: str
    data: Raw | UnsetType = UNSET


class WireMessage(msgspec.Struct, kw_only=True, gc=False):
    """Any JSON-RPC message, as read off the wire before its body is typed.

    Every member is optional here so that one decode classifies requests,
    notifications and responses alike; `Connection` checks which combination
    arrived. ``id`` admits ``None`` only so that error responses to unreadable
    messages (``"id": null``) decode; a request with a null id is invalid.
    """

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


class MalformedMessage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Why `decode_envelope` could not read a message, and what to answer.

    Attributes:
        code: -32700 for bytes that are not JSON (or not UTF-8), -32600 for JSON
            that is not a JSON-RPC message.
        message: A short description, safe to send to the peer.
        request_id: The id, when one could still be read, so the reply can echo it.
        answerable: False when the garbage looked like a response: replying to a
            response risks two peers answering each other's errors forever.
    """

    code: int
    message: str
    request_id: RequestId | None = None
    answerable: bool = True


# Outgoing envelopes. Field order is wire order ("jsonrpc" first reads best in logs),
# and they are built positionally: measurably cheaper than keywords on the hot path.
class _OutgoingRequest(msgspec.Struct, gc=False):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any


class _OutgoingNotification(msgspec.Struct, gc=False):
    jsonrpc: str
    method: str
    params: Any


class _OutgoingResult(msgspec.Struct, gc=False):
    jsonrpc: str
    id: RequestId
    result: Any


class _OutgoingError(msgspec.Struct, gc=False):
    jsonrpc: str
    # "An error response MAY omit id when the id could not be read" (2025-11-25); the
    # 2024-11-05 schema requires it, so it is always written when known.
    id: RequestId | UnsetType
    error: Error


_ENCODER: Final = msgspec.json.Encoder()
_encode: Final = _ENCODER.encode
_ENVELOPE_DECODER: Final = msgspec.json.Decoder(WireMessage)
_ERROR_DECODER: Final = msgspec.json.Decoder(WireError)
_ANY_DECODER: Final = msgspec.json.Decoder()

_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def decoder_for(type_: Any) -> msgspec.json.Decoder[Any]:
    """The one shared JSON decoder for ``type_``, created on first use."""
    decoder = _DECODERS.get(type_)
    if decoder is None:
        decoder = _DECODERS[type_] = msgspec.json.Decoder(type_)
    return decoder


def encode(value: Any) -> bytes:
    """Encode any msgspec-supported value as compact single-line JSON."""
    return _ENCODER.encode(value)


def encode_request(request_id: RequestId, method: str, params: Any = UNSET) -> bytes:
    """Encode a request. ``params`` is a Struct, a dict, or UNSET to omit it."""
    return _encode(_OutgoingRequest("2.0", request_id, method, params))


def encode_notification(method: str, params: Any = UNSET) -> bytes:
    """Encode a notification. ``params`` is a Struct, a dict, or UNSET to omit it."""
    return _encode(_OutgoingNotification("2.0", method, params))


def encode_result_response(request_id: RequestId, result: Any) -> bytes:
    """Encode a successful response."""
    return _encode(_OutgoingResult("2.0", request_id, result))


def encode_error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = UNSET
) -> bytes:
    """Encode an error response; ``request_id=None`` omits the id (it could not be read)."""
    error = Error(code=code, message=message, data=data)
    return _encode(_OutgoingError("2.0", UNSET if request_id is None else request_id, error))


def is_valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, as every message "MUST be" (2024-11-05 basic).

    msgspec checks the strings it decodes, but not those it skips (unknown fields) or
    keeps raw (``params``), so a message is checked once, whole. ASCII, the common
    case, is valid by definition and costs one fast scan.
    """
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


#: The answer to bytes that are not UTF-8.
INVALID_UTF8: Final = MalformedMessage(code=PARSE_ERROR, message="Parse error: invalid UTF-8")
#: The answer to JSON nested deeper than `MAX_JSON_DEPTH` (see `nests_too_deeply`).
TOO_DEEP: Final = MalformedMessage(
    code=PARSE_ERROR, message=f"Parse error: nested deeper than {MAX_JSON_DEPTH} levels"
)


def decode_envelope(data: bytes, *, utf8_checked: bool = False) -> WireMessage | MalformedMessage:
    """Read one JSON-RPC message (not a batch) into its envelope, bodies left raw.

    Never raises: bytes that can't be read come back as a `MalformedMessage` saying
    how to answer them. ``utf8_checked`` skips the UTF-8 check a caller already made.
    Only ``jsonrpc``, ``id`` and ``method`` are built, so nothing deep comes out however
    deep the bodies nest; check `nests_too_deeply` before decoding those (as
    `Connection.receive` does).
    """
    if not utf8_checked and not is_valid_utf8(data):
        return INVALID_UTF8
    try:
        return _ENVELOPE_DECODER.decode(data)
    except msgspec.ValidationError:
        # Valid JSON of the wrong shape. Rare, so take the slow road and look at it
        # generically to recover an id to echo and to tell requests from responses.
        return _classify_invalid(data)
    except RecursionError:
        return TOO_DEEP  # deeper than the stack holds, even to skip the bodies
    except DECODE_ERRORS:
        # "MUST be UTF-8 encoded" (2024-11-05 basic): msgspec raises
        # UnicodeDecodeError, not DecodeError, for invalid UTF-8.
        return MalformedMessage(code=PARSE_ERROR, message="Parse error: invalid JSON")


_ID_PREFIX: Final = b'{"jsonrpc":"2.0","id":'
_RESULT_KEY: Final = b',"result":'
# The member after the id, and what it makes of a message (for `peek_id`).
_NEXT_KEYS: Final = ((b',"method":', "method"), (_RESULT_KEY, "result"), (b',"error":', "error"))
# No id of ours is longer, and Python refuses to convert a much longer digit string.
_MAX_ID_DIGITS: Final = 20


def peek_result_id(data: bytes) -> RequestId | None:
    """The id of a result written in the usual key order, read without parsing the rest.

    Encoders, ours and the official SDKs', write ``{"jsonrpc":"2.0","id":…,"result":``.
    Knowing the id first tells which result type to expect, so the whole response can
    be decoded in one pass. None when the message does not start that way (or its id
    has escapes): the general path reads it. A hint only: the one-pass decode checks it.
    """
    read = _read_id(data)
    if read is None:
        return None
    request_id, end = read
    return request_id if data.startswith(_RESULT_KEY, end) else None


def peek_id(data: bytes) -> tuple[RequestId, str] | None:
    """The id of a message written in the usual key order, and the member after it.

    ``{"jsonrpc":"2.0","id":7,"method":…`` gives ``(7, "method")``; the member is
    ``"method"`` (a request), ``"result"`` or ``"error"`` (a response). None when the
    message does not start that way. Read without parsing the rest, for a message that
    is not parsed at all (`nests_too_deeply`): a hint, as nothing after it is checked.
    """
    read = _read_id(data)
    if read is None:
        return None
    request_id, end = read
    for key, member in _NEXT_KEYS:
        if data.startswith(key, end):
            return request_id, member
    return None


def _read_id(data: bytes) -> tuple[RequestId, int] | None:
    """The id after ``{"jsonrpc":"2.0","id":`` and where it ends; None if it is unusual.

    Unusual: escapes in a string id, a string id that isn't UTF-8, or an integer id of
    more than `_MAX_ID_DIGITS` digits.
    """
    if not data.startswith(_ID_PREFIX):
        return None
    start = len(_ID_PREFIX)
    if data[start : start + 1] == b'"':
        end = data.find(b'"', start + 1)
        if end < 0:
            return None
        token = data[start + 1 : end]
        if b"\\" in token or not is_valid_utf8(token):
            return None
        request_id: RequestId = token.decode()
        end += 1
    else:
        end = data.find(b",", start, start + _MAX_ID_DIGITS + 2)
        token = data[start:end]
        if end < 0 or not token.lstrip(b"-").isdigit():
            return None
        request_id = int(token)
    return request_id, end


def decode_error(raw: Raw) -> WireError | None:
    """Decode the ``error`` member of a response, or None if it is not a JSON-RPC error object."""
    try:
        return _ERROR_DECODER.decode(raw)
    except DECODE_ERRORS:
        return None


def _classify_invalid(data: bytes) -> MalformedMessage:
    try:
        value = _ANY_DECODER.decode(data)
    except RecursionError:
        return TOO_DEEP
    except DECODE_ERRORS:
        # The typed decode can stop at the first wrong type (a top-level array, say)
        # before the parser has seen that the rest is not JSON at all.
        return MalformedMessage(code=PARSE_ERROR, message="Parse error: invalid JSON")
    if not isinstance(value, dict):
        return MalformedMessage(
            code=INVALID_REQUEST, message="Invalid Request: a message must be a JSON object"
        )
    raw_id = value.get("id")
    # Echo only ids that are themselves valid; bool is an int subclass in Python.
    request_id = raw_id if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool) else None
    looks_like_response = "method" not in value and ("result" in value or "error" in value)
    return MalformedMessage(
        code=INVALID_REQUEST,
        message="Invalid Request: not a valid JSON-RPC 2.0 message",
        request_id=request_id,
        answerable=not looks_like_response,
    )
