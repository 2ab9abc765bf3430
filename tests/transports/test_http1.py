"""`transports._net.http1` reads requests as h11 does and frames responses h11 can read.

The parser is held to h11 (the server role) as an oracle: well-formed request streams
(any method, target, fields, folded lines, bare-LF line ends, bodies with a
``Content-Length`` or chunked, one to three pipelined, cut into pieces anywhere) give
the same requests, bodies and keep-alive decisions; mutated streams (bytes inserted,
deleted, replaced) are refused by both at the same message, or by neither. The only
differences are the two its API names ("Stricter than h11, on purpose", in the module's
docstring too): ``Content-Length`` with ``Transfer-Encoding``, and HTTP versions other
than 1.0/1.1, are refused. What the module writes (whole responses, HEAD answers,
streamed bodies chunked or close-delimited, refusals before any request) is read back by
an h11 client. The unit tests pin the rest of the API: keep-alive, pipelining, sizes,
status hints, 100-continue, and what may not be sent.
"""

from __future__ import annotations

import h11
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.transports import http1_strategies as shared
from tests.transports.http1_strategies import Fields, Step
from transports._net.http1 import (
    END,
    NEED_DATA,
    PAUSED,
    Data,
    EndOfMessage,
    LocalProtocolError,
    RemoteProtocolError,
    Request,
    ServerConnection,
)

# A parser's output, normalised (`Step`): ("request", method, target, fields, version),
# ("data", bytes) (every piece of one message joined), ("end",), ("keep_alive", bool)
# (after the response: is the next cycle started), ("error", status hints).

FUZZ = shared.fuzz(max_examples=300)

# ---------------------------------------------------------------------------------------
# Request streams: well-formed ones (h11 reads them without an error), then mutated ones.
# (The grammar's pieces are `http1_strategies`'; `REQUEST_STREAMS` names what these
# streams draw their own way.)
# ---------------------------------------------------------------------------------------

# CONNECT is left out: h11 takes a 200 to it as a switch of protocols.
methods = st.sampled_from(
    [b"GET", b"POST", b"PUT", b"HEAD", b"DELETE", b"OPTIONS"]
) | shared.tokens.filter(lambda method: method != b"CONNECT")
targets = (
    st.sampled_from([b"/", b"*", b"/mcp?session=1&x=%20", b"http://example.com/a"])
    | shared.visible_targets
)


@st.composite
def framed_bodies(draw: st.DrawFn, quirk: str | None) -> tuple[list[list[bytes]], bytes]:
    """A body and its framing fields: none, a Content-Length, or chunked."""
    framing = draw(st.sampled_from(["none", "length", "chunked"]))
    if quirk == "content-length+chunked":
        framing = "chunked"
    if framing == "none":
        return [], b""
    body = draw(st.binary(max_size=40))
    return draw(
        shared.framed_payloads(
            body, chunked=framing == "chunked", quirk=quirk, side=shared.REQUEST_STREAMS
        )
    )


@st.composite
def requests(draw: st.DrawFn) -> bytes:
    """One well-formed request, or one with a quirk h11 accepts and we refuse by design."""
    quirk = draw(shared.quirks)
    version = draw(shared.versions)
    if quirk == "version":
        version = draw(shared.unsupported_versions)
    fields: list[list[bytes]] = []
    if version == b"1.1" or draw(st.booleans()):
        fields.append(draw(shared.field_lines(b"host", [draw(shared.words)])))
    fields += draw(shared.ordinary_fields(shared.REQUEST_STREAMS))
    framing, body = draw(framed_bodies(quirk))
    fields += framing
    if draw(st.booleans()):
        fields.append(draw(shared.connection_fields()))
    if draw(st.integers(0, 5)) == 0:
        fields.append(draw(shared.field_lines(b"expect", [b"100-continue"])))
    start_line = draw(methods) + b" " + draw(targets) + b" HTTP/" + version
    return draw(shared.heads(start_line, fields)) + body


#: One to three pipelined requests, as one stream.
pipelined = st.lists(requests(), min_size=1, max_size=3).map(b"".join)


@st.composite
def well_formed_streams(draw: st.DrawFn) -> list[bytes]:
    """One to three pipelined requests, as the `receive_data` pieces that carry them."""
    return shared.cut(draw, draw(pipelined), 6)


@st.composite
def hostile_streams(draw: st.DrawFn) -> list[bytes]:
    """A well-formed stream with one to three bytes inserted, deleted or replaced."""
    return shared.cut(draw, shared.mutate(draw, draw(pipelined), shared.REQUEST_STREAMS), 6)


# ---------------------------------------------------------------------------------------
# Both parsers driven the same way, their events normalised.
# ---------------------------------------------------------------------------------------


def _run_h11(pieces: list[bytes]) -> list[Step]:
    """h11's reading: a minimal response after each message, then its next cycle if due."""
    h = h11.Connection(h11.SERVER)
    steps: list[Step] = []
    try:
        for piece in pieces:
            h.receive_data(piece)
            while (event := h.next_event()) is not h11.NEED_DATA:
                if isinstance(event, h11.Request):
                    fields = _framing_canonical(shared.h11_fields(event))
                    steps.append(
                        ("request", event.method, event.target, fields, event.http_version)
                    )
                elif isinstance(event, h11.Data):
                    shared.add_data(steps, bytes(event.data))
                else:
                    assert isinstance(event, h11.EndOfMessage), event
                    steps.append(("end",))
                    h.send(h11.Response(status_code=200, headers=[(b"content-length", b"0")]))
                    h.send(h11.EndOfMessage())
                    keep_alive = h.our_state is h11.DONE and h.their_state is h11.DONE
                    steps.append(("keep_alive", keep_alive))
                    if not keep_alive:
                        return steps
                    h.start_next_cycle()
    except h11.RemoteProtocolError as error:
        steps.append(("error", frozenset({error.error_status_hint})))
    return steps


def _run_ours(pieces: list[bytes]) -> list[Step]:
    """Our reading, driven as `_run_h11` drives h11 (PAUSED checked after each END)."""
    connection = ServerConnection()
    steps: list[Step] = []
    try:
        for piece in pieces:
            connection.receive_data(piece)
            while (event := connection.next_event()) is not NEED_DATA:
                if isinstance(event, Request):
                    fields = _framing_canonical(list(event.headers))
                    steps.append(
                        ("request", event.method, event.target, fields, event.http_version)
                    )
                elif isinstance(event, Data):
                    shared.add_data(steps, event.data)
                else:
                    assert event is END, event
                    steps.append(("end",))
                    assert connection.next_event() is PAUSED
                    connection.send_response(200, [])
                    steps.append(("keep_alive", connection.keep_alive))
                    if not connection.keep_alive:
                        return steps
                    connection.start_next_cycle()
    except RemoteProtocolError as error:
        steps.append(("error", error.error_status_hint))
        with pytest.raises(RemoteProtocolError):  # the connection stays dead
            connection.next_event()
    return steps


def _framing_canonical(fields: Fields) -> Fields:
    """Fields with the framing values in h11's canonical form (no-op on h11's own).

    h11 keeps one ``content-length`` of equal repeated or listed values and lower-cases
    ``transfer-encoding``; the API document does not say whether ours does. The fuzzers
    compare everything else; two unit tests below hold ours to h11's form.
    """
    canonical: Fields = []
    for name, value in fields:
        if name == b"content-length":
            if all(seen != name for seen, _ in canonical):
                # (all the values are equal: the parser checked)
                canonical.append((name, value.split(b",")[0].strip()))
        elif name == b"transfer-encoding":
            canonical.append((name, value.lower()))
        else:
            canonical.append((name, value))
    return canonical


def _refusal_by_design(step: Step) -> frozenset[int]:
    """The status hints we refuse a request h11 accepts with (none: we accept it too)."""
    _, _, _, fields, version = step
    assert isinstance(fields, list)
    names = {name for name, _ in fields}
    hints: set[int] = set()
    # API document: "Content-Length together with Transfer-Encoding is rejected (400)":
    # h11 accepts the pair and lets chunked win; we refuse it (RFC 9112 §6.1, smuggling).
    if b"content-length" in names and b"transfer-encoding" in names:
        hints.add(400)
    # API document: 505 for an HTTP version other than 1.0/1.1; h11 reads any d.d.
    if version not in (b"1.0", b"1.1"):
        hints.add(505)
    return frozenset(hints)


def _expected(h11_steps: list[Step]) -> list[Step]:
    """h11's steps, cut at the first request we refuse by design (with its hints)."""
    expected: list[Step] = []
    for step in h11_steps:
        if step[0] == "request" and (hints := _refusal_by_design(step)):
            expected.append(("error", hints))
            break
        expected.append(step)
    return expected


def _split_tail(steps: list[Step]) -> tuple[list[Step], list[Step]]:
    """The finished cycles, and the rest: a message the input cut short, or an error."""
    done = max(
        (index + 1 for index, step in enumerate(steps) if step[0] == "keep_alive"), default=0
    )
    return steps[:done], steps[done:]


def _tail_parts(tail: list[Step]) -> tuple[Step | None, bytes, object]:
    """A tail as (request step or None, body bytes so far, error hint(s) or None)."""
    request: Step | None = None
    data = b""
    error: object = None
    for step in tail:
        if step[0] == "request":
            request = step
        elif step[0] == "data":
            assert isinstance(step[1], bytes)
            data = step[1]
        else:
            assert step[0] == "error", tail
            error = step[1]
    return request, data, error


def _assert_matches(ours: list[Step], expected: list[Step], *, hostile: bool) -> None:
    """Our steps against h11's (as `_expected` cuts them), message by message."""
    our_done, our_tail = _split_tail(ours)
    expected_done, expected_tail = _split_tail(expected)
    assert our_done == expected_done, (ours, expected)
    our_request, our_data, our_error = _tail_parts(our_tail)
    expected_request, expected_data, expected_error = _tail_parts(expected_tail)
    # A head both read, or neither: an error in a complete head is found by both.
    assert our_request == expected_request, (ours, expected)
    if not hostile:
        # Whole messages: the same body, and the same refusal with the same status.
        assert our_data == expected_data, (ours, expected)
        assert (our_error is None) == (expected_error is None), (ours, expected)
        if our_error is not None:
            assert isinstance(expected_error, frozenset)
            assert our_error in expected_error, (ours, expected)
        return
    # Hostile input may end inside a message: the API promises no eagerness, so either
    # parser may hold back body bytes (one body is a prefix of the other), and either may
    # refuse early what the other still waits on (h11 refuses a head whose first byte is
    # below 0x21, or a chunk's broken CRLF, a byte at a time).
    if our_error is not None and expected_error is not None:
        assert isinstance(expected_error, frozenset)
        # The API does not order its checks, so a request with two faults may earn the
        # status of either: ours may see a bad version (505), or Content-Length with
        # Transfer-Encoding (400), before what h11 saw (h11 refuses `gzip` with 501
        # before it could see the pair); any other status must be h11's.
        allowed = expected_error | {505} | ({400} if expected_error == {501} else set())
        assert our_error in allowed, (ours, expected)
    assert our_data.startswith(expected_data) or expected_data.startswith(our_data), (
        ours,
        expected,
    )


@FUZZ
@given(well_formed_streams())
def test_well_formed_streams_read_as_h11_reads_them(pieces: list[bytes]) -> None:
    h11_steps = _run_h11(pieces)
    assert h11_steps[-1][0] != "error", h11_steps  # the generator writes valid HTTP
    _assert_matches(_run_ours(pieces), _expected(h11_steps), hostile=False)


@FUZZ
@given(hostile_streams())
def test_mutated_streams_are_refused_at_the_message_h11_refuses(pieces: list[bytes]) -> None:
    _assert_matches(_run_ours(pieces), _expected(_run_h11(pieces)), hostile=True)


# ---------------------------------------------------------------------------------------
# Unit tests.
# ---------------------------------------------------------------------------------------

GET = b"GET /mcp HTTP/1.1\r\nHost: example.com\r\n\r\n"


def _events(connection: ServerConnection) -> list[object]:
    """Events up to NEED_DATA or PAUSED (not included)."""
    return shared.read_events(connection, shared.UNTIL_PAUSED)


def _connection(data: bytes, **options: int) -> ServerConnection:
    """A connection that has received `data` and parsed what it could."""
    connection = ServerConnection(**options)
    connection.receive_data(data)
    _events(connection)
    return connection


def _connection_with(data: bytes) -> ServerConnection:
    """A connection that has received `data` (nothing parsed yet)."""
    connection = ServerConnection()
    connection.receive_data(data)
    return connection


def _refused(data: bytes, **options: int) -> RemoteProtocolError:
    connection = ServerConnection(**options)
    connection.receive_data(data)
    with pytest.raises(RemoteProtocolError) as caught:
        _events(connection)
    return caught.value


def _read_back(
    response: bytes, *, method: bytes = b"GET", eof: bool = False
) -> tuple[h11.Response, bytes, bool]:
    """An h11 client's reading of `response` to a `method` request it sent itself.

    Returns the response, its body, and whether the message ended.
    """
    client = shared.h11_client_after(method)
    client.receive_data(response)
    if eof:
        client.receive_data(b"")
    head = client.next_event()
    assert isinstance(head, h11.Response), head
    body = b""
    while True:
        event = client.next_event()
        if isinstance(event, h11.Data):
            body += bytes(event.data)
            continue
        return head, body, isinstance(event, h11.EndOfMessage)


# Keep-alive.


def test_http11_request_is_kept_alive_and_the_next_cycle_starts() -> None:
    connection = _connection(GET)
    assert connection.keep_alive
    response, _, ended = _read_back(connection.send_response(200, []))
    assert ended
    assert (b"connection", b"close") not in shared.h11_fields(response)
    assert connection.keep_alive
    connection.start_next_cycle()
    connection.receive_data(GET)
    assert isinstance(connection.next_event(), Request)


def test_http10_request_is_not_kept_alive() -> None:
    connection = _connection(b"GET / HTTP/1.0\r\n\r\n")
    assert connection.http_version == b"1.0"
    assert not connection.keep_alive
    response, _, _ = _read_back(connection.send_response(200, []))
    assert (b"connection", b"close") in shared.h11_fields(response)
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


@pytest.mark.parametrize("value", [b"close", b"Close", b"keep-alive, CLOSE"])
def test_connection_close_request_is_not_kept_alive(value: bytes) -> None:
    connection = _connection(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: " + value + b"\r\n\r\n")
    assert not connection.keep_alive
    response, _, _ = _read_back(connection.send_response(200, []))
    assert (b"connection", b"close") in shared.h11_fields(response)
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


def test_close_true_on_the_response_ends_keep_alive() -> None:
    connection = _connection(GET)
    response, body, ended = _read_back(connection.send_response(200, [], b"bye", close=True))
    assert (body, ended) == (b"bye", True)
    assert (b"connection", b"close") in shared.h11_fields(response)
    assert not connection.keep_alive
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


# Pipelining.


def test_pipelined_requests_come_one_at_a_time_with_paused_between() -> None:
    first = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
    second = b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
    third = b"GET /c HTTP/1.1\r\nHost: x\r\n\r\n"
    connection = ServerConnection()
    connection.receive_data(first + second + third)
    events = _events(connection)
    assert isinstance(events[0], Request)
    assert events[0].target == b"/a"
    assert shared.joined_body(events) == b"abc"
    assert events[-1] is END
    assert connection.request_complete
    for _ in range(2):  # and it stays paused
        assert connection.next_event() is PAUSED
        assert connection.trailing_data == second + third
    with pytest.raises(LocalProtocolError):  # no response yet
        connection.start_next_cycle()
    connection.send_response(200, [])
    connection.start_next_cycle()
    events = _events(connection)
    assert isinstance(events[0], Request)
    assert events[0].target == b"/b"
    assert events[1:] == [END]
    assert connection.next_event() is PAUSED
    assert connection.trailing_data == third


def test_a_request_split_byte_by_byte_reads_as_a_whole() -> None:
    head = b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    connection = ServerConnection()
    request = shared.chunked_abc_byte_by_byte(connection, head, shared.UNTIL_PAUSED)
    assert isinstance(request, Request)
    assert connection.trailing_data == b""


# What a request looks like.


def _read_by_both(data: bytes) -> tuple[Request, Fields]:
    """Our head of the whole request `data`, and the fields an h11 server reads in it."""
    request = _connection_with(data).next_event()
    assert isinstance(request, Request)
    oracle, _ = shared.h11_server_reads(data)
    return request, shared.h11_fields(oracle)


def test_request_fields_are_lower_cased_stripped_and_unfolded_as_h11_does() -> None:
    request, oracle = _read_by_both(
        b"PUT /p?q=1 HTTP/1.1\r\nHOST:  example.com \t\r\nX-Fold: a\r\n  b\r\n\tc \r\n"
        b"X-Empty:\r\nContent-Length: 0\r\n\r\n"
    )
    assert (request.method, request.target, request.http_version) == (b"PUT", b"/p?q=1", b"1.1")
    fields = [
        (b"host", b"example.com"),
        (b"x-fold", b"a b c"),
        (b"x-empty", b""),
        (b"content-length", b"0"),
    ]
    assert list(request.headers) == fields
    assert oracle == fields


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param(b"Content-Length: 3\r\nContent-Length: 3\r\n", id="repeated"),
        pytest.param(b"Content-Length: 3, 3\r\n", id="listed"),
        pytest.param(b"Content-Length: 3,3\r\nContent-Length: 3\r\n", id="both"),
    ],
)
def test_equal_content_lengths_are_collapsed_to_one_as_h11_does(fields: bytes) -> None:
    # h11 hands its server one `content-length: 3`; a caller that reads the field with
    # int() (`server_connection._content_length`) must not meet "3, 3".
    request, oracle = _read_by_both(b"POST / HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\nabc")
    assert list(request.headers) == [(b"host", b"x"), (b"content-length", b"3")]
    assert oracle == list(request.headers)


def test_the_transfer_coding_is_lower_cased_as_h11_does() -> None:
    request, oracle = _read_by_both(
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n"
    )
    assert list(request.headers) == [(b"host", b"x"), (b"transfer-encoding", b"chunked")]
    assert oracle == list(request.headers)


def test_bare_lf_line_ends_are_accepted() -> None:
    connection = ServerConnection()
    connection.receive_data(b"GET / HTTP/1.1\nHost: x\n\n")
    events = _events(connection)
    assert isinstance(events[0], Request)
    assert events[1:] == [END]


def test_a_chunked_body_is_dechunked_and_its_trailers_dropped() -> None:
    connection = ServerConnection()
    connection.receive_data(
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n" + shared.CHUNKED_HELLO
    )
    events = _events(connection)
    assert shared.joined_body(events) == shared.CHUNKED_HELLO_BODY
    assert events[-1] is END
    assert isinstance(END, EndOfMessage)
    assert connection.next_event() is PAUSED


def test_request_method_and_version_are_known_from_the_head() -> None:
    connection = ServerConnection()
    assert (connection.request_method, connection.http_version) == (b"", b"1.1")
    connection.receive_data(b"HEAD / HTTP/1.0\r\n\r\n")
    _events(connection)
    assert (connection.request_method, connection.http_version) == (b"HEAD", b"1.0")


def _progress(connection: ServerConnection) -> tuple[bool, bool, bool]:
    """(request_complete, response_started, response_complete)."""
    return (connection.request_complete, connection.response_started, connection.response_complete)


def test_request_and_response_progress_flags() -> None:
    connection = ServerConnection()
    connection.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\na")
    _events(connection)
    assert _progress(connection) == (False, False, False)
    connection.receive_data(b"b")
    _events(connection)
    assert _progress(connection) == (True, False, False)
    connection.send_stream_head(200, [])
    assert _progress(connection) == (True, True, False)
    connection.send_end()
    assert _progress(connection) == (True, True, True)
    connection.start_next_cycle()
    assert _progress(connection) == (False, False, False)


# Responses, read back by an h11 client.


@pytest.mark.parametrize(
    ("status", "fields", "body"),
    [
        (200, [(b"content-type", b"application/json")], b'{"jsonrpc":"2.0"}'),
        (202, [], b""),
        (404, [(b"x-one", b"a b"), (b"x-two", b"\xe9t\xe9")], b"not here"),
        (500, [(b"mcp-session-id", b"abc")], b"x" * 70_000),
    ],
)
def test_send_response_reads_back_through_an_h11_client(
    status: int, fields: Fields, body: bytes
) -> None:
    connection = _connection(GET)
    response, read, ended = _read_back(connection.send_response(status, fields, body))
    assert (response.status_code, read, ended) == (status, body, True)
    assert response.reason
    got = shared.h11_fields(response)
    assert got[: len(fields)] == fields
    assert sorted(got[len(fields) :]) == [(b"content-length", b"%d" % len(body))]
    assert connection.response_complete


def test_head_response_carries_content_length_but_no_body() -> None:
    connection = _connection(b"HEAD /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
    data = connection.send_response(200, [(b"content-type", b"text/plain")], b"hello")
    assert data.endswith(b"\r\n\r\n")
    assert b"hello" not in data
    response, body, ended = _read_back(data, method=b"HEAD")
    assert (body, ended) == (b"", True)
    assert (b"content-length", b"5") in shared.h11_fields(response)


def test_stream_head_is_chunked_for_http11_and_reads_back() -> None:
    connection = _connection(GET)
    data = connection.send_stream_head(200, [(b"content-type", b"text/event-stream")])
    assert connection.send_data(b"") == b""
    pieces = [connection.send_data(b"hello "), connection.send_data(b"world")]
    assert pieces == [b"6\r\nhello \r\n", b"5\r\nworld\r\n"]
    end = connection.send_end()
    assert end == b"0\r\n\r\n"
    response, body, ended = _read_back(data + b"".join(pieces) + end)
    assert (b"transfer-encoding", b"chunked") in shared.h11_fields(response)
    assert (body, ended) == (b"hello world", True)
    assert connection.keep_alive
    connection.start_next_cycle()


def test_stream_head_is_close_delimited_for_http10_and_reads_back() -> None:
    connection = _connection(b"GET /mcp HTTP/1.0\r\n\r\n")
    data = connection.send_stream_head(200, [(b"content-type", b"text/event-stream")])
    piece = connection.send_data(b"hello")
    assert piece == b"hello"  # raw: no chunk framing for HTTP/1.0
    end = connection.send_end()
    assert end == b""
    assert not connection.keep_alive
    # h11 sends only HTTP/1.1 requests: its request only tells it the method; it reads
    # the body up to EOF, as HTTP/1.0 framing says.
    response, body, ended = _read_back(data + piece + end, eof=True)
    names = {name for name, _ in shared.h11_fields(response)}
    assert not names & {b"content-length", b"transfer-encoding"}
    assert (body, ended) == (b"hello", True)


def test_send_continue_is_a_bare_100() -> None:
    connection = _connection(
        b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"
    )
    assert connection.send_continue() == b"HTTP/1.1 100 Continue\r\n\r\n"


@pytest.mark.parametrize("status", [400, 408, 431, 503])
def test_a_refusal_before_any_request_is_allowed_and_closes(status: int) -> None:
    connection = ServerConnection()
    connection.receive_data(b"GET / HT")  # a head that never completes, or nothing at all
    data = connection.send_response(status, [])
    response, body, ended = _read_back(data)
    assert (response.status_code, body, ended) == (status, b"", True)
    assert (b"connection", b"close") in shared.h11_fields(response)
    assert not connection.keep_alive
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


def test_a_refusal_after_a_protocol_error_closes() -> None:
    connection = ServerConnection()
    connection.receive_data(b"GET / HTTP/1.1\r\n\r\n")  # no Host
    with pytest.raises(RemoteProtocolError):
        connection.next_event()
    assert not connection.keep_alive
    response, _, _ = _read_back(connection.send_response(400, []))
    assert (b"connection", b"close") in shared.h11_fields(response)


# What may not be sent.


@pytest.mark.parametrize("value", shared.REFUSED_VALUES)
def test_a_field_value_with_cr_lf_nul_or_outer_whitespace_is_refused(value: bytes) -> None:
    connection = _connection(GET)
    with pytest.raises(LocalProtocolError):
        connection.send_response(200, [(b"x-value", value)])
    with pytest.raises(LocalProtocolError):
        connection.send_stream_head(200, [(b"x-value", value)])


@pytest.mark.parametrize("name", shared.NOT_TOKENS)
def test_a_field_name_that_is_not_a_token_is_refused(name: bytes) -> None:
    connection = _connection(GET)
    with pytest.raises(LocalProtocolError):
        connection.send_response(200, [(name, b"v")])


def test_a_second_response_is_refused() -> None:
    connection = _connection(GET)
    connection.send_response(200, [])
    with pytest.raises(LocalProtocolError):
        connection.send_response(200, [])
    with pytest.raises(LocalProtocolError):
        connection.send_stream_head(200, [])


def test_a_whole_response_after_a_stream_head_is_refused() -> None:
    connection = _connection(GET)
    connection.send_stream_head(200, [])
    with pytest.raises(LocalProtocolError):
        connection.send_response(200, [])


def test_data_without_a_stream_is_refused() -> None:
    connection = _connection(GET)
    with pytest.raises(LocalProtocolError):
        connection.send_data(b"x")
    connection.send_response(200, [])
    with pytest.raises(LocalProtocolError):
        connection.send_data(b"x")


def test_data_after_the_stream_ended_is_refused() -> None:
    connection = _connection(GET)
    connection.send_stream_head(200, [])
    connection.send_end()
    with pytest.raises(LocalProtocolError):
        connection.send_data(b"x")


def test_next_cycle_before_the_request_body_is_complete_is_refused() -> None:
    connection = _connection(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
    connection.send_response(413, [])
    with pytest.raises(LocalProtocolError):
        connection.start_next_cycle()


# Refusals: sizes and status hints.


def test_an_incomplete_head_past_max_head_size_is_431() -> None:
    connection = ServerConnection(max_head_size=64)
    error = shared.head_past_the_limit(connection, b"GET / HTTP/1.1\r\nHost: x\r\nX-Filler: ", 64)
    assert error.error_status_hint == 431


FILLER = b"a" * 17_000  # past both parsers' default 16 KiB
CHUNKED = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize(
    "pieces",
    [
        pytest.param([GET[:-2] + b"X: " + FILLER + b"\r\n\r\n"], id="whole-head-at-once"),
        pytest.param([GET[:-2] + b"X: " + FILLER, b"\r\n\r\n"], id="head-in-two"),
        pytest.param([GET + GET[:-2] + b"X: " + FILLER], id="second-pipelined-head"),
        pytest.param([CHUNKED + b"3;" + FILLER], id="chunk-size-line"),
        pytest.param([CHUNKED + b"3;" + FILLER + b"\r\nabc\r\n0\r\n\r\n"], id="whole-chunk"),
        pytest.param([CHUNKED + b"0\r\nX: " + FILLER], id="trailers"),
        pytest.param([CHUNKED + b"0\r\nX: " + FILLER + b"\r\n\r\n"], id="whole-trailers"),
    ],
)
def test_size_bounds_on_heads_chunk_lines_and_trailers_are_h11s(pieces: list[bytes]) -> None:
    _assert_matches(_run_ours(pieces), _expected(_run_h11(pieces)), hostile=False)


def test_a_body_past_max_head_size_is_not_a_head() -> None:
    body = b"b" * 500
    connection = ServerConnection(max_head_size=64)
    connection.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + body)
    events = _events(connection)
    assert shared.joined_body(events) == body
    assert events[-1] is END


@pytest.mark.parametrize(
    "coding",
    [
        pytest.param(b"Transfer-Encoding: gzip\r\n", id="gzip"),
        pytest.param(b"Transfer-Encoding: gzip, chunked\r\n", id="gzip-then-chunked"),
        pytest.param(
            b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", id="two-fields"
        ),
    ],
)
def test_a_transfer_coding_other_than_chunked_is_501(coding: bytes) -> None:
    error = _refused(b"POST / HTTP/1.1\r\nHost: x\r\n" + coding + b"\r\n0\r\n\r\n")
    assert error.error_status_hint == 501


@pytest.mark.parametrize(
    "data",
    [
        # The framing.
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            id="content-length-and-chunked",
        ),
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            id="conflicting-content-lengths",
        ),
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd",
            id="conflicting-content-length-list",
        ),
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", id="signed-length"
        ),
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"1" * 21 + b"\r\n\r\n",
            id="21-digit-length",
        ),
        *shared.chunk_faults(CHUNKED),
        # The fields.
        pytest.param(b"GET / HTTP/1.1\r\n\r\n", id="missing-host"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", id="two-hosts"),
        pytest.param(b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", id="space-before-colon"),
        pytest.param(b"GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", id="tab-before-colon"),
        pytest.param(b"GET / HTTP/1.1\r\n Host: x\r\n\r\n", id="fold-before-any-field"),
        # The request line.
        *shared.start_line_faults(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        pytest.param(b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", id="two-spaces"),
    ],
)
def test_malformed_requests_are_400(data: bytes) -> None:
    assert _refused(data).error_status_hint == 400


@pytest.mark.parametrize(
    ("data", "body"),
    [
        pytest.param(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"3".zfill(20) + b"\r\n\r\nabc",
            b"abc",
            id="20-digit-length",
        ),
        pytest.param(
            CHUNKED + b"3".zfill(20) + b"\r\nabc\r\n0\r\n\r\n", b"abc", id="20-hex-digits"
        ),
    ],
)
def test_twenty_digits_are_the_most_a_length_may_have(data: bytes, body: bytes) -> None:
    events = _events(_connection_with(data))
    assert shared.joined_body(events) == body
    assert events[-1] is END
    assert _refused(data.replace(b"3".zfill(20), b"3".zfill(21))).error_status_hint == 400


@pytest.mark.parametrize("version", [b"2.0", b"1.2", b"0.9"])
def test_an_http_version_other_than_10_or_11_is_505(version: bytes) -> None:
    error = _refused(b"GET / HTTP/" + version + b"\r\nHost: x\r\n\r\n")
    assert error.error_status_hint == 505


def test_after_a_protocol_error_every_next_event_raises_again() -> None:
    connection = ServerConnection()
    connection.receive_data(b"GET / HTTP/1.1\r\nHost : x\r\n\r\n")
    with pytest.raises(RemoteProtocolError) as first:
        connection.next_event()
    connection.receive_data(GET)  # good bytes do not bring it back
    for _ in range(3):
        with pytest.raises(RemoteProtocolError) as again:
            connection.next_event()
        assert again.value.error_status_hint == first.value.error_status_hint
    assert not connection.keep_alive


# 100-continue.


def _waiting(connection: ServerConnection) -> bool:
    return connection.they_are_waiting_for_100_continue


EXPECTING = b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"


def test_they_are_waiting_for_100_continue_until_it_is_sent() -> None:
    connection = ServerConnection()
    assert not _waiting(connection)
    connection.receive_data(EXPECTING)
    assert isinstance(connection.next_event(), Request)
    assert connection.next_event() is NEED_DATA
    assert _waiting(connection)
    connection.send_continue()
    assert not _waiting(connection)


def test_they_are_not_waiting_for_100_continue_once_the_body_arrives() -> None:
    connection = _connection(EXPECTING)
    assert _waiting(connection)
    connection.receive_data(b"a")
    assert shared.joined_body(_events(connection)) == b"a"
    assert not _waiting(connection)


def test_they_are_not_waiting_for_100_continue_after_a_response() -> None:
    connection = _connection(EXPECTING)
    connection.send_response(417, [], close=True)
    assert not _waiting(connection)


def test_http10_never_waits_for_100_continue() -> None:
    connection = _connection(
        b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"
    )
    assert not _waiting(connection)


def test_a_chunked_body_can_wait_for_100_continue() -> None:
    connection = _connection(
        b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    assert _waiting(connection)
