r"""Newline-delimited JSON: the framing of the MCP stdio transport.

Every MCP revision says of stdio: "Messages are delimited by newlines, and MUST NOT
contain embedded newlines", UTF-8 encoded. A conforming JSON encoder never writes a raw
line feed (one inside a string is escaped as ``\n``), so one message is exactly one line.

`LineFramer` cuts a byte stream into lines and `encode_lines` joins messages back into
one. Neither looks inside a line: JSON is the codec's business, and a line is handed on
as `bytes` because msgspec's ``Raw`` values are views into the buffer they were decoded
from, which must therefore be immutable.

Memory is bounded by `MAX_MESSAGE_SIZE` (or the limit given to the framer): a line that
grows past it is reported once as an `OversizedMessage`, its bytes are dropped as they
arrive, and framing resumes after its line feed, so one bad message costs the peer that
message and not the connection.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

__all__ = [
    "MAX_MESSAGE_SIZE",
    "LineFramer",
    "OversizedMessage",
    "encode_lines",
]

# 16 MiB. The TypeScript SDK's stdio reader defaults to a 10 MiB buffer, so anything a
# mainstream peer is willing to send fits with room to spare (large tool results, base64
# images); and it is small enough that a hostile or broken peer that never sends a line
# feed cannot make us buffer unbounded memory.
MAX_MESSAGE_SIZE = 16 * 1024 * 1024

_LF = 0x0A
_CR = 0x0D


class OversizedMessage(msgspec.Struct, frozen=True, gc=False):
    """Stands in the output for a line longer than the framer's limit.

    The line's bytes were dropped, not buffered. It is reported once, as soon as it is
    known to be too long, in its place among the lines around it.

    Attributes:
        size: How many bytes of the line had arrived when it was found too long. When the
            line was still arriving, the rest of it is dropped unseen, so this is a lower
            bound on its length; it always exceeds ``limit``.
        limit: The limit it exceeded (the framer's ``max_message_size``).
    """

    size: int
    limit: int


class LineFramer:
    r"""Cuts a byte stream into newline-delimited messages, in bounded memory.

    Feed it bytes as they arrive; it returns every line completed so far, in order:

    * without its line end: ``\n``, or ``\r\n`` for peers that write CRLF (the ``\r``
      is JSON whitespace, but stripping it here keeps lines byte-identical across peers);
    * blank and whitespace-only lines are skipped: they carry no message, and a stray
      empty line from a peer must not become a parse error;
    * a line longer than ``max_message_size`` (not counting its line end) becomes one
      `OversizedMessage`.

    Only the unfinished last line is buffered, so `buffered` never exceeds
    ``max_message_size + 1`` (the one extra byte is a ``\r`` that may turn out to be
    the first half of a CRLF line end).

    Args:
        max_message_size: The longest line accepted, in bytes. A line of exactly this
            many bytes is accepted; one byte more is not.

    Raises:
        ValueError: If ``max_message_size`` is less than 1.
    """

    __slots__ = ("_discarding", "_ended", "_max_message_size", "_partial")

    def __init__(self, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be at least 1, got {max_message_size}")
        self._max_message_size = max_message_size
        # The start of the line still arriving. Invariant: it never holds a line feed, so
        # each byte is searched for one exactly once (no rescans as a long line trickles
        # in), and it is never longer than the limit plus one trailing CR.
        self._partial = bytearray()
        # True while the rest of an already reported oversized line is being dropped.
        self._discarding = False
        self._ended = False

    @property
    def max_message_size(self) -> int:
        """The longest line accepted, in bytes."""
        return self._max_message_size

    @property
    def buffered(self) -> int:
        """How many bytes of an unfinished line are held, waiting for its line feed."""
        return len(self._partial)

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes | OversizedMessage]:
        """Takes the next bytes of the stream and returns the messages they complete.

        Args:
            data: The next bytes, split anywhere (mid-line, mid-CRLF, mid-character).

        Returns:
            The lines completed by ``data``, in stream order, each as `bytes` without its
            line end, with an `OversizedMessage` in place of each line that is too long.
            Empty if ``data`` completed no line.

        Raises:
            RuntimeError: If called after `end_of_input`.
        """
        if self._ended:
            raise RuntimeError("LineFramer.feed() called after end_of_input()")
        if type(data) is not bytes:
            # Lines are sliced out of `data`; they must come out as immutable `bytes`.
            data = bytes(data)
        elif not self._partial and not self._discarding:
            # Fast path, the common case of a request-response stream: the chunk is one
            # whole line, nothing buffered before it. Skips the list building and the
            # loop below (~2.5k instructions of the ~3.5k per chunk); a CR line end, a
            # blank or oversized line, or more than one line take the general path.
            end = data.find(b"\n")
            if 0 < end == len(data) - 1 and end <= self._max_message_size:
                line = data[:end]
                if line[-1] != _CR and not line.isspace():
                    return [line]
        return self._split(data)

    def _split(self, data: bytes) -> list[bytes | OversizedMessage]:
        """`feed`'s general path: any number of lines, and the buffered partial line."""
        messages: list[bytes | OversizedMessage] = []
        if not data:
            return messages
        first_newline = data.find(b"\n")
        if first_newline < 0:
            self._keep_unfinished(data, 0, messages)
            return messages
        start = 0
        if self._discarding:
            # The oversized line ends here; it was reported when it crossed the limit.
            self._discarding = False
            start = first_newline + 1
        elif self._partial:
            self._finish_partial(data, first_newline, messages)
            start = first_newline + 1
        # The common case, and the hot loop: whole lines inside this chunk, each copied
        # out of it exactly once.
        limit = self._max_message_size
        find = data.find
        while (newline := find(b"\n", start)) >= 0:
            end = newline - 1 if newline > start and data[newline - 1] == _CR else newline
            if end - start > limit:
                messages.append(OversizedMessage(size=end - start, limit=limit))
            else:
                line = data[start:end]
                if line and not line.isspace():
                    messages.append(line)
            start = newline + 1
        if start < len(data):
            self._keep_unfinished(data, start, messages)
        return messages

    def end_of_input(self) -> bytes | None:
        r"""Ends the stream, and returns its last line if it had no line feed.

        A peer that exits without writing the final newline is still served. The framer
        accepts no more input afterwards.

        Returns:
            The unterminated last line (without a trailing ``\r``), or None if there was
            none, it was blank, or it was an oversized line already reported by `feed`.
        """
        self._ended = True
        self._discarding = False
        partial = self._partial
        if partial and partial[-1] == _CR:
            del partial[-1]
        line = bytes(partial)
        partial.clear()
        if line and not line.isspace():
            return line
        return None

    def _finish_partial(
        self, data: bytes, newline: int, messages: list[bytes | OversizedMessage]
    ) -> None:
        """Completes the buffered line with ``data[:newline]`` and appends it."""
        partial = self._partial
        end = newline
        if newline:
            if data[newline - 1] == _CR:
                end -= 1
        elif partial[-1] == _CR:
            # The CR of this CRLF arrived at the end of the previous chunk.
            del partial[-1]
        size = len(partial) + end
        if size > self._max_message_size:
            messages.append(OversizedMessage(size=size, limit=self._max_message_size))
        else:
            # One copy: the buffered head and the new tail go straight into the result.
            line = b"".join((partial, memoryview(data)[:end]))
            if line and not line.isspace():
                messages.append(line)
        partial.clear()

    def _keep_unfinished(
        self, data: bytes, start: int, messages: list[bytes | OversizedMessage]
    ) -> None:
        """Buffers ``data[start:]``, a line without its line feed yet, or drops it.

        The line is dropped, and reported once, as soon as it is certain to exceed the
        limit: longer than the limit plus a CR that a following LF would strip.
        """
        if self._discarding:
            return
        partial = self._partial
        size = len(partial) + len(data) - start
        limit = self._max_message_size
        if size > limit + 1 or (size == limit + 1 and data[-1] != _CR):
            messages.append(OversizedMessage(size=size, limit=limit))
            partial.clear()
            self._discarding = True
        else:
            partial += memoryview(data)[start:]


def encode_lines(messages: Iterable[bytes]) -> bytes:
    r"""Frames encoded JSON messages for a newline-delimited stream, as one write.

    The writer coalesces whatever is queued into a single call, so a burst of messages
    costs one system call rather than one each.

    Args:
        messages: Encoded JSON messages, each without a line feed.

    Returns:
        The messages, each followed by ``\n``, concatenated (empty for no messages).

    Raises:
        ValueError: If a message contains a line feed, which would split it in two on the
            wire (the stdio transport says messages "MUST NOT contain embedded newlines").
    """
    parts = list(messages)
    for message in parts:
        if b"\n" in message:
            raise ValueError("a newline-delimited message must not contain a line feed")
    if not parts:
        return b""
    parts.append(b"")
    return b"\n".join(parts)
