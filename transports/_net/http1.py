"""HTTP/1.1, sans-IO: requests and responses parsed and framed, both sides.

Bytes in, events out (`Request` or `Response`, `Data`, `END`); a message in, bytes out.
No IO, no clock: `transports._net.server_connection` and
`transports._net.client_connection` drive it over trio streams. One `ServerConnection`
(or `ClientConnection`) serves a TCP connection from its first byte to its last, one
cycle per exchange (``start_next_cycle``): h11's shape.

Why not h11 itself: it cost ~43 µs of CPU per exchange on each side on the reference
VM (~22 to parse a typical MCP POST or its answer, ~21 to frame one: each head validated
twice, three ``send`` calls through its state machine), more than a third of what the
whole server spends on a 2026-07-28 ``tools/call`` (``python -m bench --only http``;
``PERF.md``: "h11 costs ~100 µs CPU per cycle"). This module makes the same checks
once, on the shapes HTTP/1.1 has: a whole server cycle (parse a request, frame its
answer) costs ~10 µs. The rule for owning bytes a protocol library would write: we own
them outright, with our own tests: ``tests/transports/test_http1.py`` holds the parser
to h11, as an oracle, on arbitrary and hostile input, and reads what it frames back
with h11.

The grammar is h11 0.16's (RFC 9112): a head ends at the first blank line (CRLF or a bare
LF), header values lose their surrounding whitespace, obsolete line folding is joined
with a space, an HTTP/1.1 request needs exactly one ``Host``; a body is chunked
(``Transfer-Encoding: chunked``, the only coding; trailers read and dropped), or has a
``Content-Length``, or is empty (a request), or lasts until the connection closes (a
response; none at all after ``HEAD``, a 1xx, 204 or 304). Stricter than h11, on purpose:

* ``Content-Length`` together with ``Transfer-Encoding`` is refused (400) rather than
  the length ignored: the ambiguity request smuggling lives on (RFC 9112 §6.1 lets a
  server reject it);
* an HTTP version other than 1.0 and 1.1 is refused (a request with 505).

Bounded: while a head (or a chunk's size line, or trailers) is incomplete, the buffer
may not pass ``max_head_size`` (a request gets 431); a body is handed over as it
arrives, never buffered here. What follows a complete message stays unparsed in
`trailing_data` until the next cycle (so a driver can bound what it reads ahead, and
hand the socket to another protocol after an upgrade with the bytes that came with it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any, ClassVar, Final

__all__ = [
    "CLOSED",
    "DEFAULT_MAX_HEAD_SIZE",
    "END",
    "MAX_CONTENT_LENGTH_DIGITS",
    "NEED_DATA",
    "PAUSED",
    "ClientConnection",
    "Data",
    "EndOfMessage",
    "LocalProtocolError",
    "RemoteProtocolError",
    "Request",
    "Response",
    "ServerConnection",
]

#: Digits a ``Content-Length`` may have (h11's bound: far past any body we accept, and
#: short enough that ``int()`` of it costs nothing).
MAX_CONTENT_LENGTH_DIGITS: Final = 20
#: Bytes of a head (request line and fields) by default, while it is incomplete: h11's
#: default, about what nginx and node allow.
DEFAULT_MAX_HEAD_SIZE: Final = 16 * 1024


class RemoteProtocolError(Exception):
    """The peer broke HTTP: a server answers ``error_status_hint`` and closes.

    Once raised, the connection is dead: every later `ServerConnection.next_event`
    raises it again.
    """

    def __init__(self, message: str, error_status_hint: int = 400) -> None:
        super().__init__(message)
        self.error_status_hint = error_status_hint


class LocalProtocolError(Exception):
    """We tried to send what HTTP does not allow now (or a malformed header)."""


class Request:
    """A request's head.

    Attributes:
        method: As sent (``b"POST"``).
        target: The request target (``b"/mcp?x=1"``).
        headers: ``(name, value)``: names lower-cased, values without their surrounding
            whitespace.
        http_version: ``b"1.1"`` or ``b"1.0"``.
    """

    __slots__ = ("headers", "http_version", "method", "target")

    def __init__(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], http_version: bytes
    ) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.http_version = http_version

    def __repr__(self) -> str:
        return f"Request({self.method!r}, {self.target!r}, {self.headers!r}, {self.http_version!r})"


class Response:
    """A response's head (a 1xx one is followed by the final one).

    Attributes:
        status: The status code.
        reason: The reason phrase (often empty).
        headers: As `Request.headers`.
        http_version: ``b"1.1"`` or ``b"1.0"``.
    """

    __slots__ = ("headers", "http_version", "reason", "status")

    def __init__(
        self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]], http_version: bytes
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.http_version = http_version

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.reason!r}, {self.headers!r}, {self.http_version!r})"


class Data:
    """A piece of a message's body, as it arrived (de-chunked)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"Data({self.data!r})"


class EndOfMessage:
    """The message is complete (its trailers, if any, were read and dropped)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "END"


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: The one `EndOfMessage`.
END: Final = EndOfMessage()
#: ``next_event``: more bytes are needed.
NEED_DATA: Final = _Sentinel("NEED_DATA")
#: ``next_event``: the message is complete; the next one waits for the next cycle.
PAUSED: Final = _Sentinel("PAUSED")
#: ``next_event``: the peer closed the connection between messages.
CLOSED: Final = _Sentinel("CLOSED")

Event = Request | Response | Data | EndOfMessage | _Sentinel

# RFC 9110 §5.6.2 tokens, §5.5 field values (h11 `_abnf`'s reading: visible ASCII or
# obs-text, single spaces and tabs inside).
_TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_FIELD_VALUE: Final = rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?"
_REQUEST_LINE: Final = re.compile(
    rb"(?P<method>" + _TOKEN + rb") (?P<target>[\x21-\x7e]+) HTTP/(?P<version>[0-9]\.[0-9])"
)
_FIELD_LINE: Final = re.compile(rb"(" + _TOKEN + rb"):[ \t]*(" + _FIELD_VALUE + rb")[ \t]*")
_STATUS_LINE: Final = re.compile(
    rb"HTTP/(?P<version>[0-9]\.[0-9]) (?P<status>[0-9]{3})(?: (?P<reason>(?:[ \t]|[^\x00\s])*))?"
)
_NAME: Final = re.compile(_TOKEN)
_TARGET: Final = re.compile(rb"[\x21-\x7e]+")
_VALUE: Final = re.compile(_FIELD_VALUE)
_CHUNK_SIZE_LINE: Final = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*\r\n")
_BLANK_LINE: Final = re.compile(rb"\n\r?\n")
_DIGITS: Final = re.compile(rb"[0-9]+")
_VERSIONS: Final = frozenset({b"1.0", b"1.1"})
#: Fields this module writes itself: a caller's would contradict the framing. (A
#: caller's ``Connection`` is kept: a 426 names ``upgrade`` there, and ``close`` is
#: then a second field, the same list, RFC 9110 §5.3.)
_FRAMING: Final = frozenset({b"content-length", b"transfer-encoding"})
_REASONS: Final = {status.value: status.phrase.encode() for status in HTTPStatus}

# Where the message being read is (`_Peer._state`), on either side.
_HEAD: Final = 0
_LENGTH: Final = 1  # a body of known length
_CHUNK_SIZE: Final = 2  # a chunked body, at a chunk's size line
_CHUNK_DATA: Final = 3
_CHUNK_END: Final = 4  # the CRLF after a chunk's data
_TRAILERS: Final = 5
_UNTIL_CLOSE: Final = 6  # a response's body, up to the end of the connection
_DONE: Final = 7  # complete: PAUSED until the next cycle


class _Peer:
    """What both sides share: received bytes, read into a head, then a body.

    The body has a length, is chunked, or, for a response, lasts up to the end of the
    connection.
    """

    __slots__ = (
        "_buffer",
        "_chunk_left",
        "_closing",
        "_eof",
        "_error",
        "_expects_continue",
        "_left",
        "_max_head_size",
        "_state",
    )

    #: What reads in each state (a subclass's own table: heads differ).
    _readers: ClassVar[dict[int, Callable[[Any], Event]]]
    #: The status hint of a head too large.
    _too_large: ClassVar[int] = 431

    def __init__(self, max_head_size: int) -> None:
        self._max_head_size = max_head_size
        self._buffer = bytearray()
        self._state = _HEAD
        self._error: RemoteProtocolError | None = None
        self._eof = False
        self._left = 0  # bytes of a known-length body still to come
        self._chunk_left = 0  # bytes of the current chunk still to come
        self._expects_continue = False
        self._closing = False  # no cycle after this one

    @property
    def keep_alive(self) -> bool:
        """Whether another exchange may follow this one on the connection.

        False once either message said ``Connection: close`` or was HTTP/1.0, a body
        ends with the connection, or either side broke the protocol.
        """
        return not self._closing

    @property
    def trailing_data(self) -> bytes:
        """Bytes received and not parsed yet (past a complete message: the next ones)."""
        return bytes(self._buffer)

    @property
    def trailing_size(self) -> int:
        """``len(trailing_data)``, without the copy."""
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray) -> None:
        """Take bytes from the peer (parsed by `next_event`); b"": it closed its side."""
        if data:
            self._buffer += data
        else:
            self._eof = True

    def next_event(self) -> Event:
        """The next event of the message being read, `NEED_DATA`, `PAUSED` or `CLOSED`.

        Raises:
            RemoteProtocolError: The peer broke HTTP (and the connection is dead).
        """
        if self._error is not None:
            raise RemoteProtocolError(str(self._error), self._error.error_status_hint)
        try:
            event = self._readers[self._state](self)
            if event is NEED_DATA:
                if self._eof:
                    raise RemoteProtocolError("the connection closed in the middle of a message")
                if len(self._buffer) > self._max_head_size:
                    # Only heads, size lines and trailers wait for more: bodies are
                    # handed over as they come.
                    raise RemoteProtocolError("head too large", self._too_large)
        except RemoteProtocolError as exc:
            self._error = exc
            self._closing = True
            raise
        return event

    def _read_length(self) -> Event:
        left = self._left
        if not left:
            self._expects_continue = False
            self._state = _DONE
            return END
        buffer = self._buffer
        if not buffer:
            return NEED_DATA
        self._expects_continue = False
        if len(buffer) <= left:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:left])
            del buffer[:left]
        self._left = left - len(data)
        return Data(data)

    def _read_chunk_size(self) -> Event:
        buffer = self._buffer
        end = buffer.find(b"\r\n")
        if end < 0:
            return NEED_DATA
        found = _CHUNK_SIZE_LINE.fullmatch(bytes(buffer[: end + 2]))
        if found is None:
            raise RemoteProtocolError("illegal chunk header")
        del buffer[: end + 2]
        size = int(found.group(1), 16)
        if size == 0:
            self._state = _TRAILERS
            return self._read_trailers()
        self._chunk_left = size
        self._state = _CHUNK_DATA
        return self._read_chunk_data()

    def _read_chunk_data(self) -> Event:
        buffer = self._buffer
        if not buffer:
            return NEED_DATA
        self._expects_continue = False
        left = self._chunk_left
        data = bytes(buffer[:left])
        del buffer[:left]
        left -= len(data)
        self._chunk_left = left
        if not left:
            self._state = _CHUNK_END
        return Data(data)

    def _read_chunk_end(self) -> Event:
        buffer = self._buffer
        if buffer[:2] == b"\r\n":
            del buffer[:2]
            self._state = _CHUNK_SIZE
            return self._read_chunk_size()
        if len(buffer) >= 2 or (buffer and buffer[0] != 0x0D):  # (0x0D: CR)
            raise RemoteProtocolError("a chunk's data must end with CRLF")
        return NEED_DATA

    def _read_trailers(self) -> Event:
        buffer = self._buffer
        if buffer[:2] == b"\r\n" or buffer[:1] == b"\n":
            del buffer[: 2 if buffer[:1] == b"\r" else 1]
        else:
            found = _BLANK_LINE.search(buffer)
            if found is None:
                return NEED_DATA
            lines = _split_lines(bytes(buffer[: found.end()]))
            del buffer[: found.end()]
            _framing(_parse_fields(lines))  # checked as h11 checks them, then dropped
        self._expects_continue = False
        self._state = _DONE
        return END

    def _read_until_close(self) -> Event:
        buffer = self._buffer
        if buffer:
            data = bytes(buffer)
            buffer.clear()
            return Data(data)
        if self._eof:
            self._state = _DONE
            return END
        return NEED_DATA

    def _read_done(self) -> Event:
        return PAUSED

    def _split_head(self) -> list[bytes] | None:
        """The lines of the head at the front of the buffer, taken out; None: incomplete."""
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        head = bytes(buffer[:end]) if end >= 0 else b""
        if end >= 0 and head.count(b"\n") == head.count(b"\r\n"):
            # (The usual head: CRLF line ends only, so this is the first blank line.)
            del buffer[: end + 4]
            return head.split(b"\r\n")
        found = _BLANK_LINE.search(buffer)
        if found is None:
            return None
        lines = _split_lines(bytes(buffer[: found.end()]))
        del buffer[: found.end()]
        return lines

    def _note_closing(self, fields: list[tuple[bytes, bytes]], version: bytes) -> None:
        """No exchange after this one if the message is HTTP/1.0 or says ``close``."""
        if version == b"1.0" or b"close" in _comma_values(fields, b"connection"):
            self._closing = True

    def _begin_body(
        self, fields: list[tuple[bytes, bytes]], *, unframed_to_close: bool
    ) -> int | None:
        """Set up for reading a body framed by ``fields``; its ``Content-Length``, if any.

        Unframed (neither chunked nor with a length), it is empty, or, with
        ``unframed_to_close`` (a response), it lasts until the connection closes.

        Raises:
            RemoteProtocolError: As `_framing`.
        """
        length, chunked = _framing(fields)
        if chunked:
            self._state = _CHUNK_SIZE
        elif length is None and unframed_to_close:
            self._state = _UNTIL_CLOSE
            self._closing = True
        else:
            # (No body: a length of 0, so that `END` comes next, as h11 has it.)
            self._state = _LENGTH
            self._left = length or 0
        return length


class ServerConnection(_Peer):
    """HTTP/1.1 for one TCP connection, the server's side (see the module docstring).

    Args:
        max_head_size: Bytes an incomplete head (or chunk size line, or trailer block)
            may take in the buffer before the client gets 431.
    """

    __slots__ = ("_response", "content_length", "http_version", "request_method")

    def __init__(self, *, max_head_size: int = DEFAULT_MAX_HEAD_SIZE) -> None:
        super().__init__(max_head_size)
        self._response = _NOT_STARTED
        #: The method of the request being read or answered (b"" before its head).
        self.request_method = b""
        #: The ``Content-Length`` that request declared (None: none, or chunked).
        self.content_length: int | None = None
        #: The version of the request being read or answered (b"1.1" before its head).
        self.http_version = b"1.1"

    # ------------------------------------------------------------ state

    @property
    def request_complete(self) -> bool:
        """Whether the whole request (head, body, trailers) has been returned."""
        return self._state == _DONE

    @property
    def response_started(self) -> bool:
        """Whether a response's head has been framed."""
        return self._response != _NOT_STARTED

    @property
    def response_complete(self) -> bool:
        """Whether a whole response has been framed."""
        return self._response == _COMPLETE

    @property
    def they_are_waiting_for_100_continue(self) -> bool:
        """The client asked ``Expect: 100-continue`` and waits before sending its body."""
        return self._expects_continue

    def start_next_cycle(self) -> None:
        """Both the request and its response are complete: read the next request.

        Raises:
            LocalProtocolError: Either is incomplete, or the connection must close.
        """
        if self._state != _DONE or self._response != _COMPLETE or self._closing:
            raise LocalProtocolError("the connection can't carry another request now")
        self._state = _HEAD
        self._response = _NOT_STARTED
        self.request_method = b""
        self.content_length = None
        self.http_version = b"1.1"

    # ------------------------------------------------------------ receiving

    def _read_head(self) -> Event:
        buffer = self._buffer
        if buffer and buffer[0] < 0x21:
            # A control character, a space or a blank line where the request line
            # begins: never a request (and not waited on).
            raise RemoteProtocolError("illegal request line")
        lines = self._split_head()
        if lines is None:
            return CLOSED if self._eof and not buffer else NEED_DATA
        request = _parse_request_head(lines)
        self.request_method = request.method
        version = self.http_version = request.http_version
        self._note_closing(request.headers, version)
        self.content_length = self._begin_body(request.headers, unframed_to_close=False)
        self._expects_continue = version == b"1.1" and b"100-continue" in _comma_values(
            request.headers, b"expect"
        )
        return request

    # ------------------------------------------------------------ sending

    def send_continue(self) -> bytes:
        """``100 Continue``: the client may send the body it announced.

        Raises:
            LocalProtocolError: A response has started already.
        """
        if self._response != _NOT_STARTED:
            raise LocalProtocolError("100 Continue after the response started")
        self._expects_continue = False
        return b"HTTP/1.1 100 Continue\r\n\r\n"

    def send_response(
        self,
        status: int,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes = b"",
        *,
        close: bool = False,
    ) -> bytes:
        """A whole response with a ``Content-Length`` (no body bytes for ``HEAD``).

        Allowed before a request's head too (a refusal): then it closes.

        Raises:
            LocalProtocolError: A response was framed already, or a header is malformed
                or one this module writes itself.
        """
        head = self._head(status, headers, close=close or self._state == _HEAD)
        self._response = _COMPLETE
        length = b"content-length: %d\r\n" % len(body)
        if self.request_method == b"HEAD":
            return head + length + b"\r\n"
        return b"".join((head, length, b"\r\n", body))

    def send_stream_head(self, status: int, headers: Sequence[tuple[bytes, bytes]]) -> bytes:
        """The head of a response whose body follows in pieces (`send_data`, `send_end`).

        Chunked to an HTTP/1.1 client; to an HTTP/1.0 client the body ends with the
        connection (which then closes).

        Raises:
            LocalProtocolError: As `send_response`.
        """
        if self.http_version == b"1.0":
            head = self._head(status, headers, close=True)
            self._response = _STREAMING_RAW
            return head + b"\r\n"
        head = self._head(status, headers, close=False)
        self._response = _STREAMING
        return head + b"transfer-encoding: chunked\r\n\r\n"

    def send_data(self, data: bytes) -> bytes:
        """A piece of the body being streamed (b"" for no bytes).

        Raises:
            LocalProtocolError: No body is being streamed.
        """
        response = self._response
        if response == _STREAMING:
            return b"%x\r\n%b\r\n" % (len(data), data) if data else b""
        if response == _STREAMING_RAW:
            return data
        raise LocalProtocolError("no response body is being streamed")

    def send_end(self) -> bytes:
        """The end of the body being streamed.

        Raises:
            LocalProtocolError: No body is being streamed.
        """
        response = self._response
        if response not in (_STREAMING, _STREAMING_RAW):
            raise LocalProtocolError("no response body is being streamed")
        self._response = _COMPLETE
        return b"0\r\n\r\n" if response == _STREAMING else b""

    def _head(self, status: int, headers: Sequence[tuple[bytes, bytes]], *, close: bool) -> bytes:
        if self._response != _NOT_STARTED:
            raise LocalProtocolError("a response was framed already")
        self._expects_continue = False
        if not 200 <= status <= 599:
            raise LocalProtocolError(f"status {status} is not a final response")
        parts = [b"HTTP/1.1 %d %b\r\n" % (status, _REASONS.get(status, b"")), *_fields(headers)]
        if close or self._closing:
            self._closing = True
            parts.append(b"connection: close\r\n")
        return b"".join(parts)


class ClientConnection(_Peer):
    """HTTP/1.1 for one TCP connection, the client's side (see the module docstring).

    Requests framed, responses parsed, one exchange at a time.

    Args:
        max_head_size: Bytes an incomplete response head may take in the buffer.
    """

    __slots__ = ("_method", "_sent")

    _too_large = 502  # (the server's fault, as a gateway would say)

    def __init__(self, *, max_head_size: int = DEFAULT_MAX_HEAD_SIZE) -> None:
        super().__init__(max_head_size)
        self._method = b""  # of the request sent
        self._sent = False

    @property
    def response_complete(self) -> bool:
        """Whether the whole response (head, body, trailers) has been returned."""
        return self._state == _DONE

    @property
    def reusable(self) -> bool:
        """Whether the exchange is complete and the connection may carry the next one."""
        return self._sent and self._state == _DONE and not self._closing

    def send_request(
        self,
        method: bytes,
        target: bytes,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes = b"",
    ) -> bytes:
        """A whole request (``Content-Length`` added to a body): one write's bytes.

        Raises:
            LocalProtocolError: A request is in progress already, or the method, target
                or a header is malformed, or ``Host`` is not there exactly once.
        """
        if self._sent:
            raise LocalProtocolError("a request was sent already on this cycle")
        if _NAME.fullmatch(method) is None or _TARGET.fullmatch(target) is None:
            raise LocalProtocolError(f"illegal request line {method!r} {target!r}")
        parts = [b"%b %b HTTP/1.1\r\n" % (method, target), *_fields(headers)]
        names = [name.lower() for name, _ in headers]
        if names.count(b"host") != 1:
            raise LocalProtocolError("a request needs exactly one Host")
        self._method = method
        self._sent = True
        if b"connection" in names:
            # (Asking for ``close`` ends keep-alive as surely as the server saying it.)
            self._note_closing([(name.lower(), value) for name, value in headers], b"1.1")
        if body:
            parts.append(b"content-length: %d\r\n\r\n" % len(body))
            parts.append(body)
        else:
            parts.append(b"\r\n")
        return b"".join(parts)

    def send_failed(self) -> None:
        """The request could not be written whole: the connection can't be reused."""
        self._closing = True

    def start_next_cycle(self) -> None:
        """The exchange is complete: ready for the next request.

        Raises:
            LocalProtocolError: It is not, or the connection must close.
        """
        if not self.reusable:
            raise LocalProtocolError("the connection can't carry another request now")
        self._state = _HEAD
        self._sent = False
        self._method = b""

    def _read_head(self) -> Event:
        buffer = self._buffer
        if buffer and buffer[:1] != b"H":
            raise RemoteProtocolError("illegal status line")
        lines = self._split_head()
        if lines is None:
            return CLOSED if self._eof and not buffer else NEED_DATA
        response = _parse_response_head(lines)
        status = response.status
        if status < 200:
            # An interim answer; the final one's head is read next. Never a switch of
            # protocols: we ask for none (RFC 9110 §15.2.2), nor below 100.
            if status < 100 or status == 101:
                raise RemoteProtocolError(f"status {status} where a response was due")
            _framing(response.headers)  # (checked, as on every head)
            return response
        self._note_closing(response.headers, response.http_version)
        if self._method == b"HEAD" or status in (204, 304):
            _framing(response.headers)  # (checked; but there is no body, whatever it says)
            self._state = _LENGTH
            self._left = 0
        else:
            self._begin_body(response.headers, unframed_to_close=True)
        return response


# Where the response being framed is (`ServerConnection._response`).
_NOT_STARTED: Final = 0
_STREAMING: Final = 1  # chunked
_STREAMING_RAW: Final = 2  # to an HTTP/1.0 client: ends with the connection
_COMPLETE: Final = 3

_SHARED_READERS: Final[dict[int, Callable[[Any], Event]]] = {
    _LENGTH: _Peer._read_length,
    _CHUNK_SIZE: _Peer._read_chunk_size,
    _CHUNK_DATA: _Peer._read_chunk_data,
    _CHUNK_END: _Peer._read_chunk_end,
    _TRAILERS: _Peer._read_trailers,
    _UNTIL_CLOSE: _Peer._read_until_close,
    _DONE: _Peer._read_done,
}
ServerConnection._readers = {**_SHARED_READERS, _HEAD: ServerConnection._read_head}
ClientConnection._readers = {**_SHARED_READERS, _HEAD: ClientConnection._read_head}


def _parse_request_head(lines: list[bytes]) -> Request:
    """A request from its head's lines (request line first).

    Raises:
        RemoteProtocolError: A malformed line, version or field.
    """
    found = _REQUEST_LINE.fullmatch(lines[0])
    if found is None:
        raise RemoteProtocolError("illegal request line")
    method, target, version = found.group("method", "target", "version")
    if version not in _VERSIONS:
        raise RemoteProtocolError("HTTP version not supported", 505)
    fields = _parse_fields(lines[1:])
    hosts = sum(1 for name, _ in fields if name == b"host")
    if hosts > 1 or (hosts == 0 and version == b"1.1"):
        raise RemoteProtocolError("an HTTP/1.1 request needs exactly one Host")
    return Request(method, target, fields, version)


def _parse_response_head(lines: list[bytes]) -> Response:
    """A response from its head's lines (status line first).

    Raises:
        RemoteProtocolError: A malformed line, version or field.
    """
    found = _STATUS_LINE.fullmatch(lines[0])
    if found is None:
        raise RemoteProtocolError("illegal status line")
    version, status, reason = found.group("version", "status", "reason")
    if version not in _VERSIONS:
        raise RemoteProtocolError("HTTP version not supported")
    return Response(int(status), reason or b"", _parse_fields(lines[1:]), version)


def _fields(headers: Sequence[tuple[bytes, bytes]]) -> list[bytes]:
    """Header lines to write, each checked (RFC 9110 §5.1, §5.5).

    Raises:
        LocalProtocolError: A name that is not a token, a value with a line break, a
            NUL or whitespace around it, or a field this module writes itself.
    """
    lines = []
    for name, value in headers:
        if (
            _NAME.fullmatch(name) is None
            or _VALUE.fullmatch(value) is None
            or name.lower() in _FRAMING
        ):
            raise LocalProtocolError(f"illegal header {name!r}: {value!r}")
        lines.append(b"%b: %b\r\n" % (name, value))
    return lines


def _split_lines(block: bytes) -> list[bytes]:
    """The lines of a block that ends with a blank line (the blank line dropped).

    LF ends a line, and a CR before it goes with it (h11's reading).
    """
    lines = [line[:-1] if line[-1:] == b"\r" else line for line in block.split(b"\n")]
    return lines[:-2]


def _parse_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Header (or trailer) fields: names lower-cased, folded lines joined.

    Raises:
        RemoteProtocolError: A malformed field line.
    """
    fields: list[tuple[bytes, bytes]] = []
    if any(line[:1] in (b" ", b"\t") for line in lines):
        lines = _unfold(lines)
    for line in lines:
        found = _FIELD_LINE.fullmatch(line)
        if found is None:
            raise RemoteProtocolError("illegal header line")
        name, value = found.groups()
        fields.append((name.lower(), value))
    return fields


def _unfold(lines: list[bytes]) -> list[bytes]:
    """Join obsolete line folding (RFC 9112 §5.2) as h11 reads it.

    A line starting with whitespace continues the one before, joined with one space.

    Raises:
        RemoteProtocolError: The first line is a continuation.
    """
    joined: list[bytes] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if not joined:
                raise RemoteProtocolError("continuation line at start of headers")
            joined[-1] += b" " + line.lstrip(b" \t")
        else:
            joined.append(line)
    return joined


def _comma_values(fields: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    """The comma-separated values of every ``name`` field, lower-cased."""
    values: list[bytes] = []
    for field, value in fields:
        if field == name:
            values.extend(item.strip().lower() for item in value.split(b",") if item.strip())
    return values


def _framing(fields: list[tuple[bytes, bytes]]) -> tuple[int | None, bool]:
    """The body's length (None: not given) and whether it is chunked.

    ``fields`` is normalised in place as h11 normalises it: one ``Content-Length``
    holding the one value (repeats and comma lists of the same value folded into it),
    ``Transfer-Encoding`` lower-cased.

    Raises:
        RemoteProtocolError: A malformed or conflicting ``Content-Length``, a
            transfer-coding other than chunked (501), or both headers (400).
    """
    length: bytes | None = None
    chunked = False
    normalise = False  # (rare)
    for name, value in fields:
        if name == b"content-length":
            digits = _length_digits(value)
            normalise = normalise or digits is not value
            if length is not None:
                if length != digits:
                    raise RemoteProtocolError("conflicting Content-Length")
                normalise = True
            length = digits
        elif name == b"transfer-encoding":
            if chunked or value.lower() != b"chunked":
                raise RemoteProtocolError("only Transfer-Encoding: chunked is supported", 501)
            chunked = True
            if value != b"chunked":
                normalise = True
    if chunked and length is not None:
        raise RemoteProtocolError("both Content-Length and Transfer-Encoding")
    if normalise:
        _normalise(fields, length)
    return (int(length) if length is not None else None), chunked


def _length_digits(value: bytes) -> bytes:
    """A ``Content-Length`` value's digits (a list of one value repeated: that value).

    Raises:
        RemoteProtocolError: Not digits, too many, or a list of different values.
    """
    digits = value
    if b"," in value:
        values = {item.strip() for item in value.split(b",")}
        if len(values) != 1:
            raise RemoteProtocolError("conflicting Content-Length")
        (digits,) = values
    if _DIGITS.fullmatch(digits) is None or len(digits) > MAX_CONTENT_LENGTH_DIGITS:
        raise RemoteProtocolError("bad Content-Length")
    return digits


def _normalise(fields: list[tuple[bytes, bytes]], length: bytes | None) -> None:
    """`_framing`'s in-place normalisation.

    The first ``Content-Length`` kept, holding ``length``; ``Transfer-Encoding``
    lower-cased.
    """
    normal: list[tuple[bytes, bytes]] = []
    for name, value in fields:
        if name == b"content-length":
            if length is None:
                continue
            normal.append((name, length))
            length = None  # (the repeats go)
        else:
            normal.append((name, value.lower() if name == b"transfer-encoding" else value))
    fields[:] = normal
