r"""Server-Sent Events: the framing of MCP's Streamable HTTP (and legacy HTTP+SSE) streams.

The parser follows the WHATWG HTML Standard, section 9.2.6 "Interpreting an event
stream", rule by rule; the comments quote it where a rule is not obvious. The encoder
writes the subset of the format every parser agrees on: ``\n`` line ends, a space after
each colon, one ``data:`` line per line of data.

Event data is text; it is handed on as `str` and never parsed. Memory is bounded by
`MAX_EVENT_SIZE` (or the limit given to the parser). Unlike newline-delimited JSON, an
event stream cannot be resynchronised after an oversized event without guessing where it
ended, so the parser raises `SSEEventTooLarge` and the stream must be abandoned.
"""

from __future__ import annotations

import msgspec

__all__ = [
    "MAX_EVENT_SIZE",
    "SSEEvent",
    "SSEEventTooLarge",
    "SSEParser",
    "encode_comment",
    "encode_event",
]

# 16 MiB of event data, the same as one stdio message (`ndjson.MAX_MESSAGE_SIZE`): an
# event carries one JSON-RPC message, and a message that fits on stdio must fit here.
# The Python SDK caps client-side SSE events at 1 MiB; we allow a full MCP message, and
# still bound what one hostile server can make us hold.
MAX_EVENT_SIZE = 16 * 1024 * 1024

# A line is allowed this many bytes beyond the data limit, so that the line carrying the
# last byte of a maximal event, ``data: <value>``, is not refused for its field name.
_DATA_LINE_PREFIX_SIZE = len(b"data: ")

# "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present."
_UTF8_BOM = b"\xef\xbb\xbf"

_LF = 0x0A
_CR = 0x0D
_COLON = 0x3A


class SSEEvent(msgspec.Struct, frozen=True, gc=False):
    r"""One dispatched event (immutable; a `msgspec.Struct` because it is cheap to create).

    Attributes:
        data: The event's data lines joined with ``\n``. Empty for an event whose only
            data line was empty, such as MCP's priming event (an ``id`` and empty data).
        event: The event type; ``"message"`` when the event named none (or an empty one).
        id: The stream's last event ID when the event was dispatched, which an ``id``
            field sets and keeps for later events too (WHATWG's ``lastEventId``); None
            while there is none (never set, or reset by an empty ``id``).
        retry: The reconnection time, in milliseconds, set by a valid ``retry`` field
            of this event's block; None if it had none. `SSEParser.retry` keeps the
            latest value across events.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEEventTooLarge(ValueError):  # noqa: N818 -- public name, fixed by the API
    """An event's data, or a line of the stream, exceeded the parser's limit.

    The stream cannot be resynchronised: abandon it. The parser refuses further input
    until `SSEParser.end_of_stream` starts it on a new stream.

    Attributes:
        limit: The limit exceeded (the parser's ``max_event_size``), in bytes.
        events: The events completed earlier in the same `SSEParser.feed` call, which
            would otherwise be lost with the exception.
    """

    def __init__(self, limit: int, events: list[SSEEvent]) -> None:
        super().__init__(
            f"server-sent event larger than {limit} bytes; the stream cannot be resynchronised"
        )
        self.limit = limit
        self.events = events


class _OverLimitError(Exception):
    """Raised inside the parser to abandon a `SSEParser.feed` call at the limit."""


class SSEParser:
    r"""Incremental parser of a ``text/event-stream`` body.

    Feed it the body's bytes as they arrive, split anywhere (inside a CRLF, inside a
    multi-byte character, inside the BOM); it returns the events they complete. The
    result does not depend on how the stream was split.

    Args:
        max_event_size: The largest event data accepted, in UTF-8 bytes (data lines
            joined with ``\n``). Exactly this many is accepted; one byte more raises
            `SSEEventTooLarge`, as does a single line of any field longer than the
            room left for data plus the length of ``data:`` and a space.
        last_event_id: The last event ID to start from, when resuming a stream with a
            fresh parser (the value sent as ``Last-Event-ID``).

    Raises:
        ValueError: If ``max_event_size`` is less than 1.
    """

    __slots__ = (
        "_data",
        "_data_size",
        "_event_retry",
        "_event_type",
        "_expecting_bom",
        "_failed",
        "_id_buffer",
        "_last_event_id",
        "_line_limit",
        "_max_event_size",
        "_partial",
        "_pending_bom",
        "_retry",
        "_skip_lf",
    )

    def __init__(self, max_event_size: int = MAX_EVENT_SIZE, *, last_event_id: str = "") -> None:
        if max_event_size < 1:
            raise ValueError(f"max_event_size must be at least 1, got {max_event_size}")
        self._max_event_size = max_event_size
        # The most bytes of data and one line that may be held together.
        self._line_limit = max_event_size + _DATA_LINE_PREFIX_SIZE
        # WHATWG's "last event ID string" and "reconnection time" belong to the
        # EventSource, not to one response: they survive `end_of_stream`.
        self._last_event_id = last_event_id
        self._retry: int | None = None
        self._start_stream()

    def _start_stream(self) -> None:
        """Resets everything that belongs to one response body."""
        # The start of the line still arriving, never holding a CR or LF: each byte is
        # searched for a line end once, however the line trickles in.
        self._partial = bytearray()
        # A chunk ended with CR: an LF opening the next chunk is the rest of that CRLF.
        self._skip_lf = False
        self._expecting_bom = True
        self._pending_bom = b""
        # The spec's "data buffer" as a list of lines (joined once, at dispatch), and its
        # size in bytes counting one separator per line.
        self._data: list[str] = []
        self._data_size = 0
        self._event_type = ""
        self._event_retry: int | None = None
        # The spec's "last event ID buffer": it carries over from the previous stream, as
        # when a browser reconnects.
        self._id_buffer = self._last_event_id
        self._failed = False

    @property
    def max_event_size(self) -> int:
        """The largest event data accepted, in bytes."""
        return self._max_event_size

    @property
    def last_event_id(self) -> str:
        """The last event ID set by the server as of the last dispatch ("" if none).

        This is the value to send as ``Last-Event-ID`` when resuming (send no header when
        it is empty). Per WHATWG it is updated at each blank line, even one that
        dispatches nothing because the event had no data.
        """
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The latest reconnection time the server asked for, in milliseconds, if any.

        Kept across `end_of_stream`. It may be any non-negative integer: clamp it before
        sleeping on it.
        """
        return self._retry

    def feed(self, data: bytes | bytearray | memoryview) -> list[SSEEvent]:
        """Takes the next bytes of the body and returns the events they complete.

        Args:
            data: The next bytes of the response body.

        Returns:
            The events dispatched by blank lines in ``data``, in order.

        Raises:
            SSEEventTooLarge: If an event or a line exceeds ``max_event_size``. The
                events completed before it in ``data`` are on the exception.
            RuntimeError: If a previous call raised `SSEEventTooLarge` and
                `end_of_stream` has not been called since.
        """
        if self._failed:
            raise RuntimeError(
                "SSEParser: the stream exceeded max_event_size and cannot be resumed; "
                "call end_of_stream() before feeding a new stream"
            )
        chunk = bytes(data)
        if self._expecting_bom:
            chunk = self._strip_bom(chunk)
        if not chunk:
            return []
        # "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE FEED
        # (CRLF) character pair, a single U+000A LINE FEED (LF) character, or a single
        # U+000D CARRIAGE RETURN (CR) character": exactly where `bytes.splitlines`
        # breaks (`str.splitlines` would also break at U+2028 and others).
        lines = chunk.splitlines()
        if self._skip_lf and chunk[0] == _LF:
            # This LF completes a CRLF whose CR ended the previous chunk: it is not a
            # second line end. (`splitlines` put an empty line before it.)
            del lines[0]
        last_byte = chunk[-1]
        self._skip_lf = last_byte == _CR
        # Unless the chunk ends with a line end, its last line is unfinished.
        unfinished = b"" if last_byte in (_CR, _LF) else lines.pop()
        events: list[SSEEvent] = []
        partial = self._partial
        if partial and lines:
            lines[0] = b"".join((partial, lines[0]))
            partial.clear()
        try:
            for line in lines:
                if line:
                    self._process_line(line)
                else:
                    self._dispatch(events)
            if unfinished:
                # Checked before buffering, with the same measure as a whole line, so
                # that whether a stream fails does not depend on how it was split.
                if self._data_size + len(partial) + len(unfinished) > self._line_limit:
                    raise _OverLimitError
                partial += unfinished
        except _OverLimitError:
            self._failed = True
            raise SSEEventTooLarge(self._max_event_size, events) from None
        return events

    def end_of_stream(self) -> None:
        """Ends the current response body and makes the parser ready for the next one.

        Per WHATWG, "If the file ends in the middle of an event, before the final empty
        line, the incomplete event is not dispatched": an unterminated event and any
        unfinished line are discarded. `last_event_id` and `retry` are kept, so the same
        parser can read the body of the reconnection they are used for.
        """
        self._start_stream()

    def _strip_bom(self, chunk: bytes) -> bytes:
        """Drops a UTF-8 BOM at the start of the stream, even when split across chunks."""
        chunk = self._pending_bom + chunk
        if len(chunk) < len(_UTF8_BOM) and _UTF8_BOM.startswith(chunk):
            self._pending_bom = chunk
            return b""
        self._expecting_bom = False
        self._pending_bom = b""
        if chunk.startswith(_UTF8_BOM):
            return chunk[len(_UTF8_BOM) :]
        return chunk

    def _process_line(self, line: bytes) -> None:
        """Applies one non-blank line (without its line end) to the event being built.

        Raises:
            _OverLimitError: If the line, or the event's data with it, is over the limit.
        """
        if self._data_size + len(line) > self._line_limit:
            raise _OverLimitError
        if line[0] == _COLON:
            # "If the line starts with a U+003A COLON character (:)": "Ignore the line."
            return
        # "If the line contains a U+003A COLON character (:)": the field name is what
        # precedes the first colon, the value what follows it, less one leading space.
        # "Otherwise, the string is not empty but does not contain a U+003A COLON
        # character (:)": the whole line is the field name, and the value is empty.
        # Splitting before decoding is safe: a colon and a space are ASCII, never part
        # of a multi-byte character, and never swallowed by a replacement character.
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            value_start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
            value = line[value_start:]
        if name == b"data":
            size = self._data_size + len(value)
            if size > self._max_event_size:
                raise _OverLimitError
            self._data_size = size + 1
            # "The stream must then be decoded using the UTF-8 decode algorithm", which
            # replaces invalid sequences with U+FFFD instead of failing.
            self._data.append(value.decode("utf-8", "replace"))
        elif name == b"event":
            self._event_type = value.decode("utf-8", "replace")
        elif name == b"id":
            # "If the field value does not contain U+0000 NULL, then set the last event
            # ID buffer to the field value. Otherwise, ignore the field."
            if b"\x00" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            # "If the field value consists of only ASCII digits, then interpret the field
            # value as an integer in base ten [...]. Otherwise, ignore the field."
            # (`bytes.isdigit` is ASCII-only.)
            retry = _parse_retry(value)
            if retry is not None:
                self._retry = self._event_retry = retry
        # "Otherwise: The field is ignored."

    def _dispatch(self, events: list[SSEEvent]) -> None:
        """WHATWG "dispatch the event", run at each blank line."""
        # "Set the last event ID string of the event source to the value of the last
        # event ID buffer", even if no event is dispatched below.
        self._last_event_id = self._id_buffer
        if self._data:
            # "If the data buffer's last character is a U+000A LINE FEED (LF) character,
            # then remove the last character": joining with LF never adds one.
            events.append(
                SSEEvent(
                    data="\n".join(self._data),
                    event=self._event_type or "message",
                    id=self._last_event_id or None,
                    retry=self._event_retry,
                )
            )
            self._data = []
            self._data_size = 0
        # "If the data buffer is an empty string, set the data buffer and the event type
        # buffer to the empty string and return." Either way the buffers are reset.
        self._event_type = ""
        self._event_retry = None


def _parse_retry(digits: bytes) -> int | None:
    """The integer value of an ASCII digit string; None if it is too long to convert.

    Python refuses to convert more than `sys.get_int_max_str_digits` digits; such a
    delay is absurd anyway, and a field the parser cannot interpret is ignored.
    """
    try:
        return int(digits)
    except ValueError:
        return None


def _lines_of(text: bytes) -> list[bytes]:
    """Splits text at CRLF, LF and CR, keeping a trailing empty line (and "" for "")."""
    lines = text.splitlines()
    if not text or text[-1] in (_CR, _LF):
        lines.append(b"")
    return lines


def _check_single_line(name: str, value: str) -> None:
    """Rejects a field value that would end the line it is written on."""
    if "\n" in value or "\r" in value:
        raise ValueError(f"an SSE {name} must not contain CR or LF: {value!r}")


def encode_event(
    data: bytes | str,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    r"""Encodes one event, ending with the blank line that dispatches it.

    Args:
        data: The event data, UTF-8 if bytes (an encoded JSON message, typically). Each
            of its lines (split at CRLF, LF or CR) is written as its own ``data:``
            line, and the parser joins them back with ``\n``. Empty data still writes
            one ``data:`` line, so the event is dispatched: MCP's priming event is an
            ``id`` with empty data.
        event: The event type; omitted means ``"message"``.
        id: The event ID, which becomes the client's ``Last-Event-ID``. An empty ID
            resets it.
        retry: The reconnection time to ask the client for, in milliseconds.

    Returns:
        The encoded event.

    Raises:
        ValueError: If ``event`` or ``id`` contains CR or LF, ``id`` contains NUL (the
            client would ignore it), or ``retry`` is negative.
        TypeError: If ``retry`` is not an int.
    """
    # Parts joined once at the end, so the data (possibly megabytes) is copied once.
    parts: list[bytes] = []
    if event is not None:
        _check_single_line("event type", event)
        parts += (b"event: ", event.encode(), b"\n")
    if id is not None:
        _check_single_line("event id", id)
        if "\x00" in id:
            raise ValueError(f"an SSE event id must not contain NUL: {id!r}")
        parts += (b"id: ", id.encode(), b"\n")
    if retry is not None:
        if type(retry) is not int:
            raise TypeError(f"retry must be an int, got {type(retry).__name__}")
        if retry < 0:
            raise ValueError(f"retry must not be negative, got {retry}")
        parts.append(b"retry: %d\n" % retry)
    raw = data.encode() if isinstance(data, str) else data
    # Always "data: " with the space: the parser removes exactly one space after the
    # colon, so a value that starts with a space survives.
    if raw and b"\n" not in raw and b"\r" not in raw:
        # The usual case: one JSON message, which a JSON encoder writes on one line.
        parts += (b"data: ", raw, b"\n\n")
    else:
        for line in _lines_of(raw):
            parts += (b"data: ", line, b"\n") if line else (b"data:\n",)
        parts.append(b"\n")
    return b"".join(parts)


def encode_comment(text: str = "") -> bytes:
    """Encodes a comment, the keep-alive of an event stream.

    Clients ignore comments, but the bytes keep idle connections from timing out; the
    blank line after them makes buffering proxies flush. (A blank line dispatches
    nothing, since every event written by `encode_event` already ended with one.)

    Args:
        text: The comment; each of its lines gets its own ``:`` line.

    Returns:
        The encoded comment followed by a blank line.
    """
    lines = [b": " + line if line else b":" for line in _lines_of(text.encode())]
    lines.append(b"\n")
    return b"\n".join(lines)
