"""Tests of the newline-delimited JSON framing (the stdio transport's)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore.framing import MAX_MESSAGE_SIZE, LineFramer, OversizedMessage, encode_lines

Output = list[bytes | OversizedMessage]


def feed_all(framer: LineFramer, chunks: list[bytes]) -> Output:
    out: Output = []
    for chunk in chunks:
        out += framer.feed(chunk)
    return out


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


# --- lines ---------------------------------------------------------------------------


def test_complete_lines_are_returned_in_order_without_line_end() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert framer.buffered == 0


def test_lines_are_bytes_even_when_fed_bytearray_or_memoryview() -> None:
    framer = LineFramer()
    out = framer.feed(bytearray(b"one\ntw")) + framer.feed(memoryview(b"o\n"))
    assert out == [b"one", b"two"]
    assert all(type(line) is bytes for line in out)


def test_a_line_split_across_chunks_is_reassembled() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"jsonrpc":') == []
    assert framer.buffered == len(b'{"jsonrpc":')
    assert framer.feed(b'"2.0"') == []
    assert framer.feed(b"}\n{") == [b'{"jsonrpc":"2.0"}']
    assert framer.buffered == 1


def test_crlf_line_ends_are_stripped() -> None:
    framer = LineFramer()
    assert framer.feed(b"a\r\nb\r\n") == [b"a", b"b"]


def test_crlf_split_between_chunks_is_stripped() -> None:
    framer = LineFramer()
    assert framer.feed(b"abc\r") == []
    assert framer.feed(b"\nxyz\r") == [b"abc"]
    assert framer.feed(b"\n") == [b"xyz"]


def test_only_one_trailing_cr_is_stripped_and_an_inner_cr_is_kept() -> None:
    framer = LineFramer()
    assert framer.feed(b"a\rb\r\r\n") == [b"a\rb\r"]


def test_blank_and_whitespace_only_lines_are_skipped() -> None:
    framer = LineFramer()
    assert framer.feed(b"\n\r\n  \n\t\r\n1\n\n2\n \r \n") == [b"1", b"2"]


def test_leading_and_trailing_spaces_of_a_message_are_kept() -> None:
    framer = LineFramer()
    assert framer.feed(b" {} \n") == [b" {} "]


def test_byte_by_byte_feeding_gives_the_same_lines() -> None:
    stream = b'{"a":1}\r\n\n {"b":"\xc3\xa9"}\n[]\n'
    assert feed_all(LineFramer(), bytewise(stream)) == [b'{"a":1}', b' {"b":"\xc3\xa9"}', b"[]"]


@pytest.mark.parametrize(
    "chunk", [b"{}\n", b"{}\r\n", b"\n", b" \t\n", b"\r\n", b"12345\n", b"123456\n", b"1234\r5\n"]
)
def test_a_chunk_of_one_whole_line_frames_like_the_same_bytes_one_by_one(chunk: bytes) -> None:
    # (One whole line per chunk is the framer's fast path: blank, CRLF, oversized and
    # inner-CR lines must come out of it exactly as from the general path.)
    assert LineFramer(5).feed(chunk) == feed_all(LineFramer(5), bytewise(chunk))


def test_empty_feed_returns_nothing() -> None:
    framer = LineFramer()
    assert framer.feed(b"") == []
    assert framer.feed(b"x") == []
    assert framer.feed(b"") == []
    assert framer.buffered == 1


# --- the size limit ------------------------------------------------------------------


def test_default_limit_is_16_mib() -> None:
    assert MAX_MESSAGE_SIZE == 16 * 1024 * 1024
    assert LineFramer().max_message_size == MAX_MESSAGE_SIZE


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_positive(limit: int) -> None:
    with pytest.raises(ValueError, match="max_message_size"):
        LineFramer(limit)


def test_oversized_line_in_the_middle_of_a_chunk() -> None:
    framer = LineFramer(max_message_size=5)
    out = framer.feed(b"first\n123456\nlast\n")
    assert out == [b"first", OversizedMessage(size=6, limit=5), b"last"]


def test_line_of_exactly_the_limit_is_accepted_and_one_more_byte_is_not() -> None:
    limit = 8
    exact, over = b"x" * limit, b"x" * (limit + 1)
    for chunks in ([exact + b"\n"], bytewise(exact + b"\n")):
        assert feed_all(LineFramer(limit), chunks) == [exact]
    for chunks in ([over + b"\n"], bytewise(over + b"\n")):
        [marker] = feed_all(LineFramer(limit), chunks)
        assert isinstance(marker, OversizedMessage)
        assert marker.limit == limit
        assert marker.size == limit + 1


def test_the_crlf_of_a_line_of_exactly_the_limit_does_not_count() -> None:
    limit = 8
    line = b"y" * limit
    for chunks in ([line + b"\r\n"], bytewise(line + b"\r\n"), [line + b"\r", b"\n"]):
        framer = LineFramer(limit)
        assert feed_all(framer, chunks) == [line]
    framer = LineFramer(limit)
    assert framer.feed(line + b"\r") == []
    assert framer.buffered == limit + 1  # the CR may yet be half a CRLF
    [marker] = framer.feed(b"z")  # it was not
    assert isinstance(marker, OversizedMessage)
    assert framer.buffered == 0


def test_oversized_line_in_many_chunks_is_reported_once_and_dropped_as_it_arrives() -> None:
    limit = 100
    framer = LineFramer(limit)
    out = framer.feed(b'{"before":1}\n{"huge":"')
    chunk = b"z" * 7
    for _ in range(1000):
        out += framer.feed(chunk)
        assert framer.buffered <= limit + 1
    out += framer.feed(b'"}\n{"after":2}\n')
    assert out[0] == b'{"before":1}'
    assert out[2] == b'{"after":2}'
    assert len(out) == 3
    marker = out[1]
    assert isinstance(marker, OversizedMessage)
    assert marker.limit == limit
    assert limit < marker.size <= limit + 1 + len(chunk)


def test_oversized_line_is_reported_before_its_line_feed_arrives() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"0123456789") == []
    assert framer.feed(b"abc") == [OversizedMessage(size=13, limit=10)]
    assert framer.buffered == 0
    assert framer.feed(b"more bytes of it") == []
    assert framer.feed(b"\nnext\n") == [b"next"]


def test_oversized_line_inside_one_large_chunk_is_not_buffered() -> None:
    framer = LineFramer(10)
    out = framer.feed(b"ok\n" + b"q" * 1000)
    assert out == [b"ok", OversizedMessage(size=1000, limit=10)]
    assert framer.buffered == 0


def test_buffered_never_exceeds_limit_plus_one_chunk() -> None:
    limit = 64
    stream = (b"a" * 50 + b"\n" + b"b" * 500 + b"\r\n" + b"c" * 64 + b"\r\n") * 5
    for size in (1, 3, 17, 64, 65, 200):
        framer = LineFramer(limit)
        for chunk in split_at(stream, list(range(size, len(stream), size))):
            framer.feed(chunk)
            assert framer.buffered <= limit + len(chunk)
            assert framer.buffered <= limit + 1


# --- end of input --------------------------------------------------------------------


def test_end_of_input_returns_an_unterminated_last_line() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}") == []
    line = framer.end_of_input()
    assert line == b'{"b":2}'
    assert type(line) is bytes
    assert framer.buffered == 0


def test_end_of_input_strips_a_trailing_cr() -> None:
    framer = LineFramer()
    framer.feed(b"last\r")
    assert framer.end_of_input() == b"last"


def test_end_of_input_of_a_line_of_exactly_the_limit_plus_cr() -> None:
    framer = LineFramer(4)
    assert framer.feed(b"abcd\r") == []
    assert framer.end_of_input() == b"abcd"


@pytest.mark.parametrize("tail", [b"", b"done\n", b"done\n  ", b"done\n\r"])
def test_end_of_input_without_a_message_returns_none(tail: bytes) -> None:
    framer = LineFramer()
    framer.feed(tail)
    assert framer.end_of_input() is None


def test_end_of_input_during_an_oversized_line_returns_none() -> None:
    framer = LineFramer(3)
    assert framer.feed(b"abcdef") == [OversizedMessage(size=6, limit=3)]
    assert framer.end_of_input() is None


def test_feed_after_end_of_input_is_an_error() -> None:
    framer = LineFramer()
    framer.end_of_input()
    with pytest.raises(RuntimeError, match="end_of_input"):
        framer.feed(b"x\n")
    assert framer.end_of_input() is None


# --- encode_lines --------------------------------------------------------------------


def test_encode_lines_appends_a_line_feed_to_each_message() -> None:
    assert encode_lines([b'{"a":1}', b"[]"]) == b'{"a":1}\n[]\n'
    assert encode_lines(iter([b"{}"])) == b"{}\n"
    assert encode_lines([]) == b""


def test_encode_lines_rejects_an_embedded_line_feed() -> None:
    with pytest.raises(ValueError, match="line feed"):
        encode_lines([b"{}", b'{"a":\n1}'])


# --- properties ----------------------------------------------------------------------

# Bytes that matter to the framer (LF, CR, whitespace) and some that don't.
_LINE_BYTES = st.lists(st.sampled_from(b"\r \t{}ab\xc3\xa9"), max_size=24).map(bytes)


def expected_output(
    stream: bytes, limit: int
) -> tuple[list[bytes | tuple[int, int]], bytes | None]:
    """The framing, written the obvious way: lines, with (raw length, limit) for oversized."""
    *lines, tail = stream.split(b"\n")
    out: list[bytes | tuple[int, int]] = []
    for raw in lines:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if len(line) > limit:
            out.append((len(raw), limit))
        elif line.strip():
            out.append(line)
    last = tail[:-1] if tail.endswith(b"\r") else tail
    if len(last) > limit:
        # Reported by feed(), as soon as it is certain; end_of_input() has nothing left.
        out.append((len(tail), limit))
        return out, None
    return out, (last if last.strip() else None)


def check_against_expected(stream: bytes, chunks: list[bytes], limit: int) -> None:
    framer = LineFramer(limit)
    out: Output = []
    for chunk in chunks:
        out += framer.feed(chunk)
        assert framer.buffered <= limit + 1
    final = framer.end_of_input()
    expected, expected_final = expected_output(stream, limit)
    assert final == expected_final
    assert len(out) == len(expected)
    for got, want in zip(out, expected, strict=True):
        if isinstance(want, tuple):
            raw_length, want_limit = want
            assert isinstance(got, OversizedMessage)
            assert got.limit == want_limit
            # Reported as soon as it is known, so `size` may be a lower bound.
            assert want_limit < got.size <= raw_length
        else:
            assert got == want


@given(
    messages=st.lists(_LINE_BYTES, max_size=12),
    line_end=st.sampled_from([b"\n", b"\r\n"]),
    terminated=st.booleans(),
    limit=st.integers(1, 20),
    data=st.data(),
)
def test_any_chunking_frames_like_the_whole_stream(
    messages: list[bytes],
    line_end: bytes,
    terminated: bool,
    limit: int,
    data: st.DataObject,
) -> None:
    stream = line_end.join(messages) + (line_end if terminated and messages else b"")
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream) + 1))
    check_against_expected(stream, [stream], limit)
    check_against_expected(stream, split_at(stream, cuts), limit)


@given(
    messages=st.lists(
        st.binary(min_size=1, max_size=40).filter(lambda m: b"\n" not in m and m.strip()),
        max_size=10,
    ),
    data=st.data(),
)
def test_encoded_messages_come_back_unchanged_however_split(
    messages: list[bytes], data: st.DataObject
) -> None:
    # A message a JSON encoder wrote: no LF, not blank, and no trailing CR.
    messages = [m.rstrip(b"\r") or b"{}" for m in messages]
    stream = encode_lines(messages)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream) + 1))
    framer = LineFramer(40)
    assert feed_all(framer, split_at(stream, cuts)) == messages
    assert framer.end_of_input() is None
