"""Outgoing text frames, built directly: one JSON-RPC message per frame.

Every message we send is one final text frame (FIN set, opcode 1, RFC 6455 §5.6), with
no extension negotiated (we accept none), so the frame is a two-to-ten-byte header and
the message itself. Building it here costs a fraction of a microsecond; going through
wsproto's ``send`` would decode our UTF-8 bytes to ``str`` and encode them back, and
copy the payload twice, for every message. Control frames (ping, pong, close), rare
and stateful, still go through wsproto, as does everything we receive.

A client masks what it sends (RFC 6455 §5.3): "the masking key MUST be derived from a
strong source of entropy" and be fresh for each frame, so each gets four bytes from
`os.urandom`.
"""

from __future__ import annotations

import os
import struct
from typing import Final

__all__ = ["MASK_KEY_SIZE", "client_text_frame", "mask", "server_text_frame"]

#: Bytes of a masking key (RFC 6455 §5.2).
MASK_KEY_SIZE: Final = 4
_FIN_TEXT: Final = 0x81  # FIN, no RSV bits, opcode 1 (text)
_MASKED: Final = 0x80
_LENGTH_16: Final = 126  # "the following 2 bytes ... are the payload length"
_LENGTH_64: Final = 127  # "the following 8 bytes ..."
_MAX_7BIT: Final = 125
_MAX_16BIT: Final = 0xFFFF
#: The headers of short unmasked frames, made once (most answers are short).
_SHORT_HEADERS: Final = tuple(bytes((_FIN_TEXT, length)) for length in range(_MAX_7BIT + 1))
_HEADER_16: Final = struct.Struct("!BBH")
_HEADER_64: Final = struct.Struct("!BBQ")


def _header(length: int, mask_bit: int) -> bytes:
    if length <= _MAX_7BIT:
        return bytes((_FIN_TEXT, mask_bit | length))
    if length <= _MAX_16BIT:
        return _HEADER_16.pack(_FIN_TEXT, mask_bit | _LENGTH_16, length)
    return _HEADER_64.pack(_FIN_TEXT, mask_bit | _LENGTH_64, length)


def server_text_frame(message: bytes) -> bytes:
    """One unmasked final text frame carrying ``message`` (valid UTF-8)."""
    length = len(message)
    if length <= _MAX_7BIT:
        return _SHORT_HEADERS[length] + message
    return _header(length, 0) + message


def client_text_frame(message: bytes) -> bytes:
    """One masked final text frame carrying ``message`` (valid UTF-8), a fresh key."""
    key = os.urandom(MASK_KEY_SIZE)
    return _header(len(message), _MASKED) + key + mask(message, key)


def mask(data: bytes, key: bytes) -> bytes:
    """``data`` XOR-ed with the four-byte ``key`` repeated (masking and unmasking alike)."""
    length = len(data)
    if not length:
        return b""
    repeated = (key * (length // MASK_KEY_SIZE + 1))[:length]
    # One big-integer XOR: linear, in C, and far faster than a Python loop.
    masked = int.from_bytes(data, "little") ^ int.from_bytes(repeated, "little")
    return masked.to_bytes(length, "little")
