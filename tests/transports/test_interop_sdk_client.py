"""The official SDK's client (``mcp`` 2.3.0) against ``examples/everything.py`` over stdio.

Issue 4's acceptance, first half: the SDK's own `mcp.Client`, launching our server as a
subprocess with its own stdio transport, in its ``legacy`` mode (the ``initialize``
handshake, 2025-11-25) and its ``auto`` mode (a ``server/discover`` probe, which our
server answers, so the connection is 2026-07-28). It lists and calls tools, reads text
and binary resources and templates, gets prompts, completes an argument and receives
progress; server-to-client requests reach its sampling, elicitation and roots callbacks
in the legacy era, and the same callbacks answer 2026-07-28 ``input_required`` results
in the modern one. The SDK runs on anyio (asyncio backend here); every test is bounded.

What tells the two paths apart from the SDK's side: a legacy server-to-client request
reaches a callback with the JSON-RPC id of that request (an int), whereas the SDK's
multi round-trip driver passes the ``inputRequests`` key (a str) as the request id.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import mcp_types as sdk_types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext

from examples.everything import JSON_SCHEMA_2020_12, PNG
from tests.transports.anyio_helpers import anyio_runner
from tests.transports.sdk_callbacks import Callbacks, text_of

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
#: The SDK's stdio client passes only a safe subset of the environment to the child.
SERVER = StdioServerParameters(
    command=sys.executable,
    args=[str(EVERYTHING), "--transport", "stdio"],
    env={"PYTHONDONTWRITEBYTECODE": "1"},
)
#: Seconds any one test may take, server start and shutdown included.
TEST_TIMEOUT = 20.0
#: Per-request read timeout handed to the SDK, so that a lost answer fails fast.
READ_TIMEOUT = 10.0

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: (SDK mode, the version it must end up on against our server).
MODES = [pytest.param("legacy", LEGACY, id="legacy"), pytest.param("auto", MODERN, id="auto")]

PNG_BYTES = base64.b64decode(PNG)
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND_LEGACY = -32002
MISSING_CLIENT_CAPABILITY = -32021


anyio_test = anyio_runner(TEST_TIMEOUT)


def connect(mode: str, **callbacks: Any) -> Client:
    """An SDK client for a fresh everything server; enter it to launch and negotiate."""
    return Client(SERVER, mode=mode, read_timeout_seconds=READ_TIMEOUT, **callbacks)


# -- connection -------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_negotiates_the_era_its_mode_asks_for(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == (
            "mcpcore-everything",
            "1.0.0",
        )
        assert client.instructions == "The mcpcore conformance fixture server."
        capabilities = client.server_capabilities
        assert capabilities.tools is not None
        assert capabilities.resources is not None
        assert capabilities.prompts is not None
        assert capabilities.completions is not None
        result = await client.call_tool("test_simple_text", {})
        # A 2026-07-28 result names the server in its _meta; a legacy one carries no _meta.
        if version == MODERN:
            assert result.meta is not None
            assert result.meta[SERVER_INFO_KEY] == {
                "name": "mcpcore-everything",
                "version": "1.0.0",
            }
        else:
            assert result.meta is None


# -- tools ------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_lists_tools_with_their_input_schemas(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        listing = await client.list_tools()
        assert listing.next_cursor is None
        tools = {tool.name: tool for tool in listing.tools}
        assert listing.tools[0].name == "test_simple_text"
        for name in (
            "test_image_content",
            "test_tool_with_progress",
            "test_sampling",
            "test_elicitation",
            "test_input_required_result_elicitation",
            "json_schema_2020_12_tool",
        ):
            assert name in tools
        for tool in listing.tools:
            assert tool.input_schema["type"] == "object", tool.name
        assert tools["test_simple_text"].description == "Returns a simple text response."
        assert tools["test_sampling"].input_schema == {
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        }
        # A 2020-12 schema ($defs, $ref, if/then/else) reaches the SDK unchanged.
        assert tools["json_schema_2020_12_tool"].input_schema == JSON_SCHEMA_2020_12


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_calls_tools_and_reads_text_and_image_content(
    mode: str, version: str
) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        text = await client.call_tool("test_simple_text", {})
        assert text.is_error is False
        assert text_of(text) == ["This is a simple text response for testing."]

        image = await client.call_tool("test_image_content", {})
        assert len(image.content) == 1
        block = image.content[0]
        assert isinstance(block, sdk_types.ImageContent)
        assert block.mime_type == "image/png"
        assert base64.b64decode(block.data) == PNG_BYTES
        assert PNG_BYTES.startswith(b"\x89PNG\r\n\x1a\n")

        mixed = await client.call_tool("test_multiple_content_types", {})
        kinds = [type(block) for block in mixed.content]
        assert kinds == [
            sdk_types.TextContent,
            sdk_types.ImageContent,
            sdk_types.EmbeddedResource,
        ]
        embedded = mixed.content[2]
        assert isinstance(embedded, sdk_types.EmbeddedResource)
        assert isinstance(embedded.resource, sdk_types.TextResourceContents)
        assert embedded.resource.text == '{"test":"data","value":123}'

        failing = await client.call_tool("test_error_handling", {})
        assert failing.is_error is True
        assert text_of(failing) == ["This tool intentionally returns an error for testing"]

        arguments = {"name": "Ada", "contactMethod": "email", "email": "ada@example.com"}
        echoed = await client.call_tool("json_schema_2020_12_tool", arguments)
        assert echoed.is_error is False
        assert text_of(echoed) == [
            'Received: {"name":"Ada","contactMethod":"email","email":"ada@example.com"}'
        ]
        # The server validates against that schema: no email for an email contact.
        refused = await client.call_tool("json_schema_2020_12_tool", {"contactMethod": "email"})
        assert refused.is_error is True


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_receives_progress_in_order(mode: str, version: str) -> None:
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with connect(mode) as client:
        assert client.protocol_version == version
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert text_of(result) == ["Progress test completed"]
    # The SDK runs each progress callback in a task of its own (spawned in arrival
    # order); checked once the client is closed, when its task group has joined them.
    assert received == [
        (0, 100, "Progress 0%"),
        (50, 100, "Progress 50%"),
        (100, 100, "Progress 100%"),
    ]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_an_unknown_tool_is_an_invalid_params_error(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
        assert caught.value.code == INVALID_PARAMS
        assert "no_such_tool" in caught.value.message
        # The session survives the error.
        assert text_of(await client.call_tool("test_simple_text", {})) == [
            "This is a simple text response for testing."
        ]


# -- resources --------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_reads_text_binary_and_templated_resources(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        listing = await client.list_resources()
        resources = {str(resource.uri): resource for resource in listing.resources}
        assert resources["test://static-text"].mime_type == "text/plain"
        assert resources["test://static-binary"].mime_type == "image/png"

        text = await client.read_resource("test://static-text")
        assert len(text.contents) == 1
        content = text.contents[0]
        assert isinstance(content, sdk_types.TextResourceContents)
        assert str(content.uri) == "test://static-text"
        assert content.mime_type == "text/plain"
        assert content.text == "This is the content of the static text resource."

        binary = await client.read_resource("test://static-binary")
        assert len(binary.contents) == 1
        blob = binary.contents[0]
        assert isinstance(blob, sdk_types.BlobResourceContents)
        assert blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob) == PNG_BYTES

        templates = await client.list_resource_templates()
        assert [
            (template.uri_template, template.name, template.mime_type)
            for template in templates.resource_templates
        ] == [("test://template/{id}/data", "template-data", "application/json")]
        templated = await client.read_resource("test://template/42/data")
        data = templated.contents[0]
        assert isinstance(data, sdk_types.TextResourceContents)
        assert str(data.uri) == "test://template/42/data"
        assert data.text == '{"id":"42","templateTest":true,"data":"Data for ID: 42"}'


@pytest.mark.parametrize(
    ("mode", "version", "code"),
    [
        # 2025-11-25 server/resources: "Resource not found: -32002".
        pytest.param("legacy", LEGACY, RESOURCE_NOT_FOUND_LEGACY, id="legacy"),
        # 2026-07-28: resource not found is -32602, and a server MUST NOT emit -32002.
        pytest.param("auto", MODERN, INVALID_PARAMS, id="auto"),
    ],
)
@anyio_test
async def test_a_missing_resource_is_the_eras_error(mode: str, version: str, code: int) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        with pytest.raises(MCPError) as caught:
            await client.read_resource("test://no-such-resource")
        assert caught.value.code == code


# -- prompts and completion ---------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_gets_prompts(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        listing = await client.list_prompts()
        prompts = {prompt.name: prompt for prompt in listing.prompts}
        assert prompts["test_simple_prompt"].arguments in (None, [])
        arguments = prompts["test_prompt_with_arguments"].arguments
        assert arguments is not None
        assert [(a.name, a.description, a.required) for a in arguments] == [
            ("arg1", "First test argument", True),
            ("arg2", "Second test argument", True),
        ]

        simple = await client.get_prompt("test_simple_prompt")
        assert [message.role for message in simple.messages] == ["user"]
        assert text_of(simple) == ["This is a simple prompt for testing."]

        with_arguments = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "one", "arg2": "two"}
        )
        assert text_of(with_arguments) == ["Prompt with arguments: arg1='one', arg2='two'"]

        image = await client.get_prompt("test_prompt_with_image")
        first = image.messages[0].content
        assert isinstance(first, sdk_types.ImageContent)
        assert base64.b64decode(first.data) == PNG_BYTES
        assert text_of(image) == ["Please analyze the image above."]


@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_completes_a_prompt_argument(mode: str, version: str) -> None:
    async with connect(mode) as client:
        assert client.protocol_version == version
        reference = sdk_types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        answer = await client.complete(reference, {"name": "arg1", "value": "par"})
        assert answer.completion.values == ["paris", "park", "party"]
        assert answer.completion.has_more is False
        other = await client.complete(reference, {"name": "arg2", "value": "b"})
        assert other.completion.values == ["beta"]


# -- the server asks the client ---------------------------------------------------------


@anyio_test
async def test_legacy_sampling_and_elicitation_reach_the_sdk_callbacks() -> None:
    callbacks = Callbacks()
    async with connect("legacy", **callbacks.as_kwargs()) as client:
        assert client.protocol_version == LEGACY
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text_of(sampled) == ["LLM response: Paris"]
        elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert text_of(elicited) == [
            'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
        ]

    [(sample_id, sample)] = callbacks.sampled
    # A real server-to-client JSON-RPC request: its id is the server's request id.
    assert isinstance(sample_id, int)
    assert sample.max_tokens == 100
    [message] = sample.messages
    assert message.role == "user"
    assert isinstance(message.content, sdk_types.TextContent)
    assert message.content.text == "Capital of France?"

    [(elicit_id, form)] = callbacks.elicited
    assert isinstance(elicit_id, int)
    assert elicit_id != sample_id
    assert form.message == "Who are you?"
    assert form.requested_schema["required"] == ["username", "email"]


@anyio_test
async def test_a_declined_elicitation_reaches_the_tool() -> None:
    callbacks = Callbacks(elicit_action="decline")
    async with connect("legacy", **callbacks.as_kwargs()) as client:
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert text_of(result) == ["User response: action=decline, content=null"]
    assert len(callbacks.elicited) == 1


@anyio_test
async def test_modern_input_required_results_reach_the_sdk_callbacks() -> None:
    callbacks = Callbacks()
    async with connect("auto", **callbacks.as_kwargs()) as client:
        assert client.protocol_version == MODERN
        result = await client.call_tool("test_input_required_result_elicitation", {})
        assert text_of(result) == ["Hello, Ada!"]
        # The SDK's driver hands the callback the inputRequests key, not a JSON-RPC id.
        [(key, form)] = callbacks.elicited
        assert key == "user_name"
        assert form.message == "What is your name?"
        assert form.requested_schema == {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }

        # Two rounds, each answered and resent with the request state.
        callbacks.elicited.clear()
        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert text_of(result) == ['{"name":"Ada"} likes {"color":"green"}']
        assert [key for key, _ in callbacks.elicited] == ["step1", "step2"]

        # Three inputs in one round: elicitation, sampling and roots.
        callbacks.elicited.clear()
        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
        assert text_of(result) == ["Got 3 answers"]
        assert [key for key, _ in callbacks.elicited] == ["user_name"]
        assert [key for key, _ in callbacks.sampled] == ["greeting"]
        assert callbacks.rooted == ["client_roots"]

        # The request state carries the earlier answer back to the handler.
        result = await client.call_tool("test_input_required_result_request_state", {})
        assert text_of(result) == ["state-ok"]

        # A handler written for the legacy era's request works the same way modern.
        callbacks.sampled.clear()
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text_of(sampled) == ["LLM response: Paris"]
        [(sample_key, sample)] = callbacks.sampled
        assert isinstance(sample_key, str)
        assert sample.max_tokens == 100


@anyio_test
async def test_a_modern_prompt_can_ask_for_input() -> None:
    answers: list[str] = []

    async def elicit(
        context: ClientRequestContext, params: sdk_types.ElicitRequestParams
    ) -> sdk_types.ElicitResult:
        answers.append(str(context.request_id))
        return sdk_types.ElicitResult(action="accept", content={"context": "interop"})

    async with connect("auto", elicitation_callback=elicit) as client:
        assert client.protocol_version == MODERN
        prompt = await client.get_prompt("test_input_required_result_prompt")
    assert text_of(prompt) == ["Use this context: interop"]
    assert answers == ["user_context"]


@anyio_test
async def test_a_modern_call_needing_an_undeclared_capability_is_refused() -> None:
    # No sampling callback, so the SDK declares no sampling capability on its requests.
    async with connect("auto") as client:
        assert client.protocol_version == MODERN
        with pytest.raises(MCPError) as caught:
            await client.call_tool("test_missing_capability", {})
    assert caught.value.code == MISSING_CLIENT_CAPABILITY
    assert caught.value.error.data == {"requiredCapabilities": {"sampling": {}}}
