"""Decoding and encoding behaviour of mcpcore.types beyond the official examples."""

from __future__ import annotations

import inspect
import json
from typing import Any

import msgspec
import pytest

import mcpcore.types as t
from mcpcore.types._unions import WireUnion

_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _wire(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


def _structs() -> list[type[msgspec.Struct]]:
    return [
        value
        for name in t.__all__
        if inspect.isclass(value := getattr(t, name)) and issubclass(value, msgspec.Struct)
    ]


# Absent vs null, unknown fields, _meta.


def test_null_structured_content_stays_null_and_absent_stays_absent() -> None:
    null = msgspec.json.decode(b'{"content": [], "structuredContent": null}', type=t.CallToolResult)
    absent = msgspec.json.decode(b'{"content": []}', type=t.CallToolResult)

    assert null.structured_content is None
    assert absent.structured_content is t.UNSET
    assert _wire(null) == {"content": [], "structuredContent": None}
    assert _wire(absent) == {"content": []}


def test_structured_content_of_any_json_type_round_trips() -> None:
    for value in ([1, "a"], "text", 3.5, True, {"nested": {"deep": [None]}}):
        result = t.CallToolResult(content=[], structured_content=value)
        decoded = msgspec.json.decode(msgspec.json.encode(result), type=t.CallToolResult)
        assert decoded.structured_content == value


def test_absent_tool_annotation_hints_stay_absent() -> None:
    annotations = msgspec.json.decode(b'{"readOnlyHint": false}', type=t.ToolAnnotations)

    assert annotations.read_only_hint is False
    assert annotations.destructive_hint is t.UNSET
    assert _wire(annotations) == {"readOnlyHint": False}


def test_unknown_fields_are_ignored_at_every_level() -> None:
    data = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"title": "T", "futureHint": True},
        "futureField": {"x": 1},
    }

    tool = msgspec.convert(data, type=t.Tool)

    assert tool.name == "t"
    assert tool.annotations == t.ToolAnnotations(title="T")
    assert "futureField" not in _wire(tool)


def test_meta_keys_and_json_schemas_survive_verbatim() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {"p": {"$ref": "#/$defs/point"}},
    }
    meta = {
        "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"},
        "com.example/trace": [1, 2],
        "traceparent": "00-abc-def-01",
    }
    data = {"_meta": meta, "name": "t", "inputSchema": schema, "outputSchema": schema}

    tool = msgspec.convert(data, type=t.Tool)

    assert tool.meta == meta
    assert tool.input_schema == schema
    assert _wire(tool) == data


def test_snake_case_attributes_have_camel_case_wire_names() -> None:
    link = t.ResourceLink(uri="file:///a", name="a", mime_type="text/plain", meta={"k": 1})

    assert _wire(link) == {
        "type": "resource_link",
        "_meta": {"k": 1},
        "uri": "file:///a",
        "name": "a",
        "mimeType": "text/plain",
    }


# Request ids.


@pytest.mark.parametrize("bad_id", [b"1.0", b"null", b"true", b"[1]"])
def test_request_id_rejects_floats_null_booleans(bad_id: bytes) -> None:
    request = b'{"jsonrpc": "2.0", "id": %s, "method": "tools/list"}' % bad_id
    error = b'{"jsonrpc": "2.0", "id": %s, "error": {"code": 1, "message": "m"}}' % bad_id
    cancelled = b'{"requestId": %s}' % bad_id
    progress = b'{"progressToken": %s, "progress": 1}' % bad_id

    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(request, type=t.ListToolsRequest)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(request, type=t.JSONRPCRequest)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(error, type=t.JSONRPCErrorResponse)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(cancelled, type=t.CancelledNotificationParams)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(progress, type=t.ProgressNotificationParams)


@pytest.mark.parametrize("good_id", [0, -5, 2**53, "", "abc"])
def test_request_id_accepts_integers_and_strings(good_id: int | str) -> None:
    data = msgspec.json.encode({"jsonrpc": "2.0", "id": good_id, "method": "tools/list"})

    assert msgspec.json.decode(data, type=t.ListToolsRequest).id == good_id


def test_error_response_may_omit_its_id() -> None:
    response = msgspec.json.decode(
        b'{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}',
        type=t.JSONRPCErrorResponse,
    )

    assert response.id is t.UNSET
    assert _wire(response) == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error"},
    }
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(
            b'{"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}}', type=t.JSONRPCError
        )


# Tagged unions.


def test_content_blocks_dispatch_on_type() -> None:
    data = [
        {"type": "text", "text": "hi"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
        {"type": "resource", "resource": {"uri": "file:///a", "blob": "AA=="}},
    ]

    blocks = msgspec.convert(data, type=list[t.ContentBlock])

    assert [type(b) for b in blocks] == [
        t.TextContent,
        t.ImageContent,
        t.AudioContent,
        t.ResourceLink,
        t.EmbeddedResource,
    ]
    assert _wire(blocks) == data


@pytest.mark.parametrize("kind", ["video", "tool_use", None])
def test_unknown_or_missing_content_type_is_rejected(kind: str | None) -> None:
    block: dict[str, Any] = {"text": "x", "id": "1", "name": "n", "input": {}}
    if kind is not None:
        block["type"] = kind

    # tool_use is a sampling block: not allowed in a tool result's ContentBlock.
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert([block], type=list[t.ContentBlock])


def test_sampling_message_content_is_one_block_or_a_list() -> None:
    one = msgspec.convert(
        {"role": "user", "content": {"type": "text", "text": "hi"}}, type=t.SamplingMessage
    )
    many = msgspec.convert(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}],
        },
        type=t.SamplingMessage,
    )

    assert one.content == t.TextContent(text="hi")
    assert many.content == [t.ToolUseContent(id="c1", name="f", input={"a": 1})]


def test_completion_references_dispatch_on_type() -> None:
    prompt = msgspec.convert(
        {
            "_meta": _MODERN_META,
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": "v"},
        },
        type=t.CompleteRequestParams,
    )
    resource = msgspec.convert(
        {
            "ref": {"type": "ref/resource", "uri": "file:///{x}"},
            "argument": {"name": "x", "value": "v"},
        },
        type=t.CompleteRequestParams,
    )

    assert prompt.ref == t.PromptReference(name="p")
    assert resource.ref == t.ResourceTemplateReference(uri="file:///{x}")
    assert _wire(t.ResourceReference(uri="u")) == {"type": "ref/resource", "uri": "u"}


def test_requests_and_notifications_dispatch_on_method() -> None:
    request = msgspec.json.decode(
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "f"}}',
        type=t.ClientRequest,
    )
    legacy = msgspec.json.decode(
        b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}', type=t.ClientRequest
    )
    notification = msgspec.json.decode(
        b'{"jsonrpc": "2.0", "method": "notifications/progress",'
        b' "params": {"progressToken": "p", "progress": 0.5}}',
        type=t.ServerNotification,
    )

    assert isinstance(request, t.CallToolRequest)
    assert request.method == "tools/call"
    assert request.params.name == "f"
    assert isinstance(legacy, t.PingRequest)
    assert isinstance(notification, t.ProgressNotification)
    assert notification.method == "notifications/progress"
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"jsonrpc": "2.0", "id": 3, "method": "nope"}', type=t.ClientRequest)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(
            b'{"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {}}',
            type=t.ClientRequest,
        )


def test_every_method_of_every_revision_has_one_tagged_type() -> None:
    bases = (t.TypedRequest, t.TypedNotification, t.InputRequestBase)
    tagged = [cls for cls in _structs() if issubclass(cls, bases) and cls not in bases]
    tags = [str(cls.__struct_config__.tag) for cls in tagged]

    assert all(cls.__struct_config__.tag_field == "method" for cls in tagged)
    assert sorted(tags) == sorted(
        [
            "initialize",
            "ping",
            "server/discover",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "subscriptions/listen",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "tasks/list",
            "sampling/createMessage",
            "roots/list",
            "elicitation/create",
            "notifications/initialized",
            "notifications/cancelled",
            "notifications/progress",
            "notifications/message",
            "notifications/resources/updated",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/roots/list_changed",
            "notifications/elicitation/complete",
            "notifications/tasks/status",
            "notifications/subscriptions/acknowledged",
        ]
    )
    for cls in tagged:
        assert isinstance(inspect.getattr_static(cls, "method"), property)
    assert t.CancelTaskRequest(id=1, params=t.CancelTaskRequestParams(task_id="x")).method == (
        "tasks/cancel"
    )


# Untagged unions: text vs blob.


def test_resource_contents_resolve_to_text_or_blob() -> None:
    result = msgspec.convert(
        {
            "contents": [
                {"uri": "file:///a", "text": "hello", "_meta": {"k": 1}},
                {"uri": "file:///b", "blob": "AA==", "mimeType": "image/png"},
            ]
        },
        type=t.ReadResourceResult,
    )

    assert result.contents == [
        t.TextResourceContents(uri="file:///a", text="hello", meta={"k": 1}),
        t.BlobResourceContents(uri="file:///b", blob="AA==", mime_type="image/png"),
    ]


@pytest.mark.parametrize(
    "contents",
    [
        {"uri": "file:///a", "text": "t", "blob": "AA=="},
        {"uri": "file:///a"},
        {"text": "no uri"},
        {"uri": "file:///a", "text": 5},
    ],
    ids=["both", "neither", "missing-uri", "wrong-type"],
)
def test_invalid_resource_contents_are_a_validation_error(contents: dict[str, Any]) -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.contents\[0\]"):
        msgspec.convert({"contents": [contents]}, type=t.ReadResourceResult)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.resource"):
        msgspec.json.decode(
            msgspec.json.encode({"type": "resource", "resource": contents}),
            type=t.EmbeddedResource,
        )


def test_user_built_resource_contents_are_left_as_they_are() -> None:
    text = t.TextResourceContents(uri="file:///a", text="x")
    blob = t.BlobResourceContents(uri="file:///b", blob="AA==")

    result = t.ReadResourceResult(contents=[text, blob])
    embedded = t.EmbeddedResource(resource=text)

    assert result.contents[0] is text
    assert result.contents[1] is blob
    assert embedded.resource is text


# Untagged unions: elicitation modes.


def test_elicitation_params_without_mode_are_form_params() -> None:
    request = msgspec.convert(
        {
            "method": "elicitation/create",
            "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}},
        },
        type=t.ElicitRequest,
    )

    assert isinstance(request.params, t.ElicitRequestFormParams)
    assert request.params.mode is t.UNSET
    assert "mode" not in _wire(request)["params"]
    assert "jsonrpc" not in _wire(request)


def test_elicitation_params_with_url_mode_are_url_params() -> None:
    data = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Sign in", "url": "https://x", "elicitationId": "e"},
    }

    request = msgspec.convert(data, type=t.ElicitRequest)

    assert request.params == t.ElicitRequestURLParams(
        message="Sign in", url="https://x", elicitation_id="e"
    )
    assert _wire(request) == data
    assert t.decode_elicit_request_params(data["params"]) == request.params
    raw = msgspec.json.encode(data["params"])
    assert t.decode_elicit_request_params(raw) == request.params
    assert t.decode_elicit_request_params(msgspec.Raw(raw)) == request.params


@pytest.mark.parametrize(
    "params",
    [
        {"mode": "url", "message": "m"},
        {"mode": "form", "message": "m"},
        {"message": "m"},
        {"mode": "telepathy", "message": "m", "url": "https://x"},
    ],
    ids=["url-without-url", "form-without-schema", "no-mode-without-schema", "unknown-mode"],
)
def test_invalid_elicitation_params_are_a_validation_error(params: dict[str, Any]) -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.params"):
        msgspec.convert({"method": "elicitation/create", "params": params}, type=t.ElicitRequest)
    with pytest.raises(msgspec.ValidationError):
        t.decode_elicit_request_params(params)


# Untagged unions: InputRequiredResult vs the complete result.


def test_input_required_result_in_call_tool_result_response() -> None:
    data = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "roots": {"method": "roots/list"},
                "ask": {
                    "method": "elicitation/create",
                    "params": {"message": "m", "requestedSchema": {"type": "object"}},
                },
            },
            "requestState": "opaque",
        },
    }

    response = msgspec.convert(data, type=t.CallToolResultResponse)

    assert isinstance(response.result, t.InputRequiredResult)
    assert response.result.request_state == "opaque"
    assert response.result.input_requests != t.UNSET
    requests = response.result.input_requests
    assert isinstance(requests["roots"], t.ListRootsRequest)
    assert isinstance(requests["ask"], t.ElicitRequest)
    assert isinstance(requests["ask"].params, t.ElicitRequestFormParams)
    assert _wire(response) == data


@pytest.mark.parametrize("result_type", ["complete", None])
def test_complete_or_legacy_result_in_call_tool_result_response(result_type: str | None) -> None:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    if result_type is not None:
        result["resultType"] = result_type

    response = msgspec.convert(
        {"jsonrpc": "2.0", "id": 1, "result": result}, type=t.CallToolResultResponse
    )

    assert isinstance(response.result, t.CallToolResult)
    assert response.result.content == [t.TextContent(text="ok")]
    assert _wire(response)["result"] == result


def test_read_resource_and_get_prompt_responses_resolve_their_results() -> None:
    read = msgspec.convert(
        {"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"uri": "u", "blob": "AA=="}]}},
        type=t.ReadResourceResultResponse,
    )
    prompt = msgspec.convert(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "resultType": "complete",
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            },
        },
        type=t.GetPromptResultResponse,
    )
    waiting = msgspec.convert(
        {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "input_required"}},
        type=t.GetPromptResultResponse,
    )

    assert isinstance(read.result, t.ReadResourceResult)
    assert read.result.contents == [t.BlobResourceContents(uri="u", blob="AA==")]
    assert isinstance(prompt.result, t.GetPromptResult)
    assert prompt.result.messages[0].role == "user"
    assert waiting.result == t.InputRequiredResult()


@pytest.mark.parametrize(
    "result",
    [{"resultType": "complete"}, {}, {"resultType": "task", "taskId": "t"}],
    ids=["complete-without-content", "empty", "unknown-result-type"],
)
def test_result_of_neither_shape_is_a_validation_error(result: dict[str, Any]) -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.result"):
        msgspec.convert(
            {"jsonrpc": "2.0", "id": 1, "result": result}, type=t.CallToolResultResponse
        )


def test_user_built_results_are_left_as_they_are() -> None:
    complete = t.CallToolResult(content=[])
    waiting = t.InputRequiredResult(request_state="s")

    assert t.CallToolResultResponse(id=1, result=complete).result is complete
    assert t.CallToolResultResponse(id=1, result=waiting).result is waiting


def test_input_required_result_always_encodes_its_result_type() -> None:
    assert _wire(t.InputRequiredResult()) == {"resultType": "input_required"}
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"resultType": "complete"}', type=t.InputRequiredResult)


# Input responses.


def test_decode_input_response_converts_each_kind() -> None:
    elicit = t.decode_input_response(
        "elicitation/create", {"action": "accept", "content": {"n": "x", "age": 3.5, "ok": True}}
    )
    sampled = t.decode_input_response(
        "sampling/createMessage",
        {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
    )
    roots = t.decode_input_response("roots/list", {"roots": [{"uri": "file:///r"}]})

    assert elicit == t.ElicitResult(action="accept", content={"n": "x", "age": 3.5, "ok": True})
    assert sampled == t.CreateMessageResult(
        role="assistant", content=t.TextContent(text="Paris"), model="m"
    )
    assert roots == t.ListRootsResult(roots=[t.Root(uri="file:///r")])


def test_decode_input_response_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="tools/call"):
        t.decode_input_response("tools/call", {"content": []})
    with pytest.raises(msgspec.ValidationError):
        t.decode_input_response("elicitation/create", {"action": "maybe"})
    with pytest.raises(msgspec.ValidationError):
        t.decode_input_response("roots/list", {"roots": "none"})


def test_input_responses_keep_their_raw_values() -> None:
    data = {"a": {"action": "decline"}, "b": {"roots": []}}
    params = msgspec.convert(
        {"_meta": _MODERN_META, "name": "f", "inputResponses": data, "requestState": "s"},
        type=t.CallToolRequestParams,
    )

    assert params.input_responses == data
    assert _wire(params)["inputResponses"] == data


# JSON-RPC envelope.


def test_jsonrpc_version_is_always_encoded() -> None:
    values: list[Any] = [
        t.ListToolsRequest(id=1),
        t.ToolListChangedNotification(),
        t.JSONRPCRequest(id=1, method="x"),
        t.JSONRPCNotification(method="x"),
        t.JSONRPCResultResponse(id=1, result={}),
        t.JSONRPCErrorResponse(id=1, error=t.InternalError(message="m")),
        t.ListToolsResultResponse(id=1, result=t.ListToolsResult(tools=[])),
        t.HeaderMismatchError(error=t.HeaderMismatchErrorObject(message="m")),
    ]
    for value in values:
        assert _wire(value)["jsonrpc"] == "2.0"

    assert _wire(t.ListToolsRequest(id=1)) == {"method": "tools/list", "jsonrpc": "2.0", "id": 1}


def test_wrong_jsonrpc_version_is_rejected() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(
            b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', type=t.ListToolsRequest
        )
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"jsonrpc": "1.0", "method": "x"}', type=t.JSONRPCNotification)


def test_error_objects_default_to_their_code_and_check_it() -> None:
    codes = {
        t.ParseError: -32700,
        t.InvalidRequestError: -32600,
        t.MethodNotFoundError: -32601,
        t.InvalidParamsError: -32602,
        t.InternalError: -32603,
        t.HeaderMismatchErrorObject: -32020,
    }
    for cls, code in codes.items():
        error = cls(message="m")
        assert isinstance(error, t.Error)
        assert _wire(error) == {"code": code, "message": "m"}
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(b'{"code": 1, "message": "m"}', type=cls)


def test_spec_error_responses_carry_typed_data() -> None:
    response = msgspec.json.decode(
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "m",'
        b' "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"}}}',
        type=t.UnsupportedProtocolVersionError,
    )

    assert isinstance(response, t.JSONRPCErrorResponse)
    assert response.error.data.supported == ["2026-07-28"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(
            b'{"jsonrpc": "2.0", "error": {"code": -32022, "message": "m"}}',
            type=t.UnsupportedProtocolVersionError,
        )


# Structure of the package.


def test_every_struct_is_keyword_only() -> None:
    structs = _structs()

    assert len(structs) > 150
    for cls in structs:
        with pytest.raises(TypeError):
            cls(*([None] * (len(cls.__struct_fields__) or 1)))


def test_every_struct_ignores_unknown_fields_and_stays_out_of_the_gc() -> None:
    for cls in _structs():
        assert cls.__struct_config__.forbid_unknown_fields is False
        assert cls.__struct_config__.gc is False
        assert cls.__struct_config__.omit_defaults is False
        assert not issubclass(cls, WireUnion)


def test_all_is_sorted_and_complete() -> None:
    # ruff's order: CONSTANTS, then Classes, then functions.
    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert list(t.__all__) == sorted(t.__all__, key=key)
    assert len(set(t.__all__)) == len(t.__all__)
    assert all(hasattr(t, name) for name in t.__all__)


def test_meta_key_constants() -> None:
    assert t.PROTOCOL_VERSION_META_KEY == "io.modelcontextprotocol/protocolVersion"
    assert t.CLIENT_CAPABILITIES_META_KEY == "io.modelcontextprotocol/clientCapabilities"
    assert t.CLIENT_INFO_META_KEY == "io.modelcontextprotocol/clientInfo"
    assert t.LOG_LEVEL_META_KEY == "io.modelcontextprotocol/logLevel"
    assert t.SERVER_INFO_META_KEY == "io.modelcontextprotocol/serverInfo"
    assert t.SUBSCRIPTION_ID_META_KEY == "io.modelcontextprotocol/subscriptionId"
    assert t.RELATED_TASK_META_KEY == "io.modelcontextprotocol/related-task"
    assert t.PROGRESS_TOKEN_META_KEY == "progressToken"


def test_required_meta_of_modern_only_params_and_results() -> None:
    with pytest.raises(msgspec.ValidationError, match="_meta"):
        msgspec.convert({"notifications": {}}, type=t.SubscriptionsListenRequestParams)
    with pytest.raises(msgspec.ValidationError, match="_meta"):
        msgspec.convert({"resultType": "complete"}, type=t.SubscriptionsListenResult)
    # _meta is optional on the params legacy revisions share.
    assert msgspec.convert({"name": "f"}, type=t.CallToolRequestParams).meta is t.UNSET
