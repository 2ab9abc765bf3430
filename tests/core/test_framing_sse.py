"""Tests of the server-sent events framing (Streamable HTTP's), against the WHATWG rules."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore.framing import (
    MAX_EVENT_SIZE,
    SSEEvent,
    SSEEventTooLarge,
    SSEParser,
    encode_comment,
    encode_event,
)

BOM = b"\xef\xbb\xbf"


def parse(
    *chunks: bytes | bytearray | memoryview, parser: SSEParser | None = None
) -> list[SSEEvent]:
    parser = parser or SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


# --- fields --------------------------------------------------------------------------


def test_a_simple_event() -> None:
    assert parse(b"data: hello\n\n") == [SSEEvent(data="hello")]


def test_all_fields() -> None:
    parser = SSEParser()
    events = parser.feed(b"event: update\nid: 42\nretry: 1500\ndata: {}\n\n")
    assert events == [SSEEvent(data="{}", event="update", id="42", retry=1500)]
    assert parser.last_event_id == "42"
    assert parser.retry == 1500


def test_multi_line_data_is_joined_with_lf() -> None:
    # The WHATWG example.
    assert parse(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [SSEEvent(data="YHOO\n+2\n10")]


def test_one_space_after_the_colon_is_optional_and_only_one_is_removed() -> None:
    events = parse(b"data:test\n\ndata: test\n\ndata:  test\n\n")
    assert [e.data for e in events] == ["test", "test", " test"]


def test_a_line_without_colon_is_a_field_with_an_empty_value() -> None:
    # The WHATWG example: "data\n\ndata\ndata\n\ndata:" gives "" then "\n", and the
    # unterminated last event is never dispatched.
    events = parse(b"data\n\ndata\ndata\n\ndata:")
    assert [e.data for e in events] == ["", "\n"]


def test_only_the_first_colon_separates_name_and_value() -> None:
    assert parse(b"data: a: b:c\n\n") == [SSEEvent(data="a: b:c")]


def test_unknown_fields_and_wrong_case_are_ignored() -> None:
    assert parse(b"foo: bar\nData: no\ndata: yes\nDATA: no\n\n") == [SSEEvent(data="yes")]


def test_empty_event_name_means_message() -> None:
    assert parse(b"event:\ndata: x\n\n") == [SSEEvent(data="x", event="message")]


def test_event_type_does_not_carry_over_to_the_next_event() -> None:
    events = parse(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert [e.event for e in events] == ["a", "message"]


def test_later_field_values_replace_earlier_ones() -> None:
    assert parse(b"event: a\nevent: b\nid: 1\nid: 2\ndata: x\n\n") == [
        SSEEvent(data="x", event="b", id="2")
    ]


# --- comments ------------------------------------------------------------------------


def test_comments_are_ignored() -> None:
    parser = SSEParser()
    assert parser.feed(b": keep-alive\n\n:\n\n: more\n") == []
    assert parser.feed(b"data: x\n: inside an event\ndata: y\n\n") == [SSEEvent(data="x\ny")]


# --- line ends -----------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_end(eol: bytes) -> None:
    stream = eol.join([b"id: 1", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert parse(stream) == [SSEEvent(data="a\nb", id="1"), SSEEvent(data="c", id="1")]


def test_mixed_line_ends() -> None:
    assert parse(b"data: a\rdata: b\r\ndata: c\n\r\n") == [SSEEvent(data="a\nb\nc")]


def test_cr_then_lf_in_the_next_chunk_is_one_line_end() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r") == []
    # Had the LF been a second line end, this would be a blank line, dispatching "a".
    assert parser.feed(b"\n") == []
    assert parser.feed(b"\r") == [SSEEvent(data="a\nb")]


def test_cr_then_lf_across_an_empty_chunk_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"", b"\ndata: b\n\n") == [SSEEvent(data="a\nb")]


def test_cr_cr_is_two_line_ends() -> None:
    assert parse(b"data: a\r", b"\r") == [SSEEvent(data="a")]


def test_lf_after_a_complete_crlf_is_a_blank_line() -> None:
    assert parse(b"data: a\r\n", b"\n") == [SSEEvent(data="a")]


# --- byte order mark and UTF-8 -------------------------------------------------------


def test_a_leading_bom_is_stripped() -> None:
    assert parse(BOM + b"data: x\n\n") == [SSEEvent(data="x")]


def test_a_bom_split_across_chunks_is_stripped() -> None:
    assert parse(*bytewise(BOM + b"data: x\n\n")) == [SSEEvent(data="x")]
    assert parse(BOM[:2], BOM[2:] + b"data: x\n\n") == [SSEEvent(data="x")]


def test_only_one_bom_is_stripped() -> None:
    # The second BOM becomes part of the field name, "\ufeffdata", an unknown field.
    assert parse(BOM + BOM + b"data: x\n\ndata: y\n\n") == [SSEEvent(data="y")]


def test_a_bom_after_the_start_of_the_stream_is_data() -> None:
    assert parse(b"data: x\n\n" + BOM + b"data: y\n\n") == [SSEEvent(data="x")]
    assert parse(b"data: " + BOM + b"\n\n") == [SSEEvent(data="\ufeff")]


def test_a_partial_bom_prefix_that_does_not_complete_is_kept() -> None:
    # "\xef\xbb" followed by something else is not a BOM: it is (invalid) text.
    assert parse(b"\xef", b"\xbbdata: x\n\ndata: y\n\n") == [SSEEvent(data="y")]


def test_a_character_split_across_chunks_is_decoded_whole() -> None:
    euro = "€".encode()
    stream = b"data: " + euro + b"\nid: " + euro + b"\n\n"
    assert parse(*bytewise(stream)) == [SSEEvent(data="€", id="€")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert parse(b"data: a\xffb\xe2\x82\nevent: \xc3\n\n") == [
        SSEEvent(data="a\ufffdb\ufffd", event="\ufffd")
    ]


# --- id and retry --------------------------------------------------------------------


def test_id_is_sticky_across_events() -> None:
    events = parse(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
    assert [e.id for e in events] == ["1", "1", "2"]


def test_empty_id_resets_the_last_event_id() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\nid\ndata: b\n\n")
    assert [e.id for e in events] == ["1", None]
    assert parser.last_event_id == ""


def test_id_containing_nul_is_ignored() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in events] == ["1", "1"]
    assert parser.last_event_id == "1"


def test_event_without_data_is_not_dispatched_but_its_id_is_remembered() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 7\nevent: ignored\n\n") == []
    assert parser.last_event_id == "7"
    # The event type of the undispatched event was reset with it.
    assert parser.feed(b"data: x\n\n") == [SSEEvent(data="x", id="7")]


def test_id_takes_effect_only_at_the_blank_line() -> None:
    parser = SSEParser()
    parser.feed(b"id: 1\ndata: a\n\nid: 2\n")
    assert parser.last_event_id == "1"
    parser.feed(b"\n")
    assert parser.last_event_id == "2"


def test_priming_event_with_id_and_empty_data_is_dispatched() -> None:
    # MCP 2025-11-25: the server may open a stream with an event that has an id and
    # empty data, so the client can resume from it.
    parser = SSEParser()
    assert parser.feed(encode_event(b"", id="0")) == [SSEEvent(data="", id="0")]
    assert parser.last_event_id == "0"


@pytest.mark.parametrize(
    "value", [b"1a", b"-1", b"+1", b"1.5", b"  1", b"", "١٢".encode(), b"1 ", b"0x10"]
)
def test_retry_that_is_not_only_ascii_digits_is_ignored(value: bytes) -> None:
    parser = SSEParser()
    assert parser.feed(b"retry: 100\ndata: a\n\nretry:" + value + b"\ndata: b\n\n") == [
        SSEEvent(data="a", retry=100),
        SSEEvent(data="b"),
    ]
    assert parser.retry == 100


def test_retry_is_kept_on_the_parser_and_set_even_without_dispatch() -> None:
    assert SSEParser().retry is None
    parser = SSEParser()
    assert parser.feed(b"retry: 0\n\n") == []
    assert parser.retry == 0
    assert parser.feed(b"retry: 0030\n") == []
    assert parser.retry == 30  # set at once, not at dispatch


def test_retry_too_long_to_convert_is_ignored() -> None:
    parser = SSEParser()
    parser.feed(b"retry: 5\nretry: " + b"9" * 10_000 + b"\n\n")
    assert parser.retry == 5


# --- dispatch and end of stream ------------------------------------------------------


def test_an_event_is_dispatched_only_by_a_blank_line() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"data: b\n") == []
    assert parser.feed(b"\n") == [SSEEvent(data="a\nb")]


def test_the_whatwg_example_stream() -> None:
    parser = SSEParser()
    events = parser.feed(
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n"
    )
    assert events == [SSEEvent(data="first event", id="1"), SSEEvent(data="second event")]
    parser.end_of_stream()  # "third event" had no blank line: never dispatched


def test_end_of_stream_discards_an_unterminated_event_and_its_id() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n") == [SSEEvent(data="a", id="1")]
    parser.end_of_stream()
    assert parser.last_event_id == "1"
    # The next stream (the reconnection) starts clean but keeps id and retry.
    assert parser.feed(b"\n") == []
    assert parser.feed(b"data: c\n\n") == [SSEEvent(data="c", id="1")]


def test_end_of_stream_discards_an_unfinished_line() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n\ndata: half")
    parser.end_of_stream()
    assert parser.feed(b"\n\n") == []


def test_end_of_stream_keeps_retry_and_expects_a_new_bom() -> None:
    parser = SSEParser()
    parser.feed(BOM + b"retry: 3000\nid: 9\ndata: a\n\n")
    parser.end_of_stream()
    assert parser.retry == 3000
    assert parser.feed(BOM + b"data: b\n\n") == [SSEEvent(data="b", id="9")]


def test_end_of_stream_forgets_a_pending_cr() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\r")
    parser.end_of_stream()
    assert parser.feed(b"\ndata: b\n\n") == [SSEEvent(data="b")]


def test_resuming_with_a_fresh_parser() -> None:
    parser = SSEParser(last_event_id="41")
    assert parser.last_event_id == "41"
    assert parser.feed(b"data: a\n\n") == [SSEEvent(data="a", id="41")]


def test_bytearray_and_memoryview_input() -> None:
    assert parse(bytearray(b"data: a\n"), memoryview(b"\n")) == [SSEEvent(data="a")]


# --- the size limit ------------------------------------------------------------------


def test_default_limit_is_16_mib() -> None:
    assert MAX_EVENT_SIZE == 16 * 1024 * 1024
    assert SSEParser().max_event_size == MAX_EVENT_SIZE


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_event_size"):
        SSEParser(0)


def test_too_large_is_a_value_error() -> None:
    assert issubclass(SSEEventTooLarge, ValueError)


@pytest.mark.parametrize("split", [False, True])
def test_data_of_exactly_the_limit_is_accepted_and_one_more_byte_is_not(split: bool) -> None:
    limit = 32

    def chunks(stream: bytes) -> list[bytes]:
        return bytewise(stream) if split else [stream]

    exact = "é" * (limit // 2)  # 2 bytes each: the limit counts UTF-8 bytes
    assert parse(*chunks(f"data: {exact}\n\n".encode()), parser=SSEParser(limit)) == [
        SSEEvent(data=exact)
    ]
    for prefix in ("data: ", "data:"):  # the space after the colon does not count
        with pytest.raises(SSEEventTooLarge) as info:
            parse(*chunks(f"{prefix}{exact}x\n\n".encode()), parser=SSEParser(limit))
        assert info.value.limit == limit


def test_the_limit_counts_the_newlines_joining_data_lines() -> None:
    limit = 10
    assert parse(b"data: 1234\ndata: 56789\n\n", parser=SSEParser(limit)) == [
        SSEEvent(data="1234\n56789")
    ]
    with pytest.raises(SSEEventTooLarge):
        parse(b"data: 12345\ndata: 56789\n\n", parser=SSEParser(limit))


def test_the_limit_is_per_event() -> None:
    parser = SSEParser(10)
    events = parse(*[b"data: 0123456789\n\n"] * 100, parser=parser)
    assert len(events) == 100


def test_a_long_line_without_line_end_raises_before_it_is_buffered() -> None:
    parser = SSEParser(100)
    parser.feed(b"data: ")
    for _ in range(10):
        parser.feed(b"x" * 10)  # 106 bytes held: the limit, and room for "data: "
    with pytest.raises(SSEEventTooLarge):
        parser.feed(b"x")


def test_any_long_line_counts_not_only_data() -> None:
    with pytest.raises(SSEEventTooLarge):
        parse(b": " + b"c" * 200 + b"\n", parser=SSEParser(100))


def test_events_completed_before_the_overflow_are_on_the_exception() -> None:
    parser = SSEParser(10)
    with pytest.raises(SSEEventTooLarge) as info:
        parser.feed(b"data: a\n\ndata: b\n\ndata: " + b"x" * 20 + b"\n\ndata: lost\n\n")
    assert info.value.events == [SSEEvent(data="a"), SSEEvent(data="b")]


def test_the_parser_is_unusable_after_an_overflow_until_end_of_stream() -> None:
    parser = SSEParser(10)
    parser.feed(b"id: 3\ndata: ok\n\n")
    with pytest.raises(SSEEventTooLarge):
        parser.feed(b"data: " + b"x" * 20)
    with pytest.raises(RuntimeError, match="end_of_stream"):
        parser.feed(b"\n\ndata: ok\n\n")
    parser.end_of_stream()
    assert parser.feed(b"data: ok\n\n") == [SSEEvent(data="ok", id="3")]


# --- encoder -------------------------------------------------------------------------


def test_encode_event_minimal() -> None:
    assert encode_event(b'{"jsonrpc":"2.0"}') == b'data: {"jsonrpc":"2.0"}\n\n'
    assert encode_event('{"a":"é"}') == 'data: {"a":"é"}\n\n'.encode()


def test_encode_event_all_fields() -> None:
    assert encode_event("x", event="message", id="7", retry=1000) == (
        b"event: message\nid: 7\nretry: 1000\ndata: x\n\n"
    )


def test_encode_event_splits_data_at_every_line_end() -> None:
    assert encode_event("a\nb\r\nc\rd\n") == (b"data: a\ndata: b\ndata: c\ndata: d\ndata:\n\n")


def test_encode_event_with_empty_data_writes_one_data_line() -> None:
    assert encode_event("", id="abc") == b"id: abc\ndata:\n\n"


def test_encode_event_does_not_split_at_unicode_line_separators() -> None:
    text = "a\u2028b\x85c\x0bd\x0ce"
    assert encode_event(text) == b"data: " + text.encode() + b"\n\n"
    assert parse(encode_event(text)) == [SSEEvent(data=text)]


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "\n", "x\r\n"])
def test_encode_event_rejects_line_ends_in_event_and_id(bad: str) -> None:
    with pytest.raises(ValueError, match="CR or LF"):
        encode_event("x", event=bad)
    with pytest.raises(ValueError, match="CR or LF"):
        encode_event("x", id=bad)


def test_encode_event_rejects_nul_in_id() -> None:
    with pytest.raises(ValueError, match="NUL"):
        encode_event("x", id="a\x00b")


def test_encode_event_rejects_a_bad_retry() -> None:
    with pytest.raises(ValueError, match="negative"):
        encode_event("x", retry=-1)
    with pytest.raises(TypeError, match="int"):
        encode_event("x", retry=True)
    with pytest.raises(TypeError, match="int"):
        encode_event("x", retry=1.5)  # type: ignore[arg-type]


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment("keep-alive") == b": keep-alive\n\n"
    assert encode_comment("a\nb\r\nc") == b": a\n: b\n: c\n\n"


def test_comments_between_events_change_nothing() -> None:
    parser = SSEParser()
    stream = encode_event("a", id="1") + encode_comment("ping\nping") + encode_event("b")
    assert parser.feed(stream) == [SSEEvent(data="a", id="1"), SSEEvent(data="b", id="1")]
    assert parser.last_event_id == "1"


# --- properties ----------------------------------------------------------------------

_WHATWG_LINE_END = re.compile("\r\n|\r|\n")


def reference_parse(stream: bytes) -> tuple[list[SSEEvent], str, int | None]:
    """WHATWG "interpreting an event stream", transcribed step by step on whole text."""
    stream = stream.removeprefix(BOM)
    *lines, _unterminated = _WHATWG_LINE_END.split(stream.decode("utf-8", "replace"))
    events: list[SSEEvent] = []
    data, event_type, id_buffer, last_event_id = "", "", "", ""
    retry: int | None = None
    event_retry: int | None = None
    for line in lines:
        if not line:
            last_event_id = id_buffer
            if data:
                events.append(
                    SSEEvent(
                        data=data.removesuffix("\n"),
                        event=event_type or "message",
                        id=last_event_id or None,
                        retry=event_retry,
                    )
                )
            data, event_type, event_retry = "", "", None
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event_type = value
        elif name == "id":
            if "\x00" not in value:
                id_buffer = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = event_retry = int(value)
    return events, last_event_id, retry


# Pieces that matter to the parser, and bytes that are not valid UTF-8 on their own.
_SSE_PIECES = st.sampled_from(
    [
        b"data", b"data:", b"data: ", b"id", b"id:", b"id: ", b"event:", b"retry:", b":",
        b" ", b"1", b"42", b"x", b"\x00", b"\r", b"\n", b"\r\n", b"\n\n", BOM,
        "€".encode(), b"\xe2", b"\x82", b"\xff", b"\xc3",
    ]
)  # fmt: skip


@given(pieces=st.lists(_SSE_PIECES, max_size=40), data=st.data())
def test_any_stream_parses_like_the_spec_however_split(
    pieces: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(pieces)
    expected_events, expected_id, expected_retry = reference_parse(stream)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream) + 1))
    for chunks in ([stream], split_at(stream, cuts)):
        parser = SSEParser()
        assert parse(*chunks, parser=parser) == expected_events
        assert parser.last_event_id == expected_id
        assert parser.retry == expected_retry


_LINE_ENDS = st.sampled_from(["\n", "\r", "\r\n"])
# Characters of every UTF-8 length, and some that other splitters take for line ends.
# (A fixed alphabet: `st.text()` spends seconds building Unicode tables on a cold cache.)
_CHARS = st.sampled_from(list("ab :\t\x00é€😀\u2028\u2029\x85\x0b\x0c\ufeff"))
_DATA_TEXT = st.lists(_CHARS | _LINE_ENDS, max_size=16).map("".join)
_FIELD_TEXT = st.lists(_CHARS.filter(lambda c: c != "\x00"), max_size=8).map("".join)


@st.composite
def events_to_send(draw: st.DrawFn) -> tuple[str | bytes, str | None, str | None, int | None]:
    text = draw(_DATA_TEXT)
    data = text.encode() if draw(st.booleans()) else text
    event = draw(st.none() | _FIELD_TEXT)
    event_id = draw(st.none() | _FIELD_TEXT)
    retry = draw(st.none() | st.integers(0, 10**12))
    return data, event, event_id, retry


@given(sent=st.lists(events_to_send(), max_size=6), data=st.data())
def test_encoded_events_round_trip_however_split(
    sent: list[tuple[str | bytes, str | None, str | None, int | None]], data: st.DataObject
) -> None:
    stream = b"".join(
        encode_event(payload, event=event, id=event_id, retry=retry)
        for payload, event, event_id, retry in sent
    )
    expected: list[SSEEvent] = []
    last_id = ""
    for payload, event, event_id, retry in sent:
        text = payload.decode() if isinstance(payload, bytes) else payload
        if event_id is not None:
            last_id = event_id
        expected.append(
            SSEEvent(
                data=_WHATWG_LINE_END.sub("\n", text),
                event=event or "message",
                id=last_id or None,
                retry=retry,
            )
        )
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream) + 1))
    parser = SSEParser()
    assert parse(*split_at(stream, cuts), parser=parser) == expected
    assert parser.last_event_id == last_id


@given(
    limit=st.integers(1, 24),
    lines=st.lists(
        st.sampled_from([b"data: xyz", b"data:", b"id: 12345", b": c", b""]), max_size=30
    ),
    data=st.data(),
)
def test_whether_the_limit_is_hit_does_not_depend_on_the_split(
    limit: int, lines: list[bytes], data: st.DataObject
) -> None:
    stream = b"\n".join(lines)

    def outcome(chunks: list[bytes]) -> list[SSEEvent] | str:
        try:
            return parse(*chunks, parser=SSEParser(limit))
        except SSEEventTooLarge:
            return "too large"

    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream) + 1))
    assert outcome(split_at(stream, cuts)) == outcome([stream])
