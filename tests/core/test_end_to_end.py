"""`ClientSession` against `Server`: the library's two halves talking, with no IO.

The everything server answers a real session in both eras: era detection, MRTR and
legacy server requests through the same callbacks, pagination through signed cursors,
the 2026-07-28 result cache, and servers that speak only one era.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from examples.everything import build_server
from mcpcore import jsonrpc, types
from mcpcore.client import ClientCallbacks, IncompatibleServerError, McpError
from mcpcore.server import Server
from mcpcore.versions import (
    LATEST_LEGACY_VERSION,
    LATEST_MODERN_VERSION,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    Era,
)
from tests.core.memory_link import MemoryLink
from tests.core.test_server_tools import asynchronous

SECRET = b"k" * 32


async def no_sleep(seconds: float) -> None:
    return None


class Clock:
    """Seconds, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def everything(**options: Any) -> Server:
    options.setdefault("secret", SECRET)
    options.setdefault("clock", Clock())
    return build_server(no_sleep, **options)


class Answers:
    """The user and the model behind the client's callbacks; remembers what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult:
        self.asked.append(f"elicit:{params.message}")
        assert isinstance(params, types.ElicitRequestFormParams)
        properties = params.requested_schema.get("properties", {})
        content: dict[str, Any] = {
            name: {"boolean": True}.get(schema.get("type"), name.upper())
            for name, schema in properties.items()
        }
        return types.ElicitResult(action="accept", content=content)

    async def sample(self, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append("sample")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="Paris"), model="test-model"
        )

    async def roots(self) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    def callbacks(self) -> ClientCallbacks:
        return ClientCallbacks(elicitation=self.elicit, sampling=self.sample, roots=self.roots)


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


# -- choosing the era ------------------------------------------------------------


@asynchronous
async def test_auto_connect_finds_the_modern_era_without_a_handshake() -> None:
    link = MemoryLink(everything())
    assert await link.session.connect() is Era.MODERN
    assert link.session.protocol_version == LATEST_MODERN_VERSION
    assert link.served == ["server/discover"]
    info = link.session.server_info
    assert info is not None
    assert info.name == "mcpcore-everything"
    assert link.session.instructions == "The mcpcore conformance fixture server."
    capabilities = link.session.server_capabilities
    assert capabilities is not None
    assert capabilities.tools is not types.UNSET
    result = await link.session.call_tool("test_simple_text")
    assert text_of(result) == "This is a simple text response for testing."


@asynchronous
async def test_legacy_mode_runs_the_handshake_and_then_works() -> None:
    link = MemoryLink(everything())
    assert await link.session.connect("legacy") is Era.LEGACY
    assert link.session.protocol_version == LATEST_LEGACY_VERSION
    assert link.served == ["initialize"]
    result = await link.session.call_tool("test_simple_text")
    assert text_of(result) == "This is a simple text response for testing."
    assert link.connection.protocol_version == LATEST_LEGACY_VERSION


@asynchronous
async def test_a_legacy_only_server_makes_auto_fall_back_to_initialize() -> None:
    link = MemoryLink(everything(supported_versions=LEGACY_VERSIONS))
    assert await link.session.connect() is Era.LEGACY
    # The server's Connection refused the probe itself; only the handshake was served.
    assert link.served == ["initialize"]
    probe, refusal = link.pair.emitted[:2]
    assert b'"server/discover"' in probe[1]
    assert json.loads(refusal[1])["error"]["code"] == jsonrpc.INVALID_REQUEST
    # The probe and its refusal belong to 2026-07-28; the rest to the legacy revision.
    del link.pair.emitted[:2]
    assert link.session.protocol_version == LATEST_LEGACY_VERSION
    tools = [tool.name async for tool in link.session.iter_tools()]
    assert "test_simple_text" in tools


@asynchronous
async def test_a_modern_only_server_is_spoken_to_at_once() -> None:
    link = MemoryLink(everything(supported_versions=MODERN_VERSIONS))
    assert await link.session.connect() is Era.MODERN
    assert link.served == ["server/discover"]


@asynchronous
async def test_a_modern_only_server_refuses_a_legacy_only_client() -> None:
    link = MemoryLink(everything(supported_versions=MODERN_VERSIONS))
    with pytest.raises(IncompatibleServerError) as raised:
        await link.session.connect("legacy")
    assert raised.value.supported == MODERN_VERSIONS
    assert link.served == []  # the server's Connection answered the handshake itself


# -- input from the client: MRTR (2026-07-28) and server requests (legacy) ---------------


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_one_callback_answers_elicitation_in_either_era(mode: str) -> None:
    answers = Answers()
    link = MemoryLink(everything(), callbacks=answers.callbacks())
    await link.session.connect(mode)  # type: ignore[arg-type]
    result = await link.session.call_tool("test_input_required_result_elicitation")
    assert text_of(result) == "Hello, NAME!"
    assert answers.asked == ["elicit:What is your name?"]
    if mode == "modern":
        # Two tools/call requests: the first answered InputRequiredResult, then the retry.
        assert link.served.count("tools/call") == 2
    else:
        assert link.served.count("tools/call") == 1


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_a_multi_round_tool_asks_twice_and_gets_both_answers(mode: str) -> None:
    answers = Answers()
    link = MemoryLink(everything(), callbacks=answers.callbacks())
    await link.session.connect(mode)  # type: ignore[arg-type]
    result = await link.session.call_tool("test_input_required_result_multi_round")
    assert text_of(result) == '{"name":"NAME"} likes {"color":"COLOR"}'
    assert answers.asked == [
        "elicit:Step 1: What is your name?",
        "elicit:Step 2: What is your favorite color?",
    ]


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_several_inputs_at_once_reach_every_callback(mode: str) -> None:
    answers = Answers()
    link = MemoryLink(everything(), callbacks=answers.callbacks())
    await link.session.connect(mode)  # type: ignore[arg-type]
    result = await link.session.call_tool("test_input_required_result_multiple_inputs")
    assert text_of(result) == "Got 3 answers"
    assert sorted(answers.asked) == ["elicit:What is your name?", "roots", "sample"]


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_sampling_goes_to_the_clients_model(mode: str) -> None:
    answers = Answers()
    link = MemoryLink(everything(), callbacks=answers.callbacks())
    await link.session.connect(mode)  # type: ignore[arg-type]
    result = await link.session.call_tool("test_input_required_result_sampling")
    assert text_of(result) == "The model said: Paris"
    result = await link.session.call_tool("test_input_required_result_list_roots")
    assert text_of(result) == "Found 1 root(s)"
    assert answers.asked == ["sample", "roots"]


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_a_tool_asks_only_what_the_client_declared(mode: str) -> None:
    answers = Answers()
    callbacks = ClientCallbacks(sampling=answers.sample)  # no elicitation
    link = MemoryLink(everything(), callbacks=callbacks)
    await link.session.connect(mode)  # type: ignore[arg-type]
    result = await link.session.call_tool("test_input_required_result_capabilities")
    assert text_of(result) == "done"
    assert answers.asked == ["sample"]


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_a_missing_capability_is_an_error_not_a_question(mode: str) -> None:
    link = MemoryLink(everything())
    await link.session.connect(mode)  # type: ignore[arg-type]
    with pytest.raises(McpError) as raised:
        await link.session.call_tool("test_input_required_result_elicitation")
    # -32021 names what is missing in either era (the legacy revisions define no code
    # of their own for it); the client learns it, not the server's internals.
    assert raised.value.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert raised.value.data == {"requiredCapabilities": {"elicitation": {}}}


@asynchronous
async def test_a_tool_error_is_a_result_not_an_exception() -> None:
    link = MemoryLink(everything())
    await link.session.connect()
    result = await link.session.call_tool("test_error_handling")
    assert result.is_error is True
    assert text_of(result) == "This tool intentionally returns an error for testing"


# -- lists, pages and the cache ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_iterating_walks_every_page_of_signed_cursors(mode: str) -> None:
    server = everything(page_size=2)
    link = MemoryLink(server)
    await link.session.connect(mode)  # type: ignore[arg-type]
    names = [tool.name async for tool in link.session.iter_tools()]
    assert names == [tool.name for tool in server.tools.definitions(modern=mode == "modern")]
    assert len(names) > 2
    assert link.served.count("tools/list") == -(-len(names) // 2)
    prompts = [prompt.name async for prompt in link.session.iter_prompts()]
    assert prompts == [prompt.name for prompt in server.prompts.definitions()]
    first = await link.session.list_tools()
    assert isinstance(first.next_cursor, str)
    second = await link.session.list_tools(first.next_cursor)
    assert [tool.name for tool in second.tools] == names[2:4]


@asynchronous
async def test_a_cursor_from_another_list_is_refused() -> None:
    link = MemoryLink(everything(page_size=2))
    await link.session.connect()
    tools = await link.session.list_tools()
    assert isinstance(tools.next_cursor, str)
    with pytest.raises(McpError) as raised:
        await link.session.list_prompts(tools.next_cursor)
    assert raised.value.code == jsonrpc.INVALID_PARAMS


@asynchronous
async def test_the_servers_ttl_lets_the_session_skip_requests() -> None:
    clock = Clock()
    link = MemoryLink(everything(cache_ttl_ms=5000), clock=clock)
    await link.session.connect()
    first = await link.session.list_tools()
    assert first.ttl_ms == 5000
    again = await link.session.list_tools()
    assert again == first
    read = await link.session.read_resource("test://static-text")
    await link.session.read_resource("test://static-text")
    assert link.served.count("tools/list") == 1
    assert link.served.count("resources/read") == 1
    clock.now += 5.0
    await link.session.list_tools()
    await link.session.read_resource("test://static-text")
    assert link.served.count("tools/list") == 2
    assert link.served.count("resources/read") == 2
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)


@asynchronous
async def test_without_a_ttl_nothing_is_cached() -> None:
    link = MemoryLink(everything(), clock=Clock())
    await link.session.connect()
    await link.session.list_tools()
    await link.session.list_tools()
    assert link.served.count("tools/list") == 2


# -- resources, prompts, completion -----------------------------------------------------


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@asynchronous
async def test_resources_prompts_and_completion_answer_a_session(mode: str) -> None:
    link = MemoryLink(everything())
    await link.session.connect(mode)  # type: ignore[arg-type]
    uris = [resource.uri async for resource in link.session.iter_resources()]
    assert "test://static-text" in uris
    templates = [t.uri_template async for t in link.session.iter_resource_templates()]
    assert templates == ["test://template/{id}/data"]
    read = await link.session.read_resource("test://template/42/data")
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert "42" in contents.text
    prompt = await link.session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    [message] = prompt.messages
    assert isinstance(message.content, types.TextContent)
    assert "a" in message.content.text
    with pytest.raises(McpError) as raised:
        await link.session.read_resource("test://nowhere")
    # "Resource not found → -32602" in 2026-07-28 (it MUST NOT be -32002), -32002 before.
    expected = jsonrpc.INVALID_PARAMS if mode == "modern" else jsonrpc.RESOURCE_NOT_FOUND
    assert raised.value.code == expected
