"""`transports._net.http1.ClientConnection` reads responses as h11 does, writes what h11 reads.

The response parser is held to an h11 client (``h11.Connection(h11.CLIENT)``, after the
same request) as an oracle: well-formed response streams (any status but an unsolicited
101, 1xx interim responses before the final one, reason phrases, fields with folded lines
and bare-LF line ends, bodies with a ``Content-Length``, chunked with extensions and
trailers, or delimited by the end of the connection; no body after ``HEAD``, 204 or 304;
cut into pieces anywhere) give the same heads, the same body, the same end and the same
keep-alive verdict; mutated streams (bytes inserted, deleted, replaced) are refused by
both, or by neither. The only differences are the ones the API document names
(``/work/wt/briefs/http1_api.md``): ``Content-Length`` with ``Transfer-Encoding`` and HTTP
versions other than 1.0/1.1 are refused, and an end of the connection where a response's
head was awaited is ``CLOSED``. The unit tests pin the rest of the client API: what
``send_request`` writes (read back by an h11 server) and refuses to write, bodiless
responses, close-delimited bodies and early ends, ``reusable``, interim responses, head
sizes, dead connections, and two exchanges on one connection, pipelined or not.
"""

from __future__ import annotations

from dataclasses import dataclass

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.transports import http1_strategies as shared
from tests.transports.http1_strategies import Fields, Step
from transports._net.http1 import (
    CLOSED,
    END,
    NEED_DATA,
    PAUSED,
    ClientConnection,
    Data,
    LocalProtocolError,
    RemoteProtocolError,
    Response,
)

# A parser's output, normalised (`Step`): ("response", status, reason, fields, version)
# (1xx or final), ("data", bytes) (every piece of the body joined), ("end",), ("closed",),
# ("error",).

#: Steps, and the keep-alive verdict once the response ended (None: it did not).
Reading = tuple[list[Step], bool | None]

FUZZ = shared.fuzz(max_examples=150)

# ---------------------------------------------------------------------------------------
# Response streams: well-formed ones (h11 reads them without an error), then mutated ones.
# (The grammar's pieces are `http1_strategies`'; `RESPONSE_STREAMS` names what these
# streams draw their own way.)
# ---------------------------------------------------------------------------------------

#: A reason phrase's characters (RFC 9112 §4: HTAB, SP, VCHAR, obs-text; h11's reading).
REASON_CHARS = " \t" + shared.FIELD_VCHAR

#: None: no space after the status code at all (``HTTP/1.1 200``).
reasons = st.one_of(
    st.none(),
    st.sampled_from([b"", b"OK", b"Continue", b"No Content", b"Not Modified"]),
    st.text(REASON_CHARS, max_size=12).map(lambda text: text.encode("latin-1")),
)
# 101 is left out: to a request without Upgrade it is a protocol error for h11 (a switch
# nobody proposed); `test_an_unsolicited_101_is_refused_as_h11_refuses_it` covers it.
interim_statuses = st.sampled_from([100, 102, 103]) | st.integers(100, 199).filter(
    lambda status: status != 101
)
final_statuses = st.sampled_from([200, 201, 204, 304, 404, 500]) | st.integers(200, 999)


@dataclass(frozen=True)
class Exchange:
    """A request's method and ``Connection: close``, and the response stream to it."""

    method: bytes
    close_request: bool
    pieces: list[bytes]  # the `receive_data` calls
    eof: bool  # then `receive_data(b"")`

    @property
    def headers(self) -> Fields:
        return shared.HOST + ([(b"connection", b"close")] if self.close_request else [])


@st.composite
def response_heads(
    draw: st.DrawFn, status: int, version: bytes, special: list[list[bytes]] | None = None
) -> bytes:
    """A status line and fields (ordinary ones, plus `special` in any order)."""
    reason = draw(reasons)
    line = b"HTTP/" + version + b" %03d" % status + (b"" if reason is None else b" " + reason)
    fields = draw(shared.ordinary_fields(shared.RESPONSE_STREAMS))
    return draw(shared.heads(line, fields + (special or [])))


@st.composite
def final_responses(draw: st.DrawFn, method: bytes, quirk: str | None) -> tuple[bytes, bool]:
    """A final response to `method` (head and body), and whether an EOF must end it.

    After HEAD, or with a 204 or 304, the framing fields say what they like and no body
    follows; otherwise the body has a length, is chunked, or lasts until the EOF.
    """
    status = draw(final_statuses)
    version = draw(shared.versions)
    if quirk == "version":  # refused by ours only (API document)
        version = draw(shared.unsupported_versions)
    bodiless = method == b"HEAD" or status in (204, 304)
    framing = draw(st.sampled_from(["close", "length", "chunked"]))
    if quirk == "content-length+chunked":  # refused by ours only (API document)
        framing = "chunked"
    body = draw(st.binary(max_size=40))
    special: list[list[bytes]] = []
    payload = body
    if framing != "close":
        special, payload = draw(
            shared.framed_payloads(
                body, chunked=framing == "chunked", quirk=quirk, side=shared.RESPONSE_STREAMS
            )
        )
    if draw(st.integers(0, 3)) == 0:
        special.append(draw(shared.connection_fields()))
    head = draw(response_heads(status, version, special))
    if bodiless:
        payload = b""
    until_eof = framing == "close" and not bodiless
    if not until_eof and draw(st.booleans()):
        # The next response, pipelined: not this one's business (it stays unread).
        payload += b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc"
    return head + payload, until_eof


@st.composite
def response_streams(draw: st.DrawFn) -> tuple[bytes, bytes, bool, bool]:
    """(method, stream, close_request, eof): 1xx responses, then a final one."""
    method = draw(st.sampled_from([b"GET", b"POST", b"HEAD"]))
    quirk = draw(shared.quirks)
    stream = b"".join(
        draw(response_heads(status, draw(shared.versions)))
        for status in draw(st.lists(interim_statuses, max_size=2))
    )
    final, until_eof = draw(final_responses(method, quirk))
    eof = until_eof or draw(st.booleans())
    return method, stream + final, draw(st.integers(0, 4)) == 0, eof


@st.composite
def well_formed_exchanges(draw: st.DrawFn) -> Exchange:
    """A well-formed response stream, as the `receive_data` pieces that carry it."""
    method, stream, close_request, eof = draw(response_streams())
    return Exchange(method, close_request, shared.cut(draw, stream, 6), eof)


@st.composite
def mutated_exchanges(draw: st.DrawFn) -> Exchange:
    """A well-formed stream with one to three bytes inserted, deleted or replaced."""
    method, data, close_request, eof = draw(response_streams())
    stream = shared.mutate(draw, data, shared.RESPONSE_STREAMS)
    return Exchange(method, close_request, shared.cut(draw, stream, 6), eof or draw(st.booleans()))


# ---------------------------------------------------------------------------------------
# Both parsers driven the same way, their events normalised.
# ---------------------------------------------------------------------------------------


def _inputs(exchange: Exchange) -> list[bytes]:
    return [*exchange.pieces, *([b""] if exchange.eof else [])]


def _awaiting_head(steps: list[Step]) -> bool:
    """Whether no final response's head has been read yet (none, or only 1xx ones)."""
    last = steps[-1] if steps else None
    return last is None or (last[0] == "response" and isinstance(last[1], int) and last[1] < 200)


def _delimited_by_close(method: bytes, steps: list[Step]) -> bool:
    """Whether the final response's body lasted until the EOF (RFC 9112 §6.3)."""
    final = next(step for step in reversed(steps) if step[0] == "response")
    _, status, _, fields, _ = final
    assert isinstance(fields, list)
    framed = {name for name, _ in fields} & {b"content-length", b"transfer-encoding"}
    return method != b"HEAD" and status not in (204, 304) and not framed


def _run_h11(exchange: Exchange) -> Reading:
    """h11's reading of the response, after it sent the same request itself."""
    h = shared.h11_client_after(exchange.method, exchange.headers)
    steps: list[Step] = []
    at_eof = False
    try:
        for piece in _inputs(exchange):
            h.receive_data(piece)
            while True:
                at_eof = h.trailing_data == (b"", True)
                event = h.next_event()
                if event is h11.NEED_DATA:
                    break
                if isinstance(event, h11.InformationalResponse | h11.Response):
                    steps.append(
                        (
                            "response",
                            event.status_code,
                            event.reason,
                            shared.h11_fields(event),
                            event.http_version,
                        )
                    )
                elif isinstance(event, h11.Data):
                    shared.add_data(steps, bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    steps.append(("end",))
                    # h11 leaves a close-delimited exchange DONE on both sides (it reports
                    # ConnectionClosed next): no other request can follow it either.
                    done = h.our_state is h11.DONE and h.their_state is h11.DONE
                    return steps, done and not _delimited_by_close(exchange.method, steps)
                else:
                    assert isinstance(event, h11.ConnectionClosed), event
                    steps.append(("closed",))
                    return steps, None
    except h11.RemoteProtocolError:
        # Allowed difference (API document: `CLOSED` is an "EOF between messages"): h11
        # refuses an EOF where it awaits a response's head; ours reports CLOSED, which its
        # driver uses to tell a server that closed an idle connection from a broken answer.
        steps.append(("closed",) if at_eof and _awaiting_head(steps) else ("error",))
    return steps, None


def _run_ours(exchange: Exchange) -> Reading:
    """Our reading, driven as `_run_h11` drives h11."""
    connection = ClientConnection()
    connection.send_request(exchange.method, b"/mcp", exchange.headers)
    steps: list[Step] = []
    try:
        for piece in _inputs(exchange):
            connection.receive_data(piece)
            while (event := connection.next_event()) is not NEED_DATA:
                if isinstance(event, Response):
                    steps.append(
                        ("response", event.status, event.reason, event.headers, event.http_version)
                    )
                elif isinstance(event, Data):
                    shared.add_data(steps, event.data)
                elif event is END:
                    steps.append(("end",))
                    assert connection.response_complete
                    assert connection.next_event() is PAUSED  # and it stays there
                    return steps, connection.reusable
                else:
                    assert event is CLOSED, event
                    assert not connection.reusable
                    steps.append(("closed",))
                    return steps, None
    except RemoteProtocolError:
        steps.append(("error",))
        assert not connection.reusable
        assert not connection.keep_alive
        with pytest.raises(RemoteProtocolError):  # the connection stays dead
            connection.next_event()
    return steps, None


def _refused_by_design(step: Step) -> bool:
    """Whether ours refuses a head h11 reads (the API document's stricter rules)."""
    _, status, _, fields, version = step
    assert isinstance(status, int)
    assert isinstance(fields, list)
    names = {name for name, _ in fields}
    # "versions other than 1.0/1.1 are errors": h11 reads any d.d.
    if version not in (b"1.0", b"1.1"):
        return True
    # "CL together with TE is an error": h11 lets chunked win (RFC 9112 §6.1 allows
    # either); a 1xx has no body, and ours does not look at its framing.
    return status >= 200 and {b"content-length", b"transfer-encoding"} <= names


def _expected(reading: Reading) -> Reading:
    """h11's reading, cut at the first head we refuse by design.

    (Names are compared as they are: both lower-case them the same way.)
    """
    steps, reusable = reading
    for index, step in enumerate(steps):
        if step[0] == "response" and _refused_by_design(step):
            return [*steps[:index], ("error",)], None
    return steps, reusable


def _parts(steps: list[Step]) -> tuple[list[Step], bytes, str]:
    """Steps as (heads, body, how they stopped: end, closed, error, or waiting)."""
    found = [step for step in steps if step[0] == "response"]
    body = b"".join(step[1] for step in steps if step[0] == "data" and isinstance(step[1], bytes))
    stop = str(steps[-1][0]) if steps and steps[-1][0] in ("end", "closed", "error") else "waiting"
    return found, body, stop


def _assert_matches(ours: Reading, expected: Reading, *, mutated: bool) -> None:
    if not mutated or ours[0] == expected[0]:
        assert ours == expected  # (the same steps: then the same keep-alive verdict)
        return
    our_heads, our_body, our_stop = _parts(ours[0])
    heads_, body, stop = _parts(expected[0])
    # A head both read, or neither: an error in a complete head is found by both.
    assert our_heads == heads_, (ours, expected)
    # Mutated input may leave a message incomplete, and the API promises no eagerness:
    # either may refuse early what the other still waits on (ours refuses a head not
    # starting with "H" at once, h11 once it is complete), and hold back body bytes.
    assert {our_stop, stop} == {"error", "waiting"}, (ours, expected)
    assert our_body.startswith(body) or body.startswith(our_body), (ours, expected)


@FUZZ
@given(well_formed_exchanges())
def test_well_formed_responses_read_as_h11_reads_them(exchange: Exchange) -> None:
    h11_reading = _run_h11(exchange)
    assert h11_reading[0][-1] == ("end",), h11_reading  # the generator writes valid HTTP
    _assert_matches(_run_ours(exchange), _expected(h11_reading), mutated=False)


@FUZZ
@given(mutated_exchanges())
def test_mutated_responses_are_refused_where_h11_refuses_them(exchange: Exchange) -> None:
    _assert_matches(_run_ours(exchange), _expected(_run_h11(exchange)), mutated=True)


# ---------------------------------------------------------------------------------------
# Requests: what send_request writes, read back by an h11 server.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "target", "headers", "body"),
    [
        (b"GET", b"/mcp", [(b"Host", b"example.com")], b""),
        (
            b"POST",
            b"/mcp?session=1&x=%20",
            [
                (b"host", b"example.com:8080"),
                (b"Content-Type", b"application/json"),
                (b"accept", b"application/json, text/event-stream"),
                (b"X-Empty", b""),
                (b"x-obs-text", b"\xe9t\xe9 a\tb"),
            ],
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        ),
        (b"DELETE", b"/mcp", [(b"host", b"h"), (b"mcp-session-id", b"abc")], b""),
        (b"PUT", b"http://example.com/a", [(b"HOST", b"example.com")], b"\x00\r\n" * 1000),
        (b"HEAD", b"*", [(b"host", b"h")], b""),
    ],
)
def test_send_request_reads_back_through_an_h11_server(
    method: bytes, target: bytes, headers: Fields, body: bytes
) -> None:
    data = ClientConnection().send_request(method, target, headers, body)
    request, read = shared.h11_server_reads(data)
    assert (request.method, request.target, request.http_version) == (method, target, b"1.1")
    expected = [(name.lower(), value) for name, value in headers]
    if body:
        expected.append((b"content-length", b"%d" % len(body)))
    assert shared.h11_fields(request) == expected
    assert read == body


@given(
    method=shared.tokens,
    target=shared.visible_targets,
    fields=st.lists(
        st.tuples(
            shared.RESPONSE_STREAMS.names.filter(lambda name: name.lower() != b"host"),
            st.lists(shared.words, max_size=3).map(b" ".join),
        ),
        max_size=4,
    ),
    body=st.binary(max_size=40),
)
@settings(max_examples=60, deadline=None)
def test_any_legal_request_reads_back_through_an_h11_server(
    method: bytes, target: bytes, fields: Fields, body: bytes
) -> None:
    headers = [(b"Host", b"example.com"), *fields]
    data = ClientConnection().send_request(method, target, headers, body)
    request, read = shared.h11_server_reads(data)
    assert (request.method, request.target, read) == (method, target, body)
    assert shared.h11_fields(request)[: len(headers)] == [(n.lower(), v) for n, v in headers]


def test_content_length_is_added_only_for_a_body() -> None:
    assert ClientConnection().send_request(b"GET", b"/", [(b"Host", b"x")]) == (
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert ClientConnection().send_request(b"POST", b"/", [(b"Host", b"x")], b"abc") == (
        b"POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 3\r\n\r\nabc"
    )


# (One value more than the server's test: a value that ends in CRLF.)
@pytest.mark.parametrize("value", [*shared.REFUSED_VALUES, b"a\r\n"])
def test_a_value_with_cr_lf_nul_or_outer_whitespace_is_refused(value: bytes) -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send_request(b"GET", b"/", [*shared.HOST, (b"x-value", value)])


@pytest.mark.parametrize("name", shared.NOT_TOKENS)
def test_a_name_that_is_not_a_token_is_refused(name: bytes) -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send_request(b"GET", b"/", [*shared.HOST, (name, b"v")])


@pytest.mark.parametrize(
    "field",
    [
        (b"content-length", b"3"),
        (b"Content-Length", b"3"),
        (b"transfer-encoding", b"chunked"),
        (b"Transfer-Encoding", b"chunked"),
    ],
)
def test_a_callers_content_length_or_transfer_encoding_is_refused(
    field: tuple[bytes, bytes],
) -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send_request(b"POST", b"/", [*shared.HOST, field], b"abc")


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param([], id="none"),
        pytest.param([(b"x-host", b"a")], id="other-name"),
        pytest.param([(b"host", b"a"), (b"host", b"a")], id="two"),
        pytest.param([(b"Host", b"a"), (b"host", b"b")], id="two-in-other-cases"),
    ],
)
def test_a_missing_or_second_host_is_refused(headers: Fields) -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send_request(b"GET", b"/", headers)


@pytest.mark.parametrize(
    ("method", "target"),
    [(b"", b"/"), (b"G T", b"/"), (b"GET\r\n", b"/"), (b"GET", b""), (b"GET", b"/a b")],
)
def test_a_malformed_request_line_is_refused(method: bytes, target: bytes) -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send_request(method, target, shared.HOST)


def test_a_refused_request_leaves_the_connection_unused() -> None:
    connection = ClientConnection()
    with pytest.raises(LocalProtocolError):
        connection.send_request(b"GET", b"/", [*shared.HOST, (b"x", b"a\nb")])
    with pytest.raises(LocalProtocolError):
        connection.send_request(b"GET", b"/", [])
    assert connection.send_request(b"GET", b"/", shared.HOST).startswith(b"GET / HTTP/1.1\r\n")


def test_a_second_request_before_start_next_cycle_is_refused() -> None:
    connection = ClientConnection()
    connection.send_request(b"GET", b"/", shared.HOST)
    with pytest.raises(LocalProtocolError):
        connection.send_request(b"GET", b"/", shared.HOST)
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    assert _events(connection)[-1] is END
    with pytest.raises(LocalProtocolError):  # complete, but no next cycle yet
        connection.send_request(b"GET", b"/", shared.HOST)


def test_start_next_cycle_before_the_response_is_complete_is_refused() -> None:
    connection = ClientConnection()
    with pytest.raises(LocalProtocolError):  # nothing sent
        connection.start_next_cycle()
    connection.send_request(b"GET", b"/", shared.HOST)
    with pytest.raises(LocalProtocolError):  # no response
        connection.start_next_cycle()
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\na")
    _events(connection)
    assert not connection.response_complete
    assert not connection.reusable
    with pytest.raises(LocalProtocolError):  # half a body
        connection.start_next_cycle()


# ---------------------------------------------------------------------------------------
# Responses.
# ---------------------------------------------------------------------------------------


def _events(connection: ClientConnection) -> list[object]:
    """Events up to NEED_DATA, PAUSED or CLOSED (not included)."""
    return shared.read_events(connection, shared.UNTIL_PAUSED_OR_CLOSED)


def _client(method: bytes = b"GET", headers: Fields = shared.HOST) -> ClientConnection:
    """A connection whose request was sent."""
    connection = ClientConnection()
    connection.send_request(method, b"/mcp", headers)
    return connection


def _fed(data: bytes, *, method: bytes, eof: bool) -> ClientConnection:
    """A connection that sent a `method` request and received `data` (then the EOF)."""
    connection = _client(method)
    connection.receive_data(data)
    if eof:
        connection.receive_data(b"")
    return connection


def _read(
    data: bytes, *, method: bytes = b"GET", eof: bool = False
) -> tuple[ClientConnection, list[object]]:
    """A connection that sent a `method` request and read `data` (then the EOF)."""
    connection = _fed(data, method=method, eof=eof)
    return connection, _events(connection)


def _progress(connection: ClientConnection) -> tuple[bool, bool]:
    """(response_complete, reusable)."""
    return connection.response_complete, connection.reusable


def _assert_no_next_exchange(connection: ClientConnection) -> None:
    """The exchange ends the connection: not kept alive, not reusable, no next cycle."""
    assert not connection.keep_alive
    assert not connection.reusable
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


def _refused(data: bytes, *, method: bytes = b"GET", eof: bool = False) -> None:
    connection = _fed(data, method=method, eof=eof)
    with pytest.raises(RemoteProtocolError):
        _events(connection)
    assert not connection.reusable


def _h11_refuses(data: bytes, *, method: bytes = b"GET") -> bool:
    """Whether an h11 client refuses `data` as the response to its `method` request."""
    h = shared.h11_client_after(method)
    h.receive_data(data)
    try:
        while not isinstance(h.next_event(), h11.EndOfMessage):
            pass
    except h11.RemoteProtocolError:
        return True
    return False


def _refused_as_h11_refuses_it(data: bytes) -> None:
    """Both refuse `data`: an h11 client, and ours (`_refused`)."""
    assert _h11_refuses(data)
    _refused(data)


def test_a_response_head_is_read_as_h11_reads_it() -> None:
    data = (
        b"HTTP/1.1 404 Not  Found \r\nContent-Type:  text/plain \t\r\nX-Fold: a\r\n  b\r\n"
        b"\tc \r\nX-Empty:\nContent-Length: 0\r\n\r\n"
    )
    connection, events = _read(data)
    response = events[0]
    assert isinstance(response, Response)
    assert (response.status, response.reason, response.http_version) == (
        404,
        b"Not  Found ",
        b"1.1",
    )
    fields = [
        (b"content-type", b"text/plain"),
        (b"x-fold", b"a b c"),
        (b"x-empty", b""),
        (b"content-length", b"0"),
    ]
    assert response.headers == fields
    assert events[1:] == [END]
    assert connection.reusable
    h = shared.h11_client_after(b"GET")
    h.receive_data(data)
    oracle = h.next_event()
    assert isinstance(oracle, h11.Response)
    assert (oracle.reason, shared.h11_fields(oracle)) == (b"Not  Found ", fields)


@pytest.mark.parametrize("status_line", [b"HTTP/1.1 200", b"HTTP/1.1 200 ", b"HTTP/1.0 200 OK"])
def test_a_reason_may_be_empty_or_missing(status_line: bytes) -> None:
    _, events = _read(status_line + b"\r\ncontent-length: 0\r\n\r\n")
    response = events[0]
    assert isinstance(response, Response)
    assert response.status == 200
    assert response.reason == status_line[13:]


def test_a_head_response_with_content_length_has_no_body() -> None:
    next_response = b"HTTP/1.1 204 No Content\r\n\r\n"
    connection, events = _read(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + next_response, method=b"HEAD"
    )
    assert isinstance(events[0], Response)
    assert events[1:] == [END]
    assert connection.reusable
    assert connection.trailing_data == next_response  # not taken for a body


def test_a_head_response_that_says_chunked_has_no_body() -> None:
    connection, events = _read(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", method=b"HEAD"
    )
    assert events[1:] == [END]
    assert connection.reusable


@pytest.mark.parametrize("status", [204, 304])
@pytest.mark.parametrize(
    "framing", [b"", b"Content-Length: 5\r\n", b"Transfer-Encoding: chunked\r\n"]
)
def test_204_and_304_have_no_body(status: int, framing: bytes) -> None:
    connection, events = _read(b"HTTP/1.1 %d X\r\n%b\r\nhello" % (status, framing))
    response = events[0]
    assert isinstance(response, Response)
    assert response.status == status
    assert events[1:] == [END]
    assert connection.reusable
    assert connection.trailing_data == b"hello"


def test_a_chunked_body_is_dechunked_and_its_trailers_dropped() -> None:
    connection, events = _read(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n" + shared.CHUNKED_HELLO
    )
    assert shared.joined_body(events) == shared.CHUNKED_HELLO_BODY
    assert events[-1] is END
    assert connection.reusable


def test_a_response_split_byte_by_byte_reads_as_a_whole() -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    connection = _client()
    response = shared.chunked_abc_byte_by_byte(connection, head, shared.UNTIL_PAUSED_OR_CLOSED)
    assert isinstance(response, Response)
    assert connection.reusable


def test_a_close_delimited_body_ends_at_eof_and_the_connection_is_not_reusable() -> None:
    connection, events = _read(b"HTTP/1.1 200 OK\r\n\r\nhello")
    assert shared.joined_body(events) == b"hello"
    assert END not in events  # only the EOF ends it
    assert _progress(connection) == (False, False)
    connection.receive_data(b" world")
    connection.receive_data(b"")
    events = _events(connection)
    assert (shared.joined_body(events), events[-1]) == (b" world", END)
    assert _progress(connection) == (True, False)
    _assert_no_next_exchange(connection)


def test_an_empty_close_delimited_body_ends_at_eof() -> None:
    connection, events = _read(b"HTTP/1.1 200 OK\r\n\r\n", eof=True)
    assert events[1:] == [END]
    assert not connection.reusable


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc", id="short-length"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", id="mid-chunk"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n",
            id="no-last-chunk",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n",
            id="mid-trailers",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Le", id="mid-head"),
        pytest.param(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2", id="mid-final-head"),
    ],
)
def test_eof_in_the_middle_of_a_message_is_a_remote_protocol_error(data: bytes) -> None:
    _refused(data, eof=True)


def test_eof_before_any_response_is_closed() -> None:
    connection = _client()
    connection.receive_data(b"")
    assert connection.next_event() is CLOSED
    assert connection.next_event() is CLOSED
    assert not connection.reusable


def test_eof_between_exchanges_is_closed() -> None:
    connection, events = _read(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
    assert events[-1] is END
    connection.start_next_cycle()
    connection.receive_data(b"")  # the server closed the idle connection
    assert connection.next_event() is CLOSED
    assert not connection.reusable
    connection.send_request(b"GET", b"/", shared.HOST)  # (it goes nowhere: the driver knows)
    assert connection.next_event() is CLOSED


@pytest.mark.parametrize(
    ("version", "fields"),
    [
        pytest.param(b"1.1", b"Connection: close\r\n", id="close"),
        pytest.param(b"1.1", b"connection: Close\r\n", id="close-any-case"),
        pytest.param(b"1.1", b"Connection: keep-alive, close\r\n", id="close-in-list"),
        pytest.param(b"1.1", b"Connection: a\r\nConnection: close\r\n", id="2-fields"),
        pytest.param(b"1.0", b"", id="http10"),
        pytest.param(b"1.0", b"Connection: keep-alive\r\n", id="http10-keep-alive"),
    ],
)
def test_connection_close_or_http10_makes_the_connection_not_reusable(
    version: bytes, fields: bytes
) -> None:
    head = b"HTTP/" + version + b" 200 OK\r\n" + fields
    connection, events = _read(head + b"Content-Length: 2\r\n\r\nok")
    assert (shared.joined_body(events), events[-1]) == (b"ok", END)
    assert connection.response_complete
    _assert_no_next_exchange(connection)


def test_a_response_with_other_connection_options_leaves_it_reusable() -> None:
    connection, _ = _read(
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, te\r\nContent-Length: 0\r\n\r\n"
    )
    assert connection.reusable


def test_a_request_with_connection_close_makes_the_connection_not_reusable() -> None:
    # API document: `reusable` needs "no `Connection: close` from either side"; h11 too.
    connection = _client(headers=[*shared.HOST, (b"Connection", b"close")])
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    assert _events(connection)[-1] is END
    _assert_no_next_exchange(connection)


def test_send_failed_makes_the_connection_not_reusable() -> None:
    connection = _client()
    connection.send_failed()
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    assert _events(connection)[-1] is END
    assert connection.response_complete
    _assert_no_next_exchange(connection)


def test_a_100_continue_then_the_final_response_are_both_returned() -> None:
    connection, events = _read(
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    )
    heads_ = [event for event in events if isinstance(event, Response)]
    assert [(head.status, head.reason) for head in heads_] == [
        (100, b"Continue"),
        (103, b"Early Hints"),
        (200, b"OK"),
    ]
    assert heads_[1].headers == [(b"link", b"</a.css>; rel=preload")]
    assert (shared.joined_body(events), events[-1]) == (b"ok", END)
    assert connection.reusable


def test_an_interim_response_alone_is_not_the_end() -> None:
    connection, events = _read(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert len(events) == 1
    assert isinstance(events[0], Response)
    assert connection.next_event() is NEED_DATA
    assert not connection.response_complete
    assert not connection.reusable


def test_an_interim_response_with_connection_close_does_not_end_keep_alive() -> None:
    # (h11 too: only the final response's Connection field counts.)
    connection, events = _read(
        b"HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    )
    assert events[-1] is END
    assert connection.reusable


@pytest.mark.parametrize("status", [b"000", b"050", b"099"])
def test_a_status_below_100_is_refused_as_h11_refuses_it(status: bytes) -> None:
    data = b"HTTP/1.1 " + status + b" X\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    _refused_as_h11_refuses_it(data)


def test_an_unsolicited_101_is_refused_as_h11_refuses_it() -> None:
    # RFC 9110 §7.8: no switch the request did not propose (it had no Upgrade); what
    # follows a 101 is another protocol, never the final response's head.
    data = b"HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    _refused_as_h11_refuses_it(data)


@pytest.mark.parametrize(
    "field",
    [b"Content-Length: x", b"Content-Length: 1, 2", b"Transfer-Encoding: gzip"],
)
def test_an_interim_response_with_bad_framing_fields_is_refused_as_h11_refuses_it(
    field: bytes,
) -> None:
    data = b"HTTP/1.1 100 Continue\r\n" + field + b"\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    _refused_as_h11_refuses_it(data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            id="content-length-and-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 204 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            id="content-length-and-chunked-bodiless",
        ),
        pytest.param(b"HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", id="http20"),
        pytest.param(b"HTTP/1.2 100 Continue\r\n\r\n", id="http12-interim"),
    ],
)
def test_what_h11_reads_and_ours_refuses_by_design(data: bytes) -> None:
    assert not _h11_refuses(data + b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    _refused(data)


@pytest.mark.parametrize(
    "data",
    [
        # The framing.
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", id="gzip"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", id="cl"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", id="signed-length"),
        *shared.chunk_faults(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        # The fields.
        pytest.param(b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", id="space-in-name"),
        pytest.param(b"HTTP/1.1 200 OK\r\n Fold: x\r\n\r\n", id="fold-first"),
        # The status line.
        pytest.param(b"HTTP/1.1 20 OK\r\n\r\n", id="two-digit-status"),
        *shared.start_line_faults(b"HTTP/1.1 200 OK\r\n\r\n"),
    ],
)
def test_malformed_responses_are_refused(data: bytes) -> None:
    _refused_as_h11_refuses_it(data)


def test_an_incomplete_head_past_max_head_size_is_refused() -> None:
    connection = ClientConnection(max_head_size=64)
    connection.send_request(b"GET", b"/", shared.HOST)
    shared.head_past_the_limit(connection, b"HTTP/1.1 200 OK\r\nX-Filler: ", 64)
    assert not connection.reusable


def test_a_body_past_max_head_size_is_not_a_head() -> None:
    body = b"b" * 500
    connection = ClientConnection(max_head_size=64)
    connection.send_request(b"GET", b"/", shared.HOST)
    connection.receive_data(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + body)
    events = _events(connection)
    assert (shared.joined_body(events), events[-1]) == (body, END)


def test_after_an_error_every_next_event_raises_again() -> None:
    connection = _client()
    connection.receive_data(b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n")
    with pytest.raises(RemoteProtocolError):
        connection.next_event()
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")  # no way back
    connection.receive_data(b"")
    for _ in range(3):
        with pytest.raises(RemoteProtocolError):
            connection.next_event()
    _assert_no_next_exchange(connection)


# ---------------------------------------------------------------------------------------
# Two exchanges on one connection.
# ---------------------------------------------------------------------------------------

FIRST = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
SECOND = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nsecond\r\n0\r\n\r\n"


def test_two_exchanges_back_to_back_with_start_next_cycle_between() -> None:
    connection = ClientConnection()
    assert connection.send_request(b"POST", b"/a", shared.HOST, b"one").startswith(b"POST /a ")
    connection.receive_data(FIRST)
    events = _events(connection)
    assert (shared.joined_body(events), events[-1]) == (b"first", END)
    assert _progress(connection) == (True, True)
    connection.start_next_cycle()
    assert _progress(connection) == (False, False)
    assert connection.send_request(b"GET", b"/b", shared.HOST).startswith(b"GET /b ")
    connection.receive_data(SECOND)
    events = _events(connection)
    assert isinstance(events[0], Response)
    assert events[0].status == 201
    assert (shared.joined_body(events), events[-1]) == (b"second", END)
    assert connection.reusable


def test_a_head_exchange_then_a_get_on_one_connection() -> None:
    # The second response has a body although the first (to HEAD) had none.
    connection = _client(b"HEAD")
    connection.receive_data(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
    assert _events(connection)[1:] == [END]
    connection.start_next_cycle()
    connection.send_request(b"GET", b"/", shared.HOST)
    connection.receive_data(FIRST)
    assert shared.joined_body(_events(connection)) == b"first"


def test_pipelined_bytes_of_the_next_response_wait_in_trailing_data() -> None:
    connection = _client()
    connection.receive_data(FIRST + SECOND)
    events = _events(connection)
    assert (shared.joined_body(events), events[-1]) == (b"first", END)
    for _ in range(2):  # and it stays paused
        assert connection.next_event() is PAUSED
        assert connection.trailing_data == SECOND
    connection.start_next_cycle()
    assert connection.trailing_data == SECOND  # parsed only once asked for
    connection.send_request(b"GET", b"/b", shared.HOST)
    events = _events(connection)
    assert (shared.joined_body(events), events[-1]) == (b"second", END)
    assert connection.trailing_data == b""
