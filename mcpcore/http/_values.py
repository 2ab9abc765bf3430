"""Header values that carry JSON-RPC data: plain text, or ``=?base64?…?=``.

2026-07-28 Streamable HTTP mirrors parts of the body into headers (``Mcp-Name``,
``Mcp-Param-*``). An HTTP field value survives the trip only as visible ASCII without
whitespace at its ends, so "a value is sent plain when it is visible ASCII 0x20-0x7E
with no leading or trailing space or tab; otherwise as ``=?base64?<Base64 of its
UTF-8>?=``, the markers case-sensitive. A plain value that looks like that form MUST be
encoded too" (2026-07-28 basic/transports, CHECKLIST §14.1). The receiver "MUST decode
before comparing".
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

__all__ = [
    "BASE64_PREFIX",
    "BASE64_SUFFIX",
    "MalformedHeaderValueError",
    "decode_value",
    "encode_value",
]

BASE64_PREFIX: Final = "=?base64?"
BASE64_SUFFIX: Final = "?="
# Optional whitespace around a field value is not part of it (RFC 9110 §5.5).
_OWS: Final = " \t"


class MalformedHeaderValueError(ValueError):
    """A header in the ``=?base64?…?=`` form whose payload is not canonical Base64 of UTF-8."""


def _is_wrapped(value: str) -> bool:
    return (
        value.startswith(BASE64_PREFIX)
        and value.endswith(BASE64_SUFFIX)
        and len(value) >= len(BASE64_PREFIX) + len(BASE64_SUFFIX)
    )


def encode_value(value: str) -> str:
    """The header form of ``value``: itself when it travels safely, else Base64-wrapped."""
    if (
        value.isascii()
        and value.isprintable()  # ASCII and printable: 0x20-0x7E exactly
        and value.strip(_OWS) == value
        and not _is_wrapped(value)
    ):
        return value
    return BASE64_PREFIX + base64.b64encode(value.encode()).decode("ascii") + BASE64_SUFFIX


def decode_value(raw: str) -> str:
    """The value a header carries: trimmed, and unwrapped when in the Base64 form.

    Only a value with both markers is Base64: ``=?base64?abc`` without the closing
    ``?=`` is an ordinary string (the conformance suite's "no suffix" case).

    Raises:
        MalformedHeaderValueError: Both markers, but the payload is not canonical Base64 (bad
            characters, bad padding, stray bits) or not UTF-8.
    """
    value = raw.strip(_OWS)
    if not _is_wrapped(value):
        return value
    payload = value[len(BASE64_PREFIX) : -len(BASE64_SUFFIX)]
    try:
        decoded = base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise MalformedHeaderValueError("the Base64 payload is invalid") from None
    # validate=True still accepts non-zero padding bits; one value must have one form.
    if base64.b64encode(decoded).decode("ascii") != payload:
        raise MalformedHeaderValueError("the Base64 payload is not canonical")
    try:
        return decoded.decode()
    except UnicodeDecodeError:
        raise MalformedHeaderValueError("the Base64 payload is not UTF-8") from None
