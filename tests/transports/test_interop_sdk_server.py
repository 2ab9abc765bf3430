"""Our stdio client against a server built with the official SDK (``mcp`` 2.3.0).

Issue 4's acceptance, second half: `open_stdio_client` launches
``tests/transports/sdk_stdio_server.py`` (an `mcp.server.mcpserver.MCPServer` on the
SDK's own stdio runner) and, in the ``legacy`` and ``auto`` modes, lists and calls
tools, reads a text and a binary resource, gets a prompt with arguments and receives
progress. The SDK's stdio runner serves both eras on one connection and answers
``server/discover``, so ``auto`` ends up in 2026-07-28 there; ``modern`` (no probe)
gets the same. Every test is bounded by `trio_test`.
"""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpcore import types
from mcpcore.client import ConnectMode, McpError
from mcpcore.versions import Era
from tests.transports.sdk_stdio_server import BINARY, GIF, NAME, TEXT, VERSION
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from transports import StdioClient, open_stdio_client

SDK_SERVER = REPOSITORY / "tests" / "transports" / "sdk_stdio_server.py"
#: Seconds any one request may take (the SDK server answers in milliseconds).
REQUEST_TIMEOUT = 10.0

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: (our client's mode, the era it must end up in against the SDK server).
MODES = [
    pytest.param("legacy", Era.LEGACY, LEGACY, id="legacy"),
    pytest.param("auto", Era.MODERN, MODERN, id="auto"),
]
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
INVALID_PARAMS = -32602


@asynccontextmanager
async def sdk_server(mode: ConnectMode) -> AsyncIterator[StdioClient]:
    """Our client, connected in ``mode`` to a fresh SDK server subprocess."""
    async with open_stdio_client(
        PYTHON,
        [str(SDK_SERVER)],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=REPOSITORY,
        # The SDK logs failed lookups on stderr; kept for a failing test's report.
        stderr="capture",
        mode=mode,
        timeout=REQUEST_TIMEOUT,
    ) as client:
        yield client


def texts(blocks: list[Any]) -> list[str]:
    return [block.text for block in blocks if isinstance(block, types.TextContent)]


@pytest.mark.parametrize(
    ("mode", "era", "version"),
    [*MODES, pytest.param("modern", Era.MODERN, MODERN, id="modern")],
)
@trio_test
async def test_our_client_reaches_the_era_its_mode_asks_for(
    mode: ConnectMode, era: Era, version: str
) -> None:
    async with sdk_server(mode) as client:
        assert client.era is era
        assert client.protocol_version == version
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == (NAME, VERSION)
        assert client.instructions == "The SDK interop fixture server."
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not types.UNSET
        assert capabilities.resources is not types.UNSET
        assert capabilities.prompts is not types.UNSET
        result = await client.call_tool("echo", {"text": "era"})
        # A 2026-07-28 result names the server in its _meta; a legacy one has none.
        if era is Era.MODERN:
            assert result.result_type == "complete"
            assert isinstance(result.meta, dict)
            assert result.meta[SERVER_INFO_KEY] == {"name": NAME, "version": VERSION}
        else:
            assert result.meta is types.UNSET
        assert client.returncode is None


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_our_client_lists_and_calls_the_sdk_servers_tools(
    mode: ConnectMode, era: Era, version: str
) -> None:
    async with sdk_server(mode) as client:
        assert (client.era, client.protocol_version) == (era, version)
        tools = {tool.name: tool async for tool in client.iter_tools()}
        assert list(tools) == ["echo", "add", "image", "count_with_progress"]
        # The SDK derives schemas from the signatures (pydantic: titles included).
        assert tools["add"].input_schema["properties"] == {
            "a": {"title": "A", "type": "integer"},
            "b": {"title": "B", "type": "integer"},
        }
        assert tools["add"].input_schema["required"] == ["a", "b"]
        assert tools["add"].description == "Adds two integers."
        assert tools["echo"].output_schema != types.UNSET
        for tool in tools.values():
            assert tool.input_schema["type"] == "object", tool.name

        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert echoed.is_error is False
        assert texts(echoed.content) == ["echo: héllo ✓"]
        assert echoed.structured_content == {"result": "echo: héllo ✓"}

        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert texts(added.content) == ["42"]
        assert added.structured_content == {"result": 42}

        image = await client.call_tool("image")
        [block] = image.content
        assert isinstance(block, types.ImageContent)
        assert block.mime_type == "image/gif"
        assert base64.b64decode(block.data) == GIF

        # The SDK answers an unknown tool with a failed result, not a protocol error.
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error is True
        assert texts(unknown.content) == ["Unknown tool: no_such_tool"]


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_our_client_receives_the_sdk_servers_progress(
    mode: ConnectMode, era: Era, version: str
) -> None:
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with sdk_server(mode) as client:
        assert (client.era, client.protocol_version) == (era, version)
        result = await client.call_tool("count_with_progress", {"steps": 4}, progress=on_progress)
        assert texts(result.content) == ["counted to 4"]
        # The last progress value is reported before the call returns.
        assert received[-1] == (4.0, 4.0, "step 4")
        # Values the callback did not get to see may be skipped, never reordered.
        progresses = [progress for progress, _, _ in received]
        assert progresses == sorted(set(progresses))
        assert all(total == 4 for _, total, _ in received)
        assert all(message == f"step {int(value)}" for value, _, message in received)


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_our_client_reads_the_sdk_servers_resources(
    mode: ConnectMode, era: Era, version: str
) -> None:
    async with sdk_server(mode) as client:
        assert (client.era, client.protocol_version) == (era, version)
        resources = {resource.uri: resource async for resource in client.iter_resources()}
        assert resources["sdk://text"].mime_type == "text/plain"
        assert resources["sdk://binary"].mime_type == "application/octet-stream"

        text = await client.read_resource("sdk://text")
        [content] = text.contents
        assert isinstance(content, types.TextResourceContents)
        assert (content.uri, content.mime_type, content.text) == ("sdk://text", "text/plain", TEXT)

        binary = await client.read_resource("sdk://binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert blob.uri == "sdk://binary"
        assert blob.mime_type == "application/octet-stream"
        assert base64.b64decode(blob.blob) == BINARY

        templates = [template async for template in client.iter_resource_templates()]
        assert [(t.uri_template, t.name) for t in templates] == [("sdk://items/{item_id}", "item")]
        item = await client.read_resource("sdk://items/7")
        [item_content] = item.contents
        assert isinstance(item_content, types.TextResourceContents)
        assert item_content.text == "item 7"

        # The SDK says -32602 for an unknown resource in both eras (2025-11-25 names
        # -32002, which clients SHOULD accept too; the SDK server does not send it).
        with pytest.raises(McpError) as caught:
            await client.read_resource("sdk://no-such-resource")
        assert caught.value.code == INVALID_PARAMS


@pytest.mark.parametrize(("mode", "era", "version"), MODES)
@trio_test
async def test_our_client_gets_the_sdk_servers_prompt(
    mode: ConnectMode, era: Era, version: str
) -> None:
    async with sdk_server(mode) as client:
        assert (client.era, client.protocol_version) == (era, version)
        [prompt] = [prompt async for prompt in client.iter_prompts()]
        assert prompt.name == "greet"
        assert prompt.description == "Greets someone."
        assert prompt.arguments is not types.UNSET
        assert [(argument.name, argument.required) for argument in prompt.arguments] == [
            ("name", True),
            ("tone", False),
        ]

        default = await client.get_prompt("greet", {"name": "Ada"})
        [message] = default.messages
        assert message.role == "user"
        assert texts([message.content]) == ["Write a friendly greeting for Ada."]

        formal = await client.get_prompt("greet", {"name": "Ada", "tone": "formal"})
        assert texts([m.content for m in formal.messages]) == ["Write a formal greeting for Ada."]
