"""Which HTTP status a JSON-RPC answer travels with, and what kind of message some bytes are.

2026-07-28 Streamable HTTP gives protocol errors their own statuses: "-32020, -32021,
-32022 and a missing ``_meta`` field (-32602) → 400; an unknown method (-32601) → 404"
(basic/transports). The official Python SDK answers -32700, -32600 and -32602 with 400
too and everything else with 200, which is what `status_for_error` does: a client tells
a 404 carrying -32601 (a modern server, unknown method) from a bare 404 (a legacy
server, CHECKLIST G8) by the body.

`peek_message` reads only the first bytes of an encoded message: drivers use it to tell
the final answer on a stream from the notifications before it without decoding the
message again. It understands the key order every encoder here writes (``jsonrpc``,
then ``id``, then ``method``, ``result`` or ``error``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, NamedTuple

from mcpcore import jsonrpc

__all__ = ["ERROR_STATUSES", "MessageKind", "PeekedMessage", "peek_message", "status_for_error"]

#: JSON-RPC error code → HTTP status (2026-07-28 basic/transports); absent codes → 200.
ERROR_STATUSES: Final[Mapping[int, int]] = MappingProxyType(
    {
        jsonrpc.PARSE_ERROR: 400,
        jsonrpc.INVALID_REQUEST: 400,
        jsonrpc.INVALID_PARAMS: 400,
        jsonrpc.HEADER_MISMATCH: 400,
        jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
        jsonrpc.UNSUPPORTED_PROTOCOL_VERSION: 400,
        jsonrpc.METHOD_NOT_FOUND: 404,
    }
)

MessageKind = Literal["request", "notification", "result", "error", "unknown"]

_PREFIX: Final = b'{"jsonrpc":"2.0",'
_ID: Final = b'"id":'
_METHOD: Final = b'"method":'
_RESULT: Final = b',"result":'
_ERROR: Final = b'"error":{"code":'
_CODE_DIGITS: Final = frozenset(b"-0123456789")


class PeekedMessage(NamedTuple):
    """What `peek_message` saw: the message's kind, and an error's code."""

    kind: MessageKind
    error_code: int | None = None


_UNKNOWN: Final = PeekedMessage("unknown")
_REQUEST: Final = PeekedMessage("request")
_NOTIFICATION: Final = PeekedMessage("notification")
_RESULT_KIND: Final = PeekedMessage("result")


def status_for_error(code: int) -> int:
    """The HTTP status of a response carrying JSON-RPC error ``code`` (see `ERROR_STATUSES`)."""
    return ERROR_STATUSES.get(code, 200)


def peek_message(data: bytes) -> PeekedMessage:
    """The kind of an encoded JSON-RPC message, read from its first bytes only.

    ``"unknown"`` for anything not written in the usual key order; the caller then
    treats the message as it would treat a notification (nothing ends with it).
    """
    if not data.startswith(_PREFIX):
        return _UNKNOWN
    position = len(_PREFIX)
    if data.startswith(_METHOD, position):
        return _NOTIFICATION
    if data.startswith(_ERROR, position):  # an error whose id could not be read
        return _error(data, position + len(_ERROR))
    if not data.startswith(_ID, position):
        return _UNKNOWN
    return _after_id(data, _skip_id(data, position + len(_ID)))


def _after_id(data: bytes, position: int) -> PeekedMessage:
    """The kind of a message whose id ends at ``position`` (-1: the id was unreadable)."""
    if position < 0:
        return _UNKNOWN
    if data.startswith(_RESULT, position):
        return _RESULT_KIND
    if data.startswith(b",", position):
        if data.startswith(_METHOD, position + 1):
            return _REQUEST
        if data.startswith(_ERROR, position + 1):
            return _error(data, position + 1 + len(_ERROR))
    return _UNKNOWN


def _skip_id(data: bytes, start: int) -> int:
    """The position just past the id starting at ``start``; -1 if it can't be read."""
    if data[start : start + 1] == b'"':
        position = start + 1
        while True:
            end = data.find(b'"', position)
            if end < 0:
                return -1
            # A quote preceded by an odd number of backslashes is escaped.
            backslashes = 0
            while data[end - 1 - backslashes] == 0x5C:  # "\\"
                backslashes += 1
            if backslashes % 2 == 0:
                return end + 1
            position = end + 1
    end = start
    while end < len(data) and data[end] in _CODE_DIGITS:
        end += 1
    return end if end > start else -1


def _error(data: bytes, start: int) -> PeekedMessage:
    end = start
    while end < len(data) and data[end] in _CODE_DIGITS:
        end += 1
    try:
        return PeekedMessage("error", int(data[start:end]))
    except ValueError:
        return PeekedMessage("error")
