"""Outgoing text frames, built directly: one JSON-RPC message per frame.

Every message we send is one final text frame (FIN set, opcode 1, RFC 6455 §5.6), with
no extension negotiated (we accept none), so the frame is a two-to-ten-byte header and
the message itself. Building it here costs a fraction of a microsecond; going through
wsproto's ``send`` would decode our UTF-8 bytes to ``str`` and encode them back, and
copy the payload twice, for every message. Control frames (ping, pong, close), rare
and stateful, still go through wsproto, as does everything we receive.

A client masks what it sends (RFC 6455 §5.3): "the masking key MUST be derived from a
strong source of entropy" and be fresh for each frame, so each gets the next four bytes
of its connection's pool filled from `os.urandom` (one system call per `KEY_POOL_SIZE`
bytes rather than one per frame).
"""

from __future__ import annotations

import os
import struct
from typing import Final

__all__ = ["KEY_POOL_SIZE", "MASK_KEY_SIZE", "ClientFrames", "mask", "server_text_frame"]

#: Bytes of a masking key (RFC 6455 §5.2).
MASK_KEY_SIZE: Final = 4
#: Bytes of strong randomness fetched at once for masking keys: 1,024 frames' worth.
KEY_POOL_SIZE: Final = 4096
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


class ClientFrames:
    """Masked final text frames for one client connection (call it with a message).

    Each frame gets the next four bytes of this connection's pool of `os.urandom`
    bytes as its key: fresh for each frame, never shared with another connection or
    thread.
    """

    __slots__ = ("_next", "_pool")

    def __init__(self) -> None:
        self._pool = b""
        self._next = 0

    def __call__(self, message: bytes) -> bytes:
        """One masked final text frame carrying ``message`` (valid UTF-8)."""
        start = self._next
        if start + MASK_KEY_SIZE > len(self._pool):
            self._pool = os.urandom(KEY_POOL_SIZE)
            start = 0
        self._next = start + MASK_KEY_SIZE
        key = self._pool[start : start + MASK_KEY_SIZE]
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
