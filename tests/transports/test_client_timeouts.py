"""Per-call timeouts through the public client API, in virtual time (trio's MockClock).

A real `serve_websocket` and a real `open_websocket_client` on loopback, in one trio run
whose clock jumps ahead whenever every task waits: a timeout fires at its deadline
(or up to `RESOLUTION` later: the stdio and WebSocket clients keep their calls'
deadlines in buckets of that size), and a tool that sleeps for a minute costs nothing.
What is pinned: a timeout ends the call with `TimeoutError` at its deadline and cancels
the request on the wire
(the server's handler is cancelled), the client's default applies when a call gives
none, progress restarts the timeout only when asked and never past the hard maximum,
``math.inf`` waits for ever, a call cancelled from outside is cancelled on the wire too,
and the connection stays usable after each.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcpcore.client import ConnectMode
from mcpcore.server import Context, Server
from tests.transports.trio_helpers import trio_test
from tests.transports.ws_raw import running_ws
from transports import WebSocketClient, open_websocket_client
from transports._client.deadlines import RESOLUTION

#: The test bound, in virtual seconds (generous: tools sleep for minutes).
VIRTUAL_BOUND = 10_000.0

MODES = pytest.mark.parametrize("mode", ["legacy", "modern"])


class Recorder:
    """What the server's handlers saw: which sleeps were cancelled, and when."""

    def __init__(self) -> None:
        self.cancelled: dict[str, float] = {}
        self.started: dict[str, float] = {}


def timed_server(record: Recorder) -> Server:
    server = Server("timeouts", "1.0")

    @server.tool()
    async def sleep(seconds: float, tag: str = "") -> str:
        """Sleeps ``seconds`` (virtual); records when it was cancelled, if it was."""
        record.started[tag] = trio.current_time()
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            record.cancelled[tag] = trio.current_time()
            raise
        return f"slept {seconds:g}"

    @server.tool()
    async def steps(ctx: Context, count: int, interval: float) -> str:
        """Reports progress 1..count, ``interval`` seconds apart, then answers."""
        for step in range(1, count + 1):
            await trio.sleep(interval)
            await ctx.report_progress(step, count)
        return f"{count} steps"

    return server


@asynccontextmanager
async def connected(
    mode: ConnectMode, **options: Any
) -> AsyncIterator[tuple[WebSocketClient, Recorder]]:
    record = Recorder()
    async with running_ws(timed_server(record)) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url, mode=mode, **options) as client:
            yield client, record


def assert_lasted(started: float, seconds: float, *, until: float | None = None) -> None:
    """It lasted ``seconds`` of virtual time (up to now, or ``until``), or one `RESOLUTION` more."""
    elapsed = (trio.current_time() if until is None else until) - started
    assert seconds - 1e-9 <= elapsed <= seconds + RESOLUTION + 1e-9, elapsed


def text_of(result: Any) -> str:
    [block] = result.content
    return str(block.text)


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_a_call_times_out_at_its_deadline_and_is_cancelled_on_the_wire(
    mode: ConnectMode,
) -> None:
    async with connected(mode) as (client, record):
        started = trio.current_time()
        with pytest.raises(TimeoutError, match="no answer within 2 s"):
            await client.call_tool("sleep", {"seconds": 60, "tag": "late"}, timeout=2)
        assert_lasted(started, 2)
        await trio.sleep(0)  # (the cancellation is on its way)
        answer = await client.call_tool("sleep", {"seconds": 1}, timeout=5)
        assert text_of(answer) == "slept 1"  # the connection is fine
        # The server stopped the handler at the deadline ("receivers SHOULD stop work").
        assert_lasted(record.started["late"], 2, until=record.cancelled["late"])
        assert client.session.connection.pending_requests == ()


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_the_clients_default_applies_when_a_call_gives_none(mode: ConnectMode) -> None:
    async with connected(mode, timeout=7) as (client, _):
        started = trio.current_time()
        with pytest.raises(TimeoutError, match="no answer within 7 s"):
            await client.call_tool("sleep", {"seconds": 60, "tag": "default"})
        assert_lasted(started, 7)
        assert text_of(await client.call_tool("sleep", {"seconds": 6})) == "slept 6"


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_progress_restarts_the_timeout_only_when_asked(mode: ConnectMode) -> None:
    arguments = {"count": 5, "interval": 1.5}  # 7.5 s in all, never 2 s without news
    async with connected(mode) as (client, _):
        started = trio.current_time()
        with pytest.raises(TimeoutError):
            await client.call_tool("steps", arguments, timeout=2)
        assert_lasted(started, 2)

        seen: list[float] = []
        started = trio.current_time()
        result = await client.call_tool(
            "steps",
            arguments,
            timeout=2,
            reset_timeout_on_progress=True,
            progress=lambda value, total, message: seen.append(value),
        )
        assert text_of(result) == "5 steps"
        assert seen == [1, 2, 3, 4, 5]
        assert_lasted(started, 7.5)

        # Without a callback, resets still apply (the client asks for progress).
        result = await client.call_tool(
            "steps", arguments, timeout=2, reset_timeout_on_progress=True
        )
        assert text_of(result) == "5 steps"


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_progress_never_stretches_a_call_past_the_hard_maximum(mode: ConnectMode) -> None:
    async with connected(mode, max_total_timeout=4) as (client, _):
        started = trio.current_time()
        with pytest.raises(TimeoutError):
            await client.call_tool(
                "steps",
                {"count": 100, "interval": 1},
                timeout=2,
                reset_timeout_on_progress=True,
            )
        assert_lasted(started, 4)
        assert client.session.connection.pending_requests == ()


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_an_infinite_timeout_waits_for_ever(mode: ConnectMode) -> None:
    async with connected(mode, timeout=1) as (client, _):
        started = trio.current_time()
        answer = await client.call_tool("sleep", {"seconds": 3000}, timeout=math.inf)
        assert text_of(answer) == "slept 3000"
        assert_lasted(started, 3000)


@MODES
@trio_test(autojump=True, timeout=VIRTUAL_BOUND)
async def test_a_call_cancelled_from_outside_is_cancelled_on_the_wire(mode: ConnectMode) -> None:
    async with connected(mode) as (client, record):
        with trio.move_on_after(3):
            await client.call_tool("sleep", {"seconds": 60, "tag": "outside"})
        await client.call_tool("sleep", {"seconds": 1})
        assert_lasted(record.started["outside"], 3, until=record.cancelled["outside"])
        assert client.session.connection.pending_requests == ()
