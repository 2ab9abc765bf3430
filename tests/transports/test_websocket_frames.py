"""The text frames we build by hand, read back by wsproto on the other side.

`transports._websocket.frames` writes frame headers itself instead of going through
wsproto's ``send``; every length class of RFC 6455 §5.2 (7-bit, 16-bit, 64-bit) and
both roles (unmasked server frames, masked client frames) must parse as wsproto parses
any frame.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wsproto.connection import Connection, ConnectionType
from wsproto.events import TextMessage
from wsproto.frame_protocol import CloseReason

from transports._websocket.channel import describe_close
from transports._websocket.frames import (
    KEY_POOL_SIZE,
    ClientFrames,
    mask,
    server_text_frame,
)

LENGTHS = [0, 1, 125, 126, 127, 65535, 65536, 70000]


def _read_back(frame: bytes, reader: ConnectionType) -> str:
    connection = Connection(reader)
    connection.receive_data(frame)
    events = list(connection.events())
    assert events, "no message"
    for event in events:
        assert isinstance(event, TextMessage), event
    assert events[-1].message_finished  # type: ignore[attr-defined]
    return "".join(event.data for event in events)  # type: ignore[attr-defined]


@pytest.mark.parametrize("length", LENGTHS)
def test_a_server_frame_of_every_length_class_parses(length: int) -> None:
    text = ("é" + "x" * length)[:length] if length else ""
    message = text.encode()
    frame = server_text_frame(message)
    assert frame[1] & 0x80 == 0  # a server never masks
    assert _read_back(frame, ConnectionType.CLIENT) == text


@pytest.mark.parametrize("length", LENGTHS)
def test_a_client_frame_of_every_length_class_is_masked_and_parses(length: int) -> None:
    text = "y" * length
    frame = ClientFrames()(text.encode())
    assert frame[1] & 0x80  # "a client MUST mask all frames" (RFC 6455 §5.3)
    assert _read_back(frame, ConnectionType.SERVER) == text


def test_each_client_frame_gets_a_fresh_masking_key() -> None:
    message = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    # Across more than one pool of keys: none comes back (4-byte keys from os.urandom
    # could repeat by chance, about once in 2**32 pairs; 3,000 keys make that ~1e-3).
    frames = ClientFrames()
    keys = [frames(message)[2:6] for _ in range(3 * KEY_POOL_SIZE // 4)]
    assert len(set(keys)) > len(keys) - 2


@given(st.binary(max_size=300), st.binary(min_size=4, max_size=4))
def test_masking_twice_gives_the_data_back_and_matches_the_definition(
    data: bytes, key: bytes
) -> None:
    masked = mask(data, key)
    # "octet i of the transformed data is octet i of the original data XOR octet at
    # index i modulo 4 of the masking key" (RFC 6455 §5.3).
    assert masked == bytes(byte ^ key[index % 4] for index, byte in enumerate(data))
    assert mask(masked, key) == data


def test_close_codes_are_described_in_words() -> None:
    assert describe_close(CloseReason.MESSAGE_TOO_BIG, "") == "1009 (message too big)"
    assert describe_close(4000, "bye") == "4000: bye"
    assert describe_close(1001, "going away") == "1001 (going away): going away"
