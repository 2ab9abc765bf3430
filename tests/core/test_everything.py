"""The everything example server, fixture by fixture, in both eras, through the core alone.

This is what the official conformance suite will check over HTTP (issue 5); here the
same fixtures run through a client Connection in memory, and every message either side
emits is validated against the schema of the revision in use.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from examples.everything import build_server
from mcpcore import ErrorReceived, NotificationReceived, ProgressReceived, RequestReceived, types
from mcpcore.server import Server
from mcpcore.types import SUBSCRIPTION_ID_META_KEY
from tests.core.server_harness import Harness
from tests.core.test_server_tools import asynchronous

CAPS = types.ClientCapabilities(
    sampling=types.SamplingCapability(),
    elicitation=types.ElicitationCapability(),
    roots=types.RootsCapability(list_changed=True),
)


async def no_sleep(seconds: float) -> None:
    return None


def everything(now: list[float] | None = None) -> Server:
    clock = (lambda: now[0]) if now is not None else (lambda: 0.0)
    return build_server(no_sleep, secret=b"s" * 32, clock=clock)


def client_answers(request: RequestReceived) -> Any:
    """How a well-behaved client answers the server (legacy era)."""
    if request.method == "sampling/createMessage":
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text="The capital of France is Paris."),
            model="test-model",
        )
    if request.method == "elicitation/create":
        properties = request.params.requested_schema.get("properties", {})
        content: dict[str, Any] = {
            name: {"string": "x", "boolean": True}.get(schema.get("type"), "x")
            for name, schema in properties.items()
        }
        return types.ElicitResult(action="accept", content=content)
    assert request.method == "roots/list"
    return types.ListRootsResult(roots=[types.Root(uri="file:///test/root", name="Test Root")])


async def legacy(server: Server | None = None) -> Harness:
    harness = Harness(server or everything(), client_caps=CAPS, answer=client_answers)
    await harness.handshake()
    return harness


def modern(server: Server | None = None, caps: types.ClientCapabilities = CAPS) -> Harness:
    harness = Harness(server or everything(), client_caps=caps)
    harness.go_modern()
    return harness


def call(
    name: str, arguments: dict[str, Any] | None = None, **fields: Any
) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(
        name=name, arguments=types.UNSET if arguments is None else arguments, **fields
    )


# ------------------------------------------------------------------ lifecycle


@asynchronous
async def test_initialize_and_discover_advertise_what_is_served() -> None:
    harness = await legacy()
    assert harness.connection.their_info == types.Implementation(name="test", version="1.0")
    result = harness.client.their_capabilities
    assert isinstance(result, types.ServerCapabilities)
    assert result.tools == types.ServerToolsCapability(list_changed=True)
    assert result.resources == types.ServerResourcesCapability(subscribe=True, list_changed=True)
    assert result.completions == {}
    discover = await modern().result("server/discover")
    assert discover.supported_versions == ["2026-07-28"]
    assert discover.meta[types.SERVER_INFO_META_KEY]["name"] == "mcpcore-everything"
    assert (discover.ttl_ms, discover.cache_scope, discover.result_type) == (
        0,
        "private",
        "complete",
    )


@asynchronous
async def test_ping_and_set_level_answer_exactly_empty() -> None:
    harness = await legacy()
    await harness.result("ping")
    await harness.result("logging/setLevel", types.SetLevelRequestParams(level="info"))
    replies = [json.loads(data) for sender, data, _ in harness.pair.emitted if sender == "server"]
    assert replies[-1]["result"] == {}
    assert replies[-2]["result"] == {}


# ------------------------------------------------------------------ tools


@pytest.mark.parametrize("era", ["legacy", "modern"])
@asynchronous
async def test_content_fixtures(era: str) -> None:
    harness = await legacy() if era == "legacy" else modern()
    tools = (await harness.result("tools/list")).tools
    assert tools[0].name == "test_simple_text"
    assert all(tool.description and tool.input_schema["type"] == "object" for tool in tools)
    simple = await harness.result("tools/call", call("test_simple_text"))
    assert simple.content == [types.TextContent(text="This is a simple text response for testing.")]
    image = await harness.result("tools/call", call("test_image_content", {}))
    assert image.content[0].mime_type == "image/png"
    assert image.content[0].data
    audio = await harness.result("tools/call", call("test_audio_content"))
    assert audio.content[0].mime_type == "audio/wav"
    embedded = await harness.result("tools/call", call("test_embedded_resource"))
    assert embedded.content[0].resource.uri == "test://embedded-resource"
    mixed = await harness.result("tools/call", call("test_multiple_content_types"))
    assert [type(block).__name__ for block in mixed.content] == [
        "TextContent",
        "ImageContent",
        "EmbeddedResource",
    ]
    error = await harness.result("tools/call", call("test_error_handling"))
    assert error.is_error is True
    assert error.content[0].text
    schema_tool = next(t for t in tools if t.name == "json_schema_2020_12_tool")
    assert schema_tool.input_schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema_tool.input_schema["additionalProperties"] is False


@asynchronous
async def test_progress_reaches_the_caller_with_its_token() -> None:
    harness = modern()
    params = call("test_tool_with_progress", meta={"progressToken": "progress-test-1"})
    await harness.result("tools/call", params)
    progress = [e for e in harness.notifications if isinstance(e, ProgressReceived)]
    assert [(e.progress_token, e.progress, e.total) for e in progress] == [
        ("progress-test-1", 0, 100),
        ("progress-test-1", 50, 100),
        ("progress-test-1", 100, 100),
    ]
    quiet = modern()
    await quiet.result("tools/call", call("test_tool_with_progress"))
    assert not quiet.notifications  # no token, no progress


@asynchronous
async def test_logging_only_when_asked() -> None:
    harness = await legacy()
    await harness.result("tools/call", call("test_tool_with_logging"))
    assert harness.notifications == []  # no logging/setLevel yet
    await harness.result("logging/setLevel", types.SetLevelRequestParams(level="debug"))
    await harness.result("tools/call", call("test_tool_with_logging"))
    assert len([n for n in harness.notifications if isinstance(n, NotificationReceived)]) == 3
    modern_harness = modern()
    await modern_harness.result("tools/call", call("test_logging_tool"))
    assert modern_harness.notifications == []  # no logLevel in _meta
    params = call("test_logging_tool", meta={"io.modelcontextprotocol/logLevel": "info"})
    await modern_harness.result("tools/call", params)
    assert len(modern_harness.notifications) == 1


@asynchronous
async def test_legacy_sampling_and_elicitation_are_server_requests() -> None:
    harness = await legacy()
    sampled = await harness.result(
        "tools/call", call("test_sampling", {"prompt": "Test prompt for sampling"})
    )
    assert sampled.content[0].text == "LLM response: The capital of France is Paris."
    elicited = await harness.result(
        "tools/call", call("test_elicitation", {"message": "Please provide your information"})
    )
    assert elicited.content[0].text.startswith("User response: action=accept")
    assert [r.method for r in harness.asked] == ["sampling/createMessage", "elicitation/create"]
    defaults = harness.asked[-1].params.requested_schema
    assert defaults["required"] == ["username", "email"]


@asynchronous
async def test_a_missing_capability_is_32021() -> None:
    harness = modern(caps=types.ClientCapabilities())
    event = await harness.call("tools/call", call("test_missing_capability"))
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32021
    assert event.error.data == {"requiredCapabilities": {"sampling": {}}}
    ok = await modern().result("tools/call", call("test_missing_capability"))
    assert ok.is_error is types.UNSET


# --------------------------------------------------------- multi round-trip


def answer_for(request: types.InputRequest) -> dict[str, Any]:
    """The conformance harness's canned answers (CONFORMANCE §8.3)."""
    if isinstance(request, types.CreateMessageRequest):
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "The capital of France is Paris."},
            "model": "test-model",
            "stopReason": "endTurn",
        }
    if isinstance(request, types.ListRootsRequest):
        return {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}
    assert isinstance(request.params, types.ElicitRequestFormParams)
    properties = request.params.requested_schema["properties"]
    return {
        "action": "accept",
        "content": {
            name: True if schema["type"] == "boolean" else "Alice"
            for name, schema in properties.items()
        },
    }


async def until_complete(
    harness: Harness, params: Any, method: str = "tools/call"
) -> tuple[Any, list[Any]]:
    """Answer every InputRequiredResult until a complete result; return it and the rounds."""
    rounds = []
    result = await harness.result(method, params)
    while isinstance(result, types.InputRequiredResult):
        rounds.append(result)
        assert result.result_type == "input_required"
        assert isinstance(result.request_state, str)
        assert result.request_state
        asked = result.input_requests or {}
        responses = {key: answer_for(request) for key, request in asked.items()}
        params = type(params)(
            **{
                f: getattr(params, f)
                for f in params.__struct_fields__
                if f not in ("meta", "input_responses", "request_state")
            },
            input_responses=responses,
            request_state=result.request_state,
        )
        result = await harness.result(method, params)
    return result, rounds


@pytest.mark.parametrize(
    ("tool", "keys"),
    [
        ("test_input_required_result_elicitation", [["user_name"]]),
        ("test_input_required_result_sampling", [["capital_question"]]),
        ("test_input_required_result_list_roots", [["client_roots"]]),
        ("test_input_required_result_request_state", [["confirm"]]),
        ("test_input_required_result_multiple_inputs", [["user_name", "greeting", "client_roots"]]),
        ("test_input_required_result_multi_round", [["step1"], ["step2"]]),
    ],
)
@asynchronous
async def test_input_required_fixtures(tool: str, keys: list[list[str]]) -> None:
    harness = modern()
    result, rounds = await until_complete(harness, call(tool))
    assert [list(r.input_requests) for r in rounds] == keys
    assert result.result_type == "complete"
    assert result.content
    if tool.endswith("multi_round"):
        assert rounds[0].request_state != rounds[1].request_state
    if tool.endswith("request_state"):
        assert result.content[0].text == "state-ok"


@asynchronous
async def test_the_prompt_asks_for_input_too() -> None:
    harness = modern()
    result, rounds = await until_complete(
        harness,
        types.GetPromptRequestParams(name="test_input_required_result_prompt"),
        "prompts/get",
    )
    assert list(rounds[0].input_requests) == ["user_context"]
    assert result.messages


@asynchronous
async def test_a_tampered_or_expired_state_is_refused() -> None:
    now = [0.0]
    harness = modern(everything(now))
    first = await harness.result("tools/call", call("test_input_required_result_tampered_state"))
    responses = {"confirm": {"action": "accept", "content": {"ok": True}}}
    tampered = call(
        "test_input_required_result_tampered_state",
        input_responses=responses,
        request_state=first.request_state + "-TAMPERED",
    )
    event = await harness.call("tools/call", tampered)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32602
    # the state is bound to its request: another tool's retry can't use it
    other = call(
        "test_input_required_result_request_state",
        input_responses=responses,
        request_state=first.request_state,
    )
    event = await harness.call("tools/call", other)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32602
    now[0] = 10_000.0  # past the expiry
    late = call(
        "test_input_required_result_tampered_state",
        input_responses=responses,
        request_state=first.request_state,
    )
    event = await harness.call("tools/call", late)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32602


@asynchronous
async def test_input_responses_without_state_wrong_extra_or_invalid() -> None:
    harness = modern()
    base = "test_input_required_result_elicitation"
    good = {"action": "accept", "content": {"name": "Alice"}}
    extra = await harness.result(
        "tools/call",
        call(
            base,
            input_responses={"user_name": good, "unknown_extra_key": {}, "another_unexpected": 1},
        ),
        invalid=True,  # the extra keys are not valid input responses, on purpose
    )
    assert extra.content[0].text == "Hello, Alice!"
    wrong = await harness.result("tools/call", call(base, input_responses={"wrong_key": good}))
    assert isinstance(wrong, types.InputRequiredResult)  # asked again
    invalid = await harness.result(
        "tools/call", call(base, input_responses={"user_name": 12345}), invalid=True
    )
    assert isinstance(invalid, types.InputRequiredResult)


@asynchronous
async def test_only_declared_input_kinds_are_asked() -> None:
    harness = modern(caps=types.ClientCapabilities(sampling=types.SamplingCapability()))
    result = await harness.result("tools/call", call("test_input_required_result_capabilities"))
    assert isinstance(result, types.InputRequiredResult)
    kinds = {type(r).__name__ for r in (result.input_requests or {}).values()}
    assert kinds == {"CreateMessageRequest"}


@asynchronous
async def test_lists_never_answer_input_required() -> None:
    harness = modern()
    for method in ("tools/list", "prompts/list"):
        result = await harness.result(method)
        assert result.result_type == "complete"


# -------------------------------------------------------------- resources


@pytest.mark.parametrize("era", ["legacy", "modern"])
@asynchronous
async def test_resources(era: str) -> None:
    harness = await legacy() if era == "legacy" else modern()
    listed = await harness.result("resources/list")
    assert [r.uri for r in listed.resources][:2] == ["test://static-text", "test://static-binary"]
    text = await harness.result(
        "resources/read", types.ReadResourceRequestParams(uri="test://static-text")
    )
    assert text.contents == [
        types.TextResourceContents(
            uri="test://static-text",
            mime_type="text/plain",
            text="This is the content of the static text resource.",
        )
    ]
    binary = await harness.result(
        "resources/read", types.ReadResourceRequestParams(uri="test://static-binary")
    )
    assert isinstance(binary.contents[0], types.BlobResourceContents)
    assert binary.contents[0].mime_type == "image/png"
    templated = await harness.result(
        "resources/read", types.ReadResourceRequestParams(uri="test://template/123/data")
    )
    assert json.loads(templated.contents[0].text) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
    templates = await harness.result("resources/templates/list")
    assert templates.resource_templates[0].uri_template == "test://template/{id}/data"
    missing = await harness.call(
        "resources/read",
        types.ReadResourceRequestParams(uri="test://nonexistent-resource-for-conformance-testing"),
    )
    assert isinstance(missing, ErrorReceived)
    assert missing.error.code == (-32002 if era == "legacy" else -32602)
    assert missing.error.data == {"uri": "test://nonexistent-resource-for-conformance-testing"}
    bad = await harness.call(
        "resources/read", types.ReadResourceRequestParams(uri="no scheme here")
    )
    assert isinstance(bad, ErrorReceived)
    assert bad.error.code == -32602


@asynchronous
async def test_legacy_subscriptions_reach_exactly_the_subscribers() -> None:
    server = everything()
    watcher, bystander = await legacy(server), await legacy(server)
    await watcher.result(
        "resources/subscribe", types.SubscribeRequestParams(uri="test://watched-resource")
    )
    await server.resource_updated("test://watched-resource")
    await server.resource_updated("test://static-text")
    assert [n.params.uri for n in watcher.notifications] == ["test://watched-resource"]
    assert bystander.notifications == []
    await watcher.result(
        "resources/unsubscribe", types.UnsubscribeRequestParams(uri="test://watched-resource")
    )
    await server.resource_updated("test://watched-resource")
    assert len(watcher.notifications) == 1
    await server.tools_changed()
    assert [n.method for n in bystander.notifications] == ["notifications/tools/list_changed"]


@asynchronous
async def test_listen_streams_get_what_they_asked_for() -> None:
    server = everything()
    tools_listener, prompts_listener = modern(server), modern(server)
    filters = (
        types.SubscriptionFilter(tools_list_changed=True),
        types.SubscriptionFilter(prompts_list_changed=True),
    )
    for harness, wanted in zip((tools_listener, prompts_listener), filters, strict=True):
        params = types.SubscriptionsListenRequestParams(notifications=wanted, meta={})
        opened = await harness.call("subscriptions/listen", params)
        assert isinstance(opened, RequestReceived)  # the stream stays open
        [ack] = harness.notifications
        assert ack.method == "notifications/subscriptions/acknowledged"
        assert ack.params.notifications == wanted
    await tools_listener.result("tools/call", call("test_trigger_tool_change"))
    await prompts_listener.result("tools/call", call("test_trigger_prompt_change"))
    assert [n.method for n in tools_listener.notifications][1:] == [
        "notifications/tools/list_changed"
    ]
    assert [n.method for n in prompts_listener.notifications][1:] == [
        "notifications/prompts/list_changed"
    ]
    for notification in tools_listener.notifications + prompts_listener.notifications:
        assert notification.params.meta[SUBSCRIPTION_ID_META_KEY]
    await server.close_streams()
    assert tools_listener.client.pending_requests == ()  # closed with its result


# ---------------------------------------------------------------- prompts


@pytest.mark.parametrize("era", ["legacy", "modern"])
@asynchronous
async def test_prompts_and_completion(era: str) -> None:
    harness = await legacy() if era == "legacy" else modern()
    prompts = (await harness.result("prompts/list")).prompts
    assert all(p.description for p in prompts)
    with_args = next(p for p in prompts if p.name == "test_prompt_with_arguments")
    assert [(a.name, a.required) for a in with_args.arguments] == [("arg1", True), ("arg2", True)]
    simple = await harness.result(
        "prompts/get", types.GetPromptRequestParams(name="test_simple_prompt")
    )
    assert simple.messages[0].content.text == "This is a simple prompt for testing."
    args = await harness.result(
        "prompts/get",
        types.GetPromptRequestParams(
            name="test_prompt_with_arguments",
            arguments={"arg1": "testValue1", "arg2": "testValue2"},
        ),
    )
    assert "testValue1" in args.messages[0].content.text
    assert "testValue2" in args.messages[0].content.text
    embedded = await harness.result(
        "prompts/get",
        types.GetPromptRequestParams(
            name="test_prompt_with_embedded_resource",
            arguments={"resourceUri": "test://example-resource"},
        ),
    )
    assert isinstance(embedded.messages[0].content, types.EmbeddedResource)
    missing = await harness.call(
        "prompts/get",
        types.GetPromptRequestParams(name="test_prompt_with_arguments", arguments={"arg1": "x"}),
    )
    assert isinstance(missing, ErrorReceived)
    assert missing.error.code == -32602
    unknown = await harness.call("prompts/get", types.GetPromptRequestParams(name="nope"))
    assert isinstance(unknown, ErrorReceived)
    assert unknown.error.code == -32602
    completion = await harness.result(
        "completion/complete",
        types.CompleteRequestParams(
            ref=types.PromptReference(name="test_prompt_with_arguments"),
            argument=types.CompletionArgument(name="arg1", value="par"),
        ),
    )
    assert completion.completion.values == ["paris", "park", "party"]
    assert completion.completion.has_more is False
