"""One budget for the partial messages of the whole process (issue 15, defect 3).

`transports._net.partial`: a `MessageBuffer` holds a message's first `PARTIAL_FLOOR` bytes
for free and reserves the rest from the process's `PartialBudget`, giving it back on
every way out. Through real servers: HTTP bodies (413 with Retry-After past the
budget), WebSocket messages (1009), an upgrade on ``serve_http`` drawing on the same
budget, small messages never refused, and the budget back at zero after completion,
refusal, error, timeout, a client hanging up, and the server shutting down. The memory
of a real server process under a flood: `tests.transports.test_partial_memory`.
"""

from __future__ import annotations

import json
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from wsproto.events import CloseConnection, TextMessage
from wsproto.frame_protocol import CloseReason

from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    jump,
    modern_body,
    modern_headers,
    running_server,
)
from tests.transports.ws_raw import RawWebSocket, modern_request, running_ws
from transports import PARTIAL_FLOOR, HttpLimits, WebSocketLimits
from transports._net.partial import PARTIAL_BUDGET, MessageBuffer, PartialBudget
from transports._websocket.channel import BUSY_REASON

KIB = 1024
#: The budget of these tests: one body of `LARGE` fits, a second does not.
BUDGET = 200 * KIB
LARGE = 200 * KIB
SMALL_TOOLS = modern_body("tools/list")


# ------------------------------------------------------------------ the buffer


def test_a_message_within_the_floor_costs_the_budget_nothing() -> None:
    budget = PartialBudget(capacity=1)
    buffer = MessageBuffer(budget, floor=10)
    assert buffer.add(b"hello")
    assert buffer.add(b"world")  # exactly the floor
    assert budget.held == 0
    assert buffer.take() == b"helloworld"
    assert not buffer.add(b"x" * 12)  # two past the floor: the budget is one
    assert budget.held == 0


def test_past_the_floor_bytes_are_reserved_and_all_given_back() -> None:
    budget = PartialBudget(capacity=100)
    buffer = MessageBuffer(budget, floor=10)
    assert buffer.add(b"a" * 10)
    assert budget.held == 0
    assert buffer.add(b"b" * 50)
    assert budget.held == 50
    assert not buffer.add(b"c" * 51)  # 111 bytes: 101 past the floor, over the budget
    assert budget.held == 50  # (a refused piece reserves nothing)
    assert buffer.add(b"c" * 50)
    assert budget.held == 100
    assert buffer.take() == b"a" * 10 + b"b" * 50 + b"c" * 50
    assert budget.held == 0
    assert buffer.size == 0


def test_an_announced_size_is_reserved_up_front_or_refused() -> None:
    budget = PartialBudget(capacity=100)
    first, second = MessageBuffer(budget, floor=10), MessageBuffer(budget, floor=10)
    assert first.expect(80)
    assert budget.held == 70
    assert not second.expect(50)  # 40 more would pass 100
    assert second.expect(40)  # 30 more fits
    assert budget.held == 100
    assert first.add(b"x" * 80)
    assert budget.held == 100  # (within what was reserved)
    first.clear()
    second.clear()
    assert budget.held == 0


def test_the_smallest_setting_of_the_servers_running_applies() -> None:
    budget = PartialBudget(capacity=1000)
    with budget.limited_to(500):
        with budget.limited_to(800):
            assert budget.capacity == 500
        assert budget.capacity == 500
        with budget.limited_to(200):
            assert budget.capacity == 200
        assert budget.capacity == 500
    assert budget.capacity == 1000
    with pytest.raises(ValueError, match="must be positive"), budget.limited_to(0):
        pass


_Step = tuple[str, int]
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 300)),
        st.tuples(st.just("expect"), st.integers(0, 600)),
        st.tuples(st.just("take"), st.just(0)),
        st.tuples(st.just("clear"), st.just(0)),
    ),
    max_size=40,
)


@given(steps=_STEPS, capacity=st.integers(1, 1000), floor=st.integers(1, 200))
def test_any_sequence_keeps_the_books_and_the_bytes(
    steps: list[_Step], capacity: int, floor: int
) -> None:
    budget = PartialBudget(capacity=capacity)
    buffer = MessageBuffer(budget, floor=floor)
    other = MessageBuffer(budget, floor=floor)  # another connection, holding some
    assert other.add(bytes(floor + capacity // 3))
    expected = b""
    for number, (action, size) in enumerate(steps):
        if action == "add":
            piece = bytes([number % 256]) * size
            before = budget.held
            if buffer.add(piece):
                expected += piece
            else:
                assert budget.held == before  # refused: nothing more reserved
                assert len(expected) + size - floor > 0
        elif action == "expect":
            buffer.expect(size)
        elif action == "take":
            assert buffer.take() == expected
            expected = b""
        else:
            buffer.clear()
            expected = b""
        assert buffer.size == len(expected)
        assert budget.held <= capacity
        assert budget.held >= max(0, len(expected) - floor) + max(0, other.size - floor)
    buffer.clear()
    other.clear()
    assert budget.held == 0


# ------------------------------------------------------------------ HTTP


def large_body(size: int) -> bytes:
    """A 2026-07-28 tools/list of exactly ``size`` bytes (padded in its params)."""
    empty = modern_body("tools/list", {"padding": ""})
    return modern_body("tools/list", {"padding": "p" * (size - len(empty))})


def head(http: RawConnection, size: int) -> bytes:
    """The head of a 2026-07-28 tools/list POST announcing ``size`` bytes."""
    headers = {**modern_headers("tools/list"), "Content-Length": str(size)}
    return http.encode(headers=headers)


def chunked_head(http: RawConnection) -> bytes:
    """The head of a 2026-07-28 tools/list POST with a chunked body."""
    fields = {"Host": http.host, **modern_headers("tools/list"), "Transfer-Encoding": "chunked"}
    lines = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    return f"POST /mcp HTTP/1.1\r\n{lines}\r\n".encode()


async def settle() -> None:
    await trio.testing.wait_all_tasks_blocked(0.05)


@asynccontextmanager
async def budgeted_http(**limits: Any) -> AsyncIterator[int]:
    """`serve_http` with a budget of `BUDGET`; checks the budget is back to zero after."""
    server, _ = build_test_server()
    options = {"max_partial_bytes": BUDGET, "keepalive_timeout": 1000, **limits}
    async with running_server(server, limits=HttpLimits(**options)) as running:
        yield running.port
    await settle()
    assert PARTIAL_BUDGET.held == 0


@http_test
async def test_past_the_budget_a_large_body_gets_413_and_a_small_one_is_served() -> None:
    async with budgeted_http() as port:
        body = large_body(LARGE)
        async with await RawConnection.open(port) as holder:
            await holder.send(head(holder, LARGE) + body[: LARGE // 2])
            await settle()
            assert PARTIAL_BUDGET.held == LARGE - PARTIAL_FLOOR
            async with await RawConnection.open(port) as refused:
                await refused.send(head(refused, LARGE))
                answer = await refused.read_response()
                assert answer.status == 413
                assert int(answer.headers["retry-after"]) > 0
                error = answer.json()
                assert error["error"]["code"] == -32600
                assert "id" not in error or error["id"] is None
                assert await refused.closed_by_server()
            # Small messages are never starved: every connection has its floor.
            async with await RawConnection.open(port) as small:
                response = await small.request(
                    headers=modern_headers("tools/list"), body=SMALL_TOOLS
                )
                assert response.status == 200
            # The large one completes, is answered, and gives its share back.
            await holder.send(body[LARGE // 2 :])
            assert (await holder.read_response()).status == 200
            assert PARTIAL_BUDGET.held == 0
            async with await RawConnection.open(port) as again:
                await again.send(head(again, LARGE) + body)
                assert (await again.read_response()).status == 200


@http_test
async def test_a_chunked_body_is_reserved_as_it_comes_and_refused_past_the_budget() -> None:
    async with budgeted_http() as port, await RawConnection.open(port) as holder:
        await holder.send(head(holder, LARGE) + b"[" * (LARGE - 1))
        await settle()
        async with await RawConnection.open(port) as chunked:
            chunk = b"[" * (32 * KIB)
            encoded = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            await chunked.send(chunked_head(chunked) + encoded * 2)
            await settle()
            assert PARTIAL_BUDGET.held == LARGE - PARTIAL_FLOOR  # within its floor
            await chunked.send(encoded * 3)  # 96 KiB past its floor: 32 too many
            answer = await chunked.read_response()
            assert answer.status == 413
            assert "retry-after" in answer.headers
        await settle()
        assert PARTIAL_BUDGET.held == LARGE - PARTIAL_FLOOR


@http_test
async def test_the_budget_is_given_back_when_a_client_hangs_up_mid_body() -> None:
    async with budgeted_http() as port:
        async with await RawConnection.open(port) as http:
            await http.send(head(http, LARGE) + b"[" * 1000)
            await settle()
            assert PARTIAL_BUDGET.held > 0
        await settle()
        assert PARTIAL_BUDGET.held == 0


@http_test
async def test_the_budget_is_given_back_when_a_body_times_out() -> None:
    async with budgeted_http(body_timeout=5) as port, await RawConnection.open(port) as http:
        await http.send(head(http, LARGE) + b"[" * 1000)
        await settle()
        assert PARTIAL_BUDGET.held > 0
        await jump(6)
        assert (await http.read_response()).status == 408
        await settle()
        assert PARTIAL_BUDGET.held == 0


@http_test
async def test_the_budget_is_given_back_when_a_chunked_body_breaks() -> None:
    async with budgeted_http() as port, await RawConnection.open(port) as http:
        chunk = b"[" * (100 * KIB)
        await http.send(chunked_head(http) + f"{len(chunk):x}\r\n".encode() + chunk)
        await settle()
        assert PARTIAL_BUDGET.held > 0
        await http.send(b"\r\nnot a chunk size\r\n")
        assert (await http.read_response()).status == 400
        await settle()
        assert PARTIAL_BUDGET.held == 0


@http_test
async def test_the_budget_is_given_back_when_the_server_shuts_down_mid_body() -> None:
    async with budgeted_http() as port:
        http = await RawConnection.open(port)
        await http.send(head(http, LARGE) + b"[" * 1000)
        await settle()
        assert PARTIAL_BUDGET.held > 0
    # (budgeted_http checked that the server's end gave it back)
    await http.stream.aclose()


@http_test
async def test_a_body_over_the_size_limit_reserves_nothing() -> None:
    async with (
        budgeted_http(max_body_size=100 * KIB) as port,
        await RawConnection.open(port) as http,
    ):
        await http.send(head(http, LARGE))
        assert (await http.read_response()).status == 413
        assert PARTIAL_BUDGET.held == 0


# ------------------------------------------------------------------ WebSocket


def fragment(text: str, *, last: bool = False) -> TextMessage:
    return TextMessage(data=text, message_finished=last)


@asynccontextmanager
async def budgeted_ws(**limits: Any) -> AsyncIterator[int]:
    """`serve_websocket` with a budget of `BUDGET`; checks it is back to zero after."""
    server, _ = build_test_server()
    async with running_ws(
        server, limits=WebSocketLimits(max_partial_bytes=BUDGET, **limits)
    ) as port:
        yield port
    await settle()
    assert PARTIAL_BUDGET.held == 0


def split_message(request_id: int, size: int) -> tuple[str, str]:
    """A tools/list of about ``size`` bytes, as its first ``size - 100`` and the rest."""
    text = json.dumps(modern_request(request_id, "tools/list", {"padding": "p" * size}))
    return text[: size - 100], text[size - 100 :]


@http_test
async def test_a_large_fragmented_message_reserves_then_gives_back_and_is_answered() -> None:
    async with budgeted_ws() as port, await RawWebSocket.connect(port) as ws:
        first, rest = split_message(1, LARGE)
        await ws.send_event(fragment(first))
        await settle()
        assert PARTIAL_BUDGET.held == len(first) - PARTIAL_FLOOR
        await ws.send_event(fragment(rest, last=True))
        assert "result" in await ws.receive_answer(1)
        assert PARTIAL_BUDGET.held == 0


@http_test
async def test_past_the_budget_a_websocket_message_is_closed_with_1009() -> None:
    async with budgeted_ws() as port, await RawWebSocket.connect(port) as holder:
        first, _ = split_message(1, LARGE)
        await holder.send_event(fragment(first))
        await settle()
        async with await RawWebSocket.connect(port) as refused:
            await refused.send_event(fragment(first))
            close = await refused.expect_close()
            assert (close.code, close.reason) == (CloseReason.MESSAGE_TOO_BIG, BUSY_REASON)
        # A small message on a new connection is served all the same.
        async with await RawWebSocket.connect(port) as small:
            await small.send_json(modern_request(2, "tools/list"))
            assert "result" in await small.receive_answer(2)
        await settle()
        assert PARTIAL_BUDGET.held == len(first) - PARTIAL_FLOOR


@pytest.mark.parametrize("ending", ["close frame", "tcp close", "too big", "server shutdown"])
@http_test
async def test_every_way_a_websocket_message_ends_gives_the_budget_back(ending: str) -> None:
    async with budgeted_ws(max_message_size=150 * KIB) as port:
        ws = await RawWebSocket.connect(port)
        await ws.send_event(fragment("[" * (100 * KIB)))
        await settle()
        assert PARTIAL_BUDGET.held == 100 * KIB - PARTIAL_FLOOR
        if ending == "close frame":
            await ws.send_event(CloseConnection(code=1000))
        elif ending == "tcp close":
            await ws.stream.aclose()
        elif ending == "too big":
            await ws.send_event(fragment("[" * (100 * KIB)))
            assert (await ws.expect_close()).code == CloseReason.MESSAGE_TOO_BIG
        if ending != "server shutdown":
            await settle()
            assert PARTIAL_BUDGET.held == 0
    await ws.stream.aclose()


@http_test
async def test_what_follows_a_refused_message_is_read_past_not_kept() -> None:
    async with (
        budgeted_ws(max_message_size=150 * KIB) as port,
        await RawWebSocket.connect(port) as ws,
    ):
        await ws.send_event(fragment("[" * (100 * KIB)))
        await ws.send_event(fragment("[" * (100 * KIB)))
        close = await ws.next_event()
        assert isinstance(close, CloseConnection)
        assert close.code == CloseReason.MESSAGE_TOO_BIG
        # The client goes on with its message (one more continuation frame, masked
        # with a key of zeros) instead of answering the Close the server waits for.
        size = 80 * KIB  # (within the size limit: only the fix drops it)
        await ws.send_raw(struct.pack("!BBQ", 0x00, 0x80 | 127, size) + bytes(4) + b"[" * size)
        await settle()
        assert PARTIAL_BUDGET.held == 0


@http_test
async def test_a_websocket_upgraded_on_serve_http_shares_the_budget() -> None:
    async with budgeted_http() as port, await RawConnection.open(port) as holder:
        await holder.send(head(holder, LARGE) + b"[" * 1000)
        await settle()
        async with await RawWebSocket.connect(port, "/mcp") as ws:
            await ws.send_event(fragment("[" * (150 * KIB)))  # 86 KiB past its floor
            close = await ws.expect_close()
            assert (close.code, close.reason) == (CloseReason.MESSAGE_TOO_BIG, BUSY_REASON)
