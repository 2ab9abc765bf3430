"""Our HTTP client against the official SDK's HTTP servers (``mcp`` 2.3.0 on uvicorn).

``tests/transports/sdk_http_server.py`` serves the SDK interop fixture
(`sdk_stdio_server.build`) three ways: Streamable HTTP answering with event streams
(the SDK's default), Streamable HTTP answering with JSON, and the 2024-11-05 HTTP+SSE
transport. The SDK serves both eras on its Streamable HTTP endpoint: ``legacy`` makes a
session, ``auto`` and ``modern`` speak 2026-07-28. Each server is a subprocess shared by
the tests of this module.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
import trio

from mcpcore import types
from mcpcore.client import ConnectMode, McpError
from mcpcore.versions import Era
from tests.transports.sdk_stdio_server import BINARY, GIF, NAME, TEXT, VERSION
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from transports import HttpClient, open_http_client

SDK_SERVER = REPOSITORY / "tests" / "transports" / "sdk_http_server.py"
#: Seconds any one request may take (the SDK server answers in milliseconds).
REQUEST_TIMEOUT = 10.0
#: Seconds the SDK server may take to start listening (it imports a lot).
START_TIMEOUT = 30.0
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
INVALID_PARAMS = -32602
MODES = [
    pytest.param("legacy", Era.LEGACY, LEGACY, id="legacy"),
    pytest.param("auto", Era.MODERN, MODERN, id="auto"),
    pytest.param("modern", Era.MODERN, MODERN, id="modern"),
]


@contextmanager
def sdk_process(*flags: str) -> Iterator[str]:
    """Run the SDK server with ``flags``; its base URL."""
    process = subprocess.Popen(
        [PYTHON, str(SDK_SERVER), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPOSITORY,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its port, or dies (EOF)
        assert line.startswith("PORT "), f"the SDK server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        if process.stdout is not None:
            process.stdout.close()
        process.terminate()
        try:
            process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module", params=["sse-answers", "json-answers"])
def streamable_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The SDK's Streamable HTTP endpoint, answering with event streams or with JSON.

    A JSON answer carries no notifications: the JSON variant's URL ends in ``#json``
    (a fragment, never sent) so that tests can tell.
    """
    json = request.param == "json-answers"
    with sdk_process(*(("--json-response",) if json else ())) as base:
        yield f"{base}/mcp" + ("#json" if json else "")


@pytest.fixture(scope="module")
def http_sse_url() -> Iterator[str]:
    """The SDK's 2024-11-05 HTTP+SSE endpoint."""
    with sdk_process("--sse") as base:
        yield f"{base}/sse"


@asynccontextmanager
async def connected(url: str, mode: ConnectMode, **options: Any) -> AsyncIterator[HttpClient]:
    async with open_http_client(url, mode=mode, timeout=REQUEST_TIMEOUT, **options) as client:
        yield client


def texts(blocks: list[Any]) -> list[str]:
    return [block.text for block in blocks if isinstance(block, types.TextContent)]


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_tools(streamable_url: str, mode: ConnectMode, era: Era, version: str) -> None:
    async with connected(streamable_url, mode) as client:
        assert (client.era, client.protocol_version) == (era, version)
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == (NAME, VERSION)
        # Sessions belong to the legacy era only ("sessions are removed" in 2026-07-28).
        assert (client.session_id is not None) == (era is Era.LEGACY)
        tools = {tool.name: tool async for tool in client.iter_tools()}
        assert list(tools) == ["echo", "add", "image", "count_with_progress"]
        assert tools["add"].input_schema["required"] == ["a", "b"]

        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert texts(echoed.content) == ["echo: héllo ✓"]
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"result": 42}
        image = await client.call_tool("image")
        [block] = image.content
        assert isinstance(block, types.ImageContent)
        assert base64.b64decode(block.data) == GIF
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error is True


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_resources_text_and_binary(
    streamable_url: str, mode: ConnectMode, era: Era, version: str
) -> None:
    async with connected(streamable_url, mode) as client:
        text = await client.read_resource("sdk://text")
        [content] = text.contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text == TEXT
        binary = await client.read_resource("sdk://binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == BINARY
        item = await client.read_resource("sdk://items/7")
        [item_content] = item.contents
        assert isinstance(item_content, types.TextResourceContents)
        assert item_content.text == "item 7"
        with pytest.raises(McpError) as caught:
            await client.read_resource("sdk://no-such-resource")
        assert caught.value.code == INVALID_PARAMS


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_prompts(streamable_url: str, mode: ConnectMode, era: Era, version: str) -> None:
    async with connected(streamable_url, mode) as client:
        [prompt] = [prompt async for prompt in client.iter_prompts()]
        assert prompt.name == "greet"
        formal = await client.get_prompt("greet", {"name": "Ada", "tone": "formal"})
        assert texts([m.content for m in formal.messages]) == ["Write a formal greeting for Ada."]


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_progress(streamable_url: str, mode: ConnectMode, era: Era, version: str) -> None:
    received: list[tuple[float, float | None, str | None]] = []
    async with connected(streamable_url, mode) as client:
        result = await client.call_tool(
            "count_with_progress",
            {"steps": 4},
            progress=lambda value, total, message: received.append((value, total, message)),
        )
        assert texts(result.content) == ["counted to 4"]
        if streamable_url.endswith("#json"):
            # The SDK drops the progress of a request it answers with JSON.
            assert received == []
            return
        assert received[-1] == (4.0, 4.0, "step 4")
        progresses = [value for value, _, _ in received]
        assert progresses == sorted(set(progresses))


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_concurrent_calls(
    streamable_url: str, mode: ConnectMode, era: Era, version: str
) -> None:
    async with connected(streamable_url, mode) as client:
        answers: dict[int, list[str]] = {}

        async def add(n: int) -> None:
            answers[n] = texts((await client.call_tool("add", {"a": n, "b": 1})).content)

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(add, n)
        assert answers == {n: [str(n + 1)] for n in range(20)}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@trio_test
async def test_the_2024_11_05_transport(http_sse_url: str, mode: ConnectMode) -> None:
    async with connected(http_sse_url, mode) as client:
        assert client.uses_http_sse
        assert client.era is Era.LEGACY
        tools = [tool.name async for tool in client.iter_tools()]
        assert "add" in tools
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert texts(added.content) == ["3"]
        received: list[float] = []
        await client.call_tool(
            "count_with_progress",
            {"steps": 3},
            progress=lambda value, total, message: received.append(value),
        )
        assert received[-1] == 3
        binary = await client.read_resource("sdk://binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == BINARY
