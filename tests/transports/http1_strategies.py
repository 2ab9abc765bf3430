"""What the two HTTP/1.1 test files share: hypothesis strategies and normalising helpers.

`tests/transports/test_http1.py` (the server side: requests parsed, responses framed)
and `tests/transports/test_http1_client.py` (the client side: responses parsed, requests
framed) both hold `transports._net.http1` to h11 as an oracle on generated streams, and
both draw from this module:

* the grammar's pieces: `TCHAR`, `FIELD_VCHAR`, `tokens`, `words`, `ows`, `rws`,
  `line_ends`, `visible_targets`, `versions`, `quirks` (and `unsupported_versions`);
* a message's parts: a field as its raw, maybe folded, lines (`field_lines`), ordinary
  fields (`ordinary_fields`), ``Content-Length`` fields (`content_length_fields`), a
  chunked body (`chunked_bodies`), a body's framing (`framed_payloads`), a
  ``Connection`` field (`connection_fields`), a head's lines joined in any field order
  (`heads`);
* a stream's delivery: cut into pieces (`cut`), or mutated (`mutate`);
* normalising helpers: body pieces joined (`add_data`, `joined_body`), h11's fields as
  bytes (`h11_fields`), events read up to a stop (`read_events`), and the h11 peers
  that read what ours write (`h11_client_after`, `h11_server_reads`);
* the unit tests' shared data and steps (`NOT_TOKENS`, `REFUSED_VALUES`,
  `CHUNKED_HELLO`, `chunk_faults`, `start_line_faults`, `chunked_abc_byte_by_byte`,
  `head_past_the_limit`).

Where the two generators differ (which field names are never drawn by chance, the chunk
extensions, the trailers' line ends, the bytes a mutation favours), the difference is
named: a `Side`, `REQUEST_STREAMS` for the server's tests and `RESPONSE_STREAMS` for the
client's, passed to the strategies that need it; where the unit tests differ (the events
each reads up to), two named constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import h11
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from transports._net.http1 import CLOSED, END, NEED_DATA, PAUSED, Data, RemoteProtocolError

Fields = list[tuple[bytes, bytes]]
#: A parser's output, normalised (each test file says which steps it writes).
Step = tuple[object, ...]

#: The ``Host`` field of the requests sent before a response is read (by an h11 client:
#: the server's ``_read_back``, the client's oracle; by ours: the client's tests).
HOST: Fields = [(b"host", b"example.com")]


def fuzz(max_examples: int) -> settings:
    """The differential fuzzers' settings: `max_examples` of them, no deadline."""
    return settings(
        max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )


# ---------------------------------------------------------------------------------------
# The grammar's pieces.
# ---------------------------------------------------------------------------------------

TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: h11's field-vchar: anything but NUL and ASCII whitespace (obs-text and most controls
#: included: h11 issue 57).
FIELD_VCHAR = "".join(chr(b) for b in range(1, 256) if b not in b"\t\n\x0b\x0c\r ")
#: A request target's characters, as drawn here: visible ASCII.
VISIBLE_ASCII = "".join(chr(b) for b in range(0x21, 0x7F))

tokens = st.text(TCHAR, min_size=1, max_size=10).map(str.encode)
words = st.text(FIELD_VCHAR, min_size=1, max_size=8).map(lambda text: text.encode("latin-1"))
ows = st.sampled_from([b"", b"", b" ", b"\t", b"  ", b" \t "])
rws = st.sampled_from([b" ", b"\t", b"  ", b" \t"])
line_ends = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n"])
visible_targets = st.text(VISIBLE_ASCII, min_size=1, max_size=20).map(str.encode)
versions = st.sampled_from([b"1.1", b"1.1", b"1.0"])
#: The versions h11 reads and ours refuses by design (the ``"version"`` quirk).
unsupported_versions = st.sampled_from([b"0.9", b"1.2", b"2.0", b"3.7"])
#: Mostly none; else one h11 accepts and ours refuses by design: ``Content-Length``
#: with chunked, or a version other than 1.0/1.1.
quirks = st.sampled_from([None] * 10 + ["content-length+chunked", "version"])


def names_but(special: frozenset[bytes]) -> st.SearchStrategy[bytes]:
    """Field names, never one of `special` (in any case)."""
    return tokens.filter(lambda name: name.lower() not in special)


@dataclass(frozen=True)
class Side:
    """What one side's generator draws its own way (`REQUEST_STREAMS`, `RESPONSE_STREAMS`)."""

    #: Ordinary field names (and trailer names): never the ones written on purpose.
    names: st.SearchStrategy[bytes]
    #: What may follow a chunk size.
    chunk_extensions: tuple[bytes, ...]
    #: How a trailer line, and the blank line after the trailers, end.
    trailer_line_ends: st.SearchStrategy[bytes]
    #: The bytes a mutation inserts or writes more often than any other.
    favoured_bytes: bytes


#: Names the request generator writes on purpose (framing, keep-alive, 100-continue),
#: never by chance; "upgrade" would make h11 wait for a protocol switch.
REQUEST_SPECIAL = frozenset(
    {b"host", b"content-length", b"transfer-encoding", b"connection", b"expect", b"upgrade"}
)
#: Names the response generator writes on purpose (framing, keep-alive), never by chance.
RESPONSE_SPECIAL = frozenset({b"content-length", b"transfer-encoding", b"connection", b"upgrade"})
#: Chunk extensions of the request streams (the response streams add one).
REQUEST_CHUNK_EXTENSIONS = (b"", b"", b";a", b";name=value", b';q="x y"')

#: The request streams of `test_http1.py`: trailers end in CRLF only.
REQUEST_STREAMS = Side(
    names=names_but(REQUEST_SPECIAL),
    chunk_extensions=REQUEST_CHUNK_EXTENSIONS,
    trailer_line_ends=st.just(b"\r\n"),
    favoured_bytes=b"\r\n \t:;,0aA\x00\x7f\xff",
)
#: The response streams of `test_http1_client.py`: one more chunk extension (with a
#: tab), trailers with any line end, and a mutation favours "H" and "1" too (a status
#: line's first bytes).
RESPONSE_STREAMS = Side(
    names=names_but(RESPONSE_SPECIAL),
    chunk_extensions=(*REQUEST_CHUNK_EXTENSIONS, b"; a=\tb"),
    trailer_line_ends=line_ends,
    favoured_bytes=b"\r\n \t:;,0aAH1\x00\x7f\xff",
)

# ---------------------------------------------------------------------------------------
# A message's parts.
# ---------------------------------------------------------------------------------------


@st.composite
def field_lines(
    draw: st.DrawFn, name: bytes, value_words: list[bytes] | None = None
) -> list[bytes]:
    """One field as its raw lines (no line ends): any name case, OWS, maybe folded."""
    name = draw(st.sampled_from([name, name.upper(), name.title()]))
    fold = value_words is None  # a framing field's value stays on one line
    if value_words is None:
        value_words = draw(st.lists(words, max_size=3))
    lines = [name + b":" + draw(ows)]
    for index, word in enumerate(value_words):
        if fold and draw(st.integers(0, 4)) == 0:
            # obs-fold: a continuation line starting with SP or HTAB
            lines[-1] += draw(ows)
            lines.append(draw(rws) + word)
        else:
            lines[-1] += (draw(rws) if index else b"") + word
    lines[-1] += draw(ows)
    return lines


@st.composite
def ordinary_fields(draw: st.DrawFn, side: Side) -> list[list[bytes]]:
    """Up to four fields of `side`'s ordinary names, as `field_lines`."""
    return [draw(field_lines(name)) for name in draw(st.lists(side.names, max_size=4))]


def cut(draw: st.DrawFn, data: bytes, most: int) -> list[bytes]:
    """`data` in up to `most` + 1 non-empty pieces, cut anywhere."""
    cuts = sorted(set(draw(st.lists(st.integers(1, max(len(data) - 1, 1)), max_size=most))))
    pieces = [data[start:end] for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    return [piece for piece in pieces if piece]


@st.composite
def chunked_bodies(draw: st.DrawFn, body: bytes, side: Side) -> bytes:
    """`body` chunked: random cuts, hex in either case, extensions, OWS, trailers."""
    extensions = st.sampled_from(side.chunk_extensions)
    out = b""
    for piece in cut(draw, body, 3):
        size = draw(st.sampled_from([b"%x", b"%X", b"00%x"])) % len(piece)
        out += size + draw(extensions) + draw(ows) + b"\r\n" + piece + b"\r\n"
    out += b"0" + draw(extensions) + draw(ows) + b"\r\n"
    for name, value in draw(st.lists(st.tuples(side.names, words), max_size=2)):
        out += name + b": " + value + draw(side.trailer_line_ends)
    return out + draw(side.trailer_line_ends)


@st.composite
def content_length_fields(draw: st.DrawFn, length: int) -> list[list[bytes]]:
    """A body's length as one field, a repeated field, a list of equal values, or 00-led."""
    value = b"%d" % length
    form = draw(st.sampled_from(["plain", "zeros", "twice", "list"]))
    if form == "zeros":
        value = b"00" + value
    elif form == "list":
        value += b", " + value
    field = draw(field_lines(b"content-length", [value]))
    return [field, draw(field_lines(b"content-length", [value]))] if form == "twice" else [field]


@st.composite
def framed_payloads(
    draw: st.DrawFn, body: bytes, *, chunked: bool, quirk: str | None, side: Side
) -> tuple[list[list[bytes]], bytes]:
    """`body`'s framing fields and what carries it: a ``Content-Length``, or chunked.

    Under the ``"content-length+chunked"`` quirk a chunked body has a
    ``Content-Length`` too.
    """
    if not chunked:
        return draw(content_length_fields(len(body))), body
    coding = draw(st.sampled_from([b"chunked", b"Chunked", b"CHUNKED"]))
    fields = [draw(field_lines(b"transfer-encoding", [coding]))]
    if quirk == "content-length+chunked":
        fields.append(draw(field_lines(b"content-length", [b"%d" % len(body)])))
    return fields, draw(chunked_bodies(body, side))


@st.composite
def connection_fields(draw: st.DrawFn) -> list[bytes]:
    """A ``Connection`` field: close (in any case, or in a list), keep-alive, or other."""
    options = [b"close", b"keep-alive", b"Close", b"keep-alive, close", b"te"]
    return draw(field_lines(b"connection", [draw(st.sampled_from(options))]))


@st.composite
def heads(draw: st.DrawFn, start_line: bytes, fields: list[list[bytes]]) -> bytes:
    """`start_line` and `fields` in any order, any line ends, and the blank line."""
    lines = [start_line]
    for field in draw(st.permutations(fields)):
        lines += field
    return b"".join(line + draw(line_ends) for line in lines) + draw(line_ends)


def mutate(draw: st.DrawFn, data: bytes, side: Side) -> bytes:
    """`data` with one to three bytes inserted, deleted, replaced or with a bit flipped."""
    stream = bytearray(data)
    interesting = st.sampled_from(list(side.favoured_bytes)) | st.integers(0, 255)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(stream) - 1))
        action = draw(st.sampled_from(["insert", "delete", "replace", "flip"]))
        if action == "insert":
            stream.insert(at, draw(interesting))
        elif action == "delete" and len(stream) > 1:
            del stream[at]
        elif action == "replace":
            stream[at] = draw(interesting)
        else:
            stream[at] ^= 1 << draw(st.integers(0, 7))
    return bytes(stream)


# ---------------------------------------------------------------------------------------
# Normalising helpers.
# ---------------------------------------------------------------------------------------


def add_data(steps: list[Step], data: bytes) -> None:
    """Join a body piece to the message's data so far (pieces may split differently)."""
    if not data:
        return
    if steps and steps[-1][0] == "data":
        joined = steps[-1][1]
        assert isinstance(joined, bytes)
        steps[-1] = ("data", joined + data)
    else:
        steps.append(("data", data))


def h11_fields(event: h11.Request | h11.InformationalResponse | h11.Response) -> Fields:
    """An h11 head's fields, as bytes."""
    return [(bytes(name), bytes(value)) for name, value in event.headers]


def joined_body(events: list[object]) -> bytes:
    """The body pieces among `events`, joined."""
    return b"".join(event.data for event in events if isinstance(event, Data))


class Parser(Protocol):
    """A `ServerConnection` or a `ClientConnection`, as the helpers read it."""

    def receive_data(self, data: bytes) -> None: ...

    def next_event(self) -> object: ...


#: Where the server's tests stop reading events (they never feed an EOF).
UNTIL_PAUSED: tuple[object, ...] = (NEED_DATA, PAUSED)
#: Where the client's tests stop reading events: ``CLOSED`` too (an EOF between messages).
UNTIL_PAUSED_OR_CLOSED: tuple[object, ...] = (NEED_DATA, PAUSED, CLOSED)


def read_events(connection: Parser, until: tuple[object, ...]) -> list[object]:
    """Events up to one of `until` (not included)."""
    found: list[object] = []
    while True:
        event = connection.next_event()
        if any(event is stop for stop in until):
            return found
        found.append(event)


def h11_client_after(method: bytes, headers: Fields = HOST) -> h11.Connection:
    """An h11 client that has sent a whole `method` request for ``/mcp``."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method=method, target=b"/mcp", headers=headers))
    client.send(h11.EndOfMessage())
    return client


def h11_server_reads(data: bytes) -> tuple[h11.Request, bytes]:
    """An h11 server's reading of one whole request: its head and body (nothing after)."""
    server = h11.Connection(h11.SERVER)
    server.receive_data(data)
    request = server.next_event()
    assert isinstance(request, h11.Request), request
    read = b""
    while not isinstance(event := server.next_event(), h11.EndOfMessage):
        assert isinstance(event, h11.Data), event
        read += bytes(event.data)
    assert server.trailing_data == (b"", False)
    return request, read


# ---------------------------------------------------------------------------------------
# The unit tests' shared data and steps.
# ---------------------------------------------------------------------------------------

#: Field names that are not tokens: refused by both sides' senders.
NOT_TOKENS = [b"", b"bad name", b"x:y", b"caf\xc3\xa9", b"x\r\n", b"(x)"]
#: Field values with CR, LF or NUL, or whitespace around them: refused by both sides'
#: senders (the client's test adds a trailing CRLF).
REFUSED_VALUES = [b"a\r\nx-injected: 1", b"a\rb", b"a\nb", b"a\x00b", b" a", b"a ", b"a\t"]
#: A chunked body (after a blank line): an extension, a size in upper case with OWS,
#: and a trailer; it reads as `CHUNKED_HELLO_BODY`.
CHUNKED_HELLO = b"5;ext=1\r\nhello\r\nA \r\n, world!!!\r\n0\r\nX-Trailer: t\r\n\r\n"
CHUNKED_HELLO_BODY = b"hello, world!!!"


def chunked_abc_byte_by_byte(connection: Parser, head: bytes, until: tuple[object, ...]) -> object:
    """`head`, then ``abc`` chunked, fed a byte at a time, read whole: the head's event."""
    found: list[object] = []
    for byte in head + b"3\r\nabc\r\n0\r\n\r\n":
        connection.receive_data(bytes([byte]))
        found += read_events(connection, until)
    assert joined_body(found) == b"abc"
    assert found[-1] is END
    return found[0]


def chunk_faults(chunked_head: bytes) -> list[pytest.ParameterSet]:
    """Broken chunks, malformed on either side: one without its CRLF, a size not in hex.

    Each follows `chunked_head`, a whole head that says chunked.
    """
    return [
        pytest.param(chunked_head + b"3\r\nabcX\r\n", id="chunk-without-crlf"),
        pytest.param(chunked_head + b"zz\r\n", id="chunk-size-not-hex"),
    ]


def start_line_faults(message: bytes) -> list[pytest.ParameterSet]:
    """Broken start lines, malformed on either side: a blank line first, ``http`` in lower case.

    Each is `message`, a whole bodiless one, with that one fault.
    """
    return [
        pytest.param(b"\r\n" + message, id="leading-blank-line"),
        pytest.param(message.replace(b"HTTP/", b"http/", 1), id="lower-case-http"),
    ]


def head_past_the_limit(connection: Parser, head: bytes, limit: int) -> RemoteProtocolError:
    """`head` padded to `limit` bytes waits for more; one byte more is refused (returned)."""
    connection.receive_data(head + b"a" * (limit - len(head)))
    assert connection.next_event() is NEED_DATA  # `limit` bytes do not exceed `limit`
    connection.receive_data(b"a")
    with pytest.raises(RemoteProtocolError) as caught:
        connection.next_event()
    return caught.value
