"""The official SDK's Streamable HTTP client (``mcp`` 2.3.0) against our server over HTTP.

``examples/everything.py --transport http`` runs as a subprocess, and so does
`transports.AsgiApp` (``examples.everything:asgi_app``) under every ASGI server issue 17
names (uvicorn on asyncio/h11 and on uvloop/httptools, hypercorn's trio and asyncio
workers, granian) and mounted under a prefix in FastAPI and in Starlette
(`tests.asgi.servers.ENDPOINTS`): the same tests run against each. The SDK's `mcp.Client`
connects to its URL in its ``legacy`` mode (the ``initialize`` handshake and a session,
2025-11-25) and its ``auto`` mode (a ``server/discover`` probe, which our server answers:
2026-07-28, stateless). It lists and calls tools, reads resources, gets prompts and
receives progress; in the legacy era the server's sampling and elicitation requests reach
its callbacks over the call's own stream. The SDK runs on anyio (asyncio here); every
test is bounded.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import mcp_types as sdk_types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from examples.everything import PNG
from tests.asgi.servers import ENDPOINTS, everything_endpoint
from tests.transports.anyio_helpers import anyio_runner

#: Seconds any one test may take.
TEST_TIMEOUT = 30.0
#: Per-request read timeout handed to the SDK, so that a lost answer fails fast.
READ_TIMEOUT = 10.0
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
MODES = [pytest.param("legacy", LEGACY, id="legacy"), pytest.param("auto", MODERN, id="auto")]


#: How the everything server is served: `transports.serve_http`, then each ASGI endpoint
#: (one process each, shared by the module's tests: pytest groups them by parameter).
SERVED = ["serve_http", *ENDPOINTS]


@pytest.fixture(scope="module", params=SERVED)
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with everything_endpoint(request.param) as endpoint:
        yield endpoint


anyio_test = anyio_runner(TEST_TIMEOUT)


def texts(result: sdk_types.CallToolResult | sdk_types.GetPromptResult) -> list[str]:
    if isinstance(result, sdk_types.GetPromptResult):
        blocks: list[Any] = [message.content for message in result.messages]
    else:
        blocks = list(result.content)
    return [block.text for block in blocks if isinstance(block, sdk_types.TextContent)]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_lists_and_calls_tools(url: str, mode: str, version: str) -> None:
    async with Client(url, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
        assert client.protocol_version == version
        assert client.server_info is not None
        assert client.server_info.name == "mcpcore-everything"
        tools = (await client.list_tools()).tools
        assert tools[0].name == "test_simple_text"
        assert "test_x_mcp_header" in {tool.name for tool in tools}
        simple = await client.call_tool("test_simple_text", {})
        assert texts(simple) == ["This is a simple text response for testing."]
        image = await client.call_tool("test_image_content", {})
        [block] = image.content
        assert isinstance(block, sdk_types.ImageContent)
        assert block.data == PNG
        failing = await client.call_tool("test_error_handling", {})
        assert failing.is_error
        # The x-mcp-header argument is mirrored into Mcp-Param-Region by the SDK on the
        # modern wire, and checked against the body by our server.
        regional = await client.call_tool("test_x_mcp_header", {"region": "us west 1"})
        assert texts(regional) == ["region=us west 1"]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_reads_resources_and_gets_prompts(url: str, mode: str, version: str) -> None:
    async with Client(url, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
        assert client.protocol_version == version
        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        assert "test://static-text" in uris
        text = await client.read_resource("test://static-text")
        [contents] = text.contents
        assert isinstance(contents, sdk_types.TextResourceContents)
        assert contents.text == "This is the content of the static text resource."
        binary = await client.read_resource("test://static-binary")
        [blob] = binary.contents
        assert isinstance(blob, sdk_types.BlobResourceContents)
        assert base64.b64decode(blob.blob).startswith(b"\x89PNG")
        templated = await client.read_resource("test://template/42/data")
        [data] = templated.contents
        assert isinstance(data, sdk_types.TextResourceContents)
        assert '"id":"42"' in data.text
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "one", "arg2": "two"}
        )
        assert texts(prompt) == ["Prompt with arguments: arg1='one', arg2='two'"]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_receives_progress(url: str, mode: str, version: str) -> None:
    received: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total))

    async with Client(url, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
        assert client.protocol_version == version
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert texts(result) == ["Progress test completed"]
    assert received == [(0, 100), (50, 100), (100, 100)]


@anyio_test
async def test_legacy_sampling_and_elicitation_travel_on_the_calls_stream(url: str) -> None:
    asked: list[str] = []

    async def sample(
        context: ClientRequestContext, params: sdk_types.CreateMessageRequestParams
    ) -> sdk_types.CreateMessageResult:
        asked.append("sampling")
        return sdk_types.CreateMessageResult(
            role="assistant",
            content=sdk_types.TextContent(type="text", text="Paris"),
            model="interop",
        )

    async def elicit(
        context: ClientRequestContext, params: sdk_types.ElicitRequestParams
    ) -> sdk_types.ElicitResult:
        asked.append("elicitation")
        return sdk_types.ElicitResult(
            action="accept", content={"username": "ada", "email": "ada@example.com"}
        )

    async with Client(
        url,
        mode="legacy",
        read_timeout_seconds=READ_TIMEOUT,
        sampling_callback=sample,
        elicitation_callback=elicit,
    ) as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert texts(sampled) == ["LLM response: Paris"]
        elicited = await client.call_tool("test_elicitation", {"message": "Who?"})
        assert texts(elicited)[0].startswith("User response: action=accept")
    assert asked == ["sampling", "elicitation"]
