"""`serve_stdio_asyncio` as a real subprocess: the official SDK's client, and raw pipes.

The server (`tests/transports/asyncio_stdio_server.py`) serves the everything server
under asyncio with trio and wsproto made unimportable before anything is imported, so
every test here also shows that it runs where trio is not installed. The official
Python SDK's client (``mcp`` 2.3.0, on anyio's asyncio backend) launches it in both
eras: its ``legacy`` mode (``initialize``, 2025-11-25) and its ``auto`` mode (a
2026-07-28 ``server/discover`` probe). Raw pipes check what the SDK would never send:
an oversized line, invalid JSON, and end of input with a request still running.

Every wait is bounded (the test's own timeout, the SDK's read timeout), as a failure
guard only: nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from anyio.abc import Process
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpcore.framing import LineFramer
from tests.transports.anyio_helpers import anyio_runner
from tests.transports.sdk_callbacks import Callbacks, text_of

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "transports" / "asyncio_stdio_server.py"
#: Seconds any one test may take, server start and shutdown included.
TEST_TIMEOUT = 30.0
#: Per-request read timeout handed to the SDK, so that a lost answer fails fast.
READ_TIMEOUT = 15.0

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: (SDK mode, the version it must end up on against our server).
MODES = [pytest.param("legacy", LEGACY, id="legacy"), pytest.param("auto", MODERN, id="auto")]
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: The fixture's line limit in the oversized-line test (small, so the test sends little).
SMALL_LIMIT = 4096

anyio_test = anyio_runner(TEST_TIMEOUT)


def connect(mode: str, *options: str, errlog: TextIO | None = None, **callbacks: Any) -> Client:
    """An SDK client for a fresh server run with ``options``; enter it to launch it."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER), *options],
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    transport = stdio_client(parameters, errlog=errlog or sys.stderr)
    return Client(transport, mode=mode, read_timeout_seconds=READ_TIMEOUT, **callbacks)


# -- the official SDK's client ------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_lists_and_calls_tools_and_receives_progress(mode: str, version: str) -> None:
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with connect(mode) as client:
        assert client.protocol_version == version
        assert client.server_info is not None
        assert client.server_info.name == "mcpcore-everything"
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[0] == "test_simple_text"
        assert {"block", "shout", "test_tool_with_progress"} <= set(names)
        result = await client.call_tool("test_simple_text", {})
        assert text_of(result) == ["This is a simple text response for testing."]
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert text_of(result) == ["Progress test completed"]
    # (The SDK runs each progress callback in a task of its own: checked once joined.)
    assert received == [
        (0, 100, "Progress 0%"),
        (50, 100, "Progress 50%"),
        (100, 100, "Progress 100%"),
    ]


@anyio_test
async def test_legacy_sampling_and_elicitation_reach_the_sdk_callbacks() -> None:
    # Server-to-client requests over the same pipes (legacy era): the handler waits on
    # the client while the reader goes on reading, and gets its answer.
    callbacks = Callbacks()
    async with connect("legacy", **callbacks.as_kwargs()) as client:
        assert client.protocol_version == LEGACY
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text_of(sampled) == ["LLM response: Paris"]
        elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        [text] = text_of(elicited)
        assert "accept" in text
    # JSON-RPC ids of our requests (ints), not the 2026-07-28 inputRequests keys.
    assert [type(key) for key, _ in callbacks.sampled + callbacks.elicited] == [int, int]


@anyio_test
async def test_modern_input_required_results_reach_the_sdk_callbacks() -> None:
    callbacks = Callbacks()
    async with connect("auto", **callbacks.as_kwargs()) as client:
        assert client.protocol_version == MODERN
        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert text_of(result) == ['{"name":"Ada"} likes {"color":"green"}']
        assert [key for key, _ in callbacks.elicited] == ["step1", "step2"]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_a_call_the_sdk_cancels_cancels_its_handler(mode: str, version: str) -> None:
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with connect(mode) as client:
        assert client.protocol_version == version
        async with anyio.create_task_group() as tasks:

            async def call_block() -> None:
                await client.call_tool("block", {}, progress_callback=on_progress)

            tasks.start_soon(call_block)
            await started.wait()  # the handler runs
            tasks.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        # The server cancelled the handler (it waits for nothing else), and carries on.
        result = await client.call_tool("cancellations", {})
        assert text_of(result) == ["1 cancelled"]
        result = await client.call_tool("test_simple_text", {})
        assert text_of(result) == ["This is a simple text response for testing."]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_what_a_tool_prints_goes_to_stderr_not_into_the_stream(
    mode: str, version: str, tmp_path: Path
) -> None:
    with (tmp_path / "stderr").open("w+") as errlog:
        async with connect(mode, errlog=errlog) as client:
            assert client.protocol_version == version
            result = await client.call_tool("shout", {"text": "hello"})
            assert text_of(result) == ["HELLO"]
            # The stream is intact: the next call is answered too.
            result = await client.call_tool("test_simple_text", {})
            assert text_of(result) == ["This is a simple text response for testing."]
        errlog.seek(0)
        stderr = errlog.read()
    assert "fd1: hello" in stderr
    assert "print: hello" in stderr  # (Python's buffer, flushed when serving ends)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(("--runner", "uvloop"), id="uvloop"),
        pytest.param(("--runner", "anyio"), id="anyio.run"),
        pytest.param(("--allow-trio",), id="trio-installed"),
    ],
)
@anyio_test
async def test_it_serves_on_every_asyncio_runner(options: tuple[str, ...]) -> None:
    # uvloop's loop, anyio.run's, and asyncio.run's with trio importable (the runtime
    # then still takes asyncio's primitives: it asks which library runs it).
    received: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append(progress)

    async with connect("legacy", *options, **Callbacks().as_kwargs()) as client:
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert text_of(result) == ["Progress test completed"]
        sampled = await client.call_tool("test_sampling", {"prompt": "?"})
        assert text_of(sampled) == ["LLM response: Paris"]
    assert received == [0, 50, 100]


# -- raw pipes ----------------------------------------------------------------------


class RawPeer:
    """The client end of the server's pipes: lines out, JSON values in."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._framer = LineFramer()
        self._lines: list[bytes] = []

    async def send_line(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_line(json.dumps(message).encode())

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while not self._lines:
            chunk = await self.process.stdout.receive()  # (EndOfStream: test fails)
            for line in self._framer.feed(chunk):
                assert isinstance(line, bytes)
                self._lines.append(line)
        value = json.loads(self._lines.pop(0))
        assert isinstance(value, dict)
        return value

    async def rest(self) -> bytes:
        """Everything the server writes until it closes stdout."""
        assert self.process.stdout is not None
        data = b"".join(line + b"\n" for line in self._lines)
        self._lines.clear()
        while True:
            try:
                data += await self.process.stdout.receive()
            except anyio.EndOfStream:
                return data


@asynccontextmanager
async def raw_server(*options: str) -> AsyncIterator[RawPeer]:
    async with await anyio.open_process([sys.executable, str(SERVER), *options]) as process:
        try:
            yield RawPeer(process)
        finally:
            if process.returncode is None:
                process.kill()


async def initialize(peer: RawPeer) -> None:
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    )
    assert (await peer.receive())["id"] == "init"
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@anyio_test
async def test_an_oversized_line_and_invalid_json_are_answered_and_the_stream_goes_on() -> None:
    async with raw_server("--max-message-size", str(SMALL_LIMIT)) as peer:
        await peer.send_line(b'{"jsonrpc":"2.0","id":1,"method":')
        broken = await peer.receive()
        assert broken["error"]["code"] == PARSE_ERROR
        assert "id" not in broken  # unreadable, so left out (optional since 2025-11-25)
        await peer.send_line(b"\xff\xfe not UTF-8")
        assert (await peer.receive())["error"]["code"] == PARSE_ERROR
        huge = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x" * SMALL_LIMIT}}
        )
        await peer.send_line(huge.encode())
        oversized = await peer.receive()
        assert oversized["error"]["code"] == INVALID_REQUEST
        assert str(SMALL_LIMIT) in oversized["error"]["message"]
        assert "id" not in oversized  # the line was dropped unread
        # The stream continues: the next line is a conversation as usual.
        await initialize(peer)
        await peer.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        assert await peer.process.wait() == 0


@anyio_test
async def test_end_of_input_lets_the_running_request_finish_then_exits_cleanly() -> None:
    # "(S) SHOULD exit promptly on stdin EOF" (2026-07-28 lifecycle): the request still
    # running when stdin ends gets the grace period, its answer is flushed, exit 0.
    async with raw_server("--grace", "60") as peer:
        await initialize(peer)
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "test_tool_with_progress", "arguments": {}},
            }
        )
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        [answer] = [json.loads(line) for line in (await peer.rest()).splitlines()]
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"] == "Progress test completed"
        assert await peer.process.wait() == 0


@anyio_test
async def test_end_of_input_cancels_what_outlives_the_grace_and_exits_cleanly() -> None:
    async with raw_server("--grace", "0") as peer:
        await initialize(peer)
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "block", "arguments": {}, "_meta": {"progressToken": 1}},
            }
        )
        assert (await peer.receive())["method"] == "notifications/progress"  # it runs
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        assert await peer.rest() == b""  # cancelled: never answered
        assert await peer.process.wait() == 0
