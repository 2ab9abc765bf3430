"""The types against the official JSON Schemas of every revision."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from referencing import Registry, Resource

import mcpcore.types as t

SPEC = Path(__file__).resolve().parents[1] / "spec"
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
LEGACY = REVISIONS[:-1]
MODERN = REVISIONS[-1]
EXAMPLE_FILES = sorted((SPEC / "examples" / MODERN).glob("*/*.json"))


@cache
def _schema(revision: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SPEC / "schema" / revision / "schema.json").read_text())
    return schema


def _definitions(revision: str) -> dict[str, Any]:
    schema = _schema(revision)
    definitions: dict[str, Any] = schema.get("$defs") or schema["definitions"]
    return definitions


@cache
def _registry(revision: str) -> Registry[Any]:
    resource: Resource[Any] = Resource.from_contents(_schema(revision))
    registry: Registry[Any] = Registry().with_resource(f"urn:mcp:{revision}", resource)
    return registry


def _errors(revision: str, name: str, instance: Any) -> list[str]:
    """The validation errors of ``instance`` against definition ``name`` of ``revision``."""
    schema = _schema(revision)
    section = "$defs" if "$defs" in schema else "definitions"
    validator_class = Draft202012Validator if section == "$defs" else Draft7Validator
    assert schema["$schema"] == validator_class.META_SCHEMA["$schema"]
    validator = validator_class(
        {"$ref": f"urn:mcp:{revision}#/{section}/{name}"}, registry=_registry(revision)
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


def _wire(value: Any) -> Any:
    """What ``value`` looks like on the wire, as plain JSON."""
    return json.loads(msgspec.json.encode(value))


# (a) Every definition of every revision has a name in mcpcore.types.


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_definition_has_a_type(revision: str) -> None:
    names = set(_definitions(revision))
    assert len(names) > 70

    missing = sorted(name for name in names if not hasattr(t, name))

    assert missing == []
    assert names <= set(t.__all__)


# (b) Every decoded 2026-07-28 example, re-encoded, is valid in 2026-07-28.


def test_examples_exist() -> None:
    assert len(EXAMPLE_FILES) >= 100


@pytest.mark.parametrize(
    "path", EXAMPLE_FILES, ids=[f"{p.parent.name}/{p.stem}" for p in EXAMPLE_FILES]
)
def test_reencoded_example_is_valid(path: Path) -> None:
    name = path.parent.name
    value = msgspec.json.decode(path.read_bytes(), type=getattr(t, name))

    assert _errors(MODERN, name, _wire(value)) == []


# (c) Legacy-only types, built in Python, are valid in the newest revision that has them.

_META = {"io.modelcontextprotocol/related-task": {"taskId": "task-1"}, "com.example/x": 1}


def _task() -> t.Task:
    return t.Task(
        task_id="task-1",
        status="working",
        status_message="Crunching",
        created_at="2025-11-25T10:00:00Z",
        last_updated_at="2025-11-25T10:00:05Z",
        ttl=60000,
        poll_interval=1000,
    )


def _client_capabilities() -> t.ClientCapabilities:
    return t.ClientCapabilities(
        roots=t.RootsCapability(list_changed=True),
        sampling=t.SamplingCapability(),
        elicitation=t.ElicitationCapability(form={}, url={}),
        tasks=t.ClientTasksCapability(
            list={},
            cancel={},
            requests=t.ClientTaskRequestsCapability(
                sampling=t.ClientTaskSamplingCapability(create_message={}),
                elicitation=t.ClientTaskElicitationCapability(create={}),
            ),
        ),
        experimental={"com.example/feature": {"level": 2}},
    )


def _server_capabilities() -> t.ServerCapabilities:
    return t.ServerCapabilities(
        logging={},
        completions={},
        prompts=t.ServerPromptsCapability(list_changed=True),
        resources=t.ServerResourcesCapability(subscribe=True, list_changed=False),
        tools=t.ServerToolsCapability(list_changed=True),
        tasks=t.ServerTasksCapability(
            list={},
            cancel={},
            requests=t.ServerTaskRequestsCapability(tools=t.ServerTaskToolsCapability(call={})),
        ),
    )


def _implementation() -> t.Implementation:
    return t.Implementation(name="example", version="1.0.0", title="Example")


LEGACY_ONLY: dict[str, Callable[[], Any]] = {
    "Annotated": lambda: t.Annotated(annotations=t.Annotations(audience=["user"], priority=0.5)),
    "CancelTaskRequest": lambda: t.CancelTaskRequest(
        id=7, params=t.CancelTaskRequestParams(task_id="task-1")
    ),
    "CancelTaskResult": lambda: t.CancelTaskResult(
        meta=_META,
        task_id="task-1",
        status="cancelled",
        created_at="2025-11-25T10:00:00Z",
        last_updated_at="2025-11-25T10:01:00Z",
        ttl=None,
    ),
    "CreateTaskResult": lambda: t.CreateTaskResult(task=_task()),
    "ElicitationCompleteNotification": lambda: t.ElicitationCompleteNotification(
        params=t.ElicitationCompleteNotificationParams(elicitation_id="elicit-1")
    ),
    "GetTaskPayloadRequest": lambda: t.GetTaskPayloadRequest(
        id="payload-1", params=t.GetTaskPayloadRequestParams(task_id="task-1")
    ),
    "GetTaskPayloadResult": lambda: _wire(
        t.CallToolResult(meta=_META, content=[t.TextContent(text="done")])
    ),
    "GetTaskRequest": lambda: t.GetTaskRequest(
        id=3, params=t.GetTaskRequestParams(task_id="task-1")
    ),
    "GetTaskResult": lambda: t.GetTaskResult(
        task_id="task-1",
        status="input_required",
        created_at="2025-11-25T10:00:00Z",
        last_updated_at="2025-11-25T10:00:30Z",
        ttl=30000,
        poll_interval=500,
    ),
    "InitializeRequest": lambda: t.InitializeRequest(
        id=0,
        params=t.InitializeRequestParams(
            protocol_version="2025-11-25",
            capabilities=_client_capabilities(),
            client_info=_implementation(),
        ),
    ),
    "InitializeRequestParams": lambda: t.InitializeRequestParams(
        meta={"progressToken": "init"},
        protocol_version="2025-11-25",
        capabilities=t.ClientCapabilities(),
        client_info=_implementation(),
    ),
    "InitializeResult": lambda: t.InitializeResult(
        protocol_version="2025-11-25",
        capabilities=_server_capabilities(),
        server_info=t.Implementation(
            name="server",
            version="2.0",
            description="An example server",
            website_url="https://example.com",
            icons=[t.Icon(src="https://example.com/i.png", sizes=["48x48"], theme="dark")],
        ),
        instructions="Be nice.",
    ),
    "InitializedNotification": t.InitializedNotification,
    "JSONRPCBatchRequest": lambda: [
        t.JSONRPCRequest(id=1, method="tools/list"),
        t.JSONRPCNotification(method="notifications/initialized"),
    ],
    "JSONRPCBatchResponse": lambda: [
        t.JSONRPCResultResponse(id=1, result={"tools": []}),
        t.JSONRPCError(id=2, error=t.MethodNotFoundError(message="Method not found")),
    ],
    "JSONRPCError": lambda: t.JSONRPCError(
        id="req-9", error=t.Error(code=-32002, message="Resource not found", data={"uri": "x:"})
    ),
    "ListTasksRequest": lambda: t.ListTasksRequest(
        id=4, params=t.PaginatedRequestParams(cursor="c1")
    ),
    "ListTasksResult": lambda: t.ListTasksResult(tasks=[_task()], next_cursor="c2"),
    "PingRequest": lambda: t.PingRequest(id="ping-1"),
    "RelatedTaskMetadata": lambda: t.RelatedTaskMetadata(task_id="task-1"),
    "ResourceReference": lambda: t.ResourceReference(uri="file:///{path}"),
    "RootsListChangedNotification": t.RootsListChangedNotification,
    "ServerRequest": lambda: t.ListRootsRequest(jsonrpc="2.0", id=12),
    "SetLevelRequest": lambda: t.SetLevelRequest(
        id=5, params=t.SetLevelRequestParams(level="warning")
    ),
    "SetLevelRequestParams": lambda: t.SetLevelRequestParams(level="debug"),
    "SubscribeRequest": lambda: t.SubscribeRequest(
        id=6, params=t.SubscribeRequestParams(uri="file:///a.txt")
    ),
    "SubscribeRequestParams": lambda: t.SubscribeRequestParams(uri="file:///a.txt"),
    "Task": _task,
    "TaskAugmentedRequestParams": lambda: t.TaskAugmentedRequestParams(
        task=t.TaskMetadata(ttl=60000)
    ),
    "TaskMetadata": lambda: t.TaskMetadata(ttl=1000),
    "TaskStatus": lambda: "completed",
    "TaskStatusNotification": lambda: t.TaskStatusNotification(
        params=t.TaskStatusNotificationParams(
            meta=_META,
            task_id="task-1",
            status="failed",
            status_message="boom",
            created_at="2025-11-25T10:00:00Z",
            last_updated_at="2025-11-25T10:02:00Z",
            ttl=None,
        )
    ),
    "TaskStatusNotificationParams": lambda: t.TaskStatusNotificationParams(
        task_id="task-1",
        status="completed",
        created_at="2025-11-25T10:00:00Z",
        last_updated_at="2025-11-25T10:02:00Z",
        ttl=5,
    ),
    "ToolExecution": lambda: t.ToolExecution(task_support="optional"),
    "URLElicitationRequiredError": lambda: t.URLElicitationRequiredError(
        id=8,
        error=t.URLElicitationRequiredErrorObject(
            message="Authorization required",
            data=t.URLElicitationRequiredErrorData(
                elicitations=[
                    t.ElicitRequestURLParams(
                        message="Sign in",
                        url="https://example.com/auth",
                        elicitation_id="elicit-1",
                    )
                ]
            ),
        ),
    ),
    "UnsubscribeRequest": lambda: t.UnsubscribeRequest(
        id=9, params=t.UnsubscribeRequestParams(uri="file:///a.txt")
    ),
    "UnsubscribeRequestParams": lambda: t.UnsubscribeRequestParams(uri="file:///a.txt"),
}


def _legacy_only_names() -> set[str]:
    legacy = set().union(*(_definitions(revision) for revision in LEGACY))
    return legacy - set(_definitions(MODERN))


def _newest_revision_with(name: str) -> str:
    return next(r for r in reversed(LEGACY) if name in _definitions(r))


def test_constructor_table_covers_every_legacy_only_type() -> None:
    assert set(LEGACY_ONLY) == _legacy_only_names()


@pytest.mark.parametrize("name", sorted(LEGACY_ONLY))
def test_legacy_only_type_is_valid_in_its_revision(name: str) -> None:
    value = LEGACY_ONLY[name]()
    revision = _newest_revision_with(name)

    assert _errors(revision, name, _wire(value)) == []
    # A Struct also decodes back from its own output.
    if isinstance(value, msgspec.Struct):
        assert msgspec.json.decode(msgspec.json.encode(value), type=type(value)) == value


# Cross-era messages: one Struct serves every revision, so a value built the legacy way
# must be valid in the legacy schemas (and is, where the revisions differ, invalid in
# the modern one).


def _list_tools_result() -> t.ListToolsResult:
    tool = t.Tool(
        name="get_weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    return t.ListToolsResult(tools=[tool])


def test_legacy_initialize_exchange_is_valid_in_every_legacy_revision() -> None:
    request = t.InitializeRequest(
        id=0,
        params=t.InitializeRequestParams(
            protocol_version="2024-11-05",
            capabilities=t.ClientCapabilities(roots=t.RootsCapability(list_changed=True)),
            client_info=t.Implementation(name="client", version="0.1"),
        ),
    )
    result = t.InitializeResult(
        protocol_version="2024-11-05",
        capabilities=t.ServerCapabilities(tools=t.ServerToolsCapability()),
        server_info=t.Implementation(name="server", version="0.1"),
    )
    for revision in LEGACY:
        assert _errors(revision, "InitializeRequest", _wire(request)) == []
        assert _errors(revision, "JSONRPCRequest", _wire(request)) == []
        assert _errors(revision, "InitializeResult", _wire(result)) == []
        assert (
            _errors(revision, "InitializedNotification", _wire(t.InitializedNotification())) == []
        )


def test_list_tools_result_without_cache_fields_is_legacy_only() -> None:
    wire = _wire(_list_tools_result())

    assert "ttlMs" not in wire
    assert "resultType" not in wire
    for revision in LEGACY:
        assert _errors(revision, "ListToolsResult", wire) == []
    assert _errors(MODERN, "ListToolsResult", wire) != []

    modern = _list_tools_result()
    modern.result_type, modern.ttl_ms, modern.cache_scope = "complete", 0, "private"
    assert _errors(MODERN, "ListToolsResult", _wire(modern)) == []


def test_cancelled_notification_without_request_id_is_valid_only_in_2025_11_25() -> None:
    wire = _wire(t.CancelledNotification(params=t.CancelledNotificationParams(reason="bye")))

    assert _errors("2025-11-25", "CancelledNotification", wire) == []
    assert _errors("2024-11-05", "CancelledNotification", wire) != []
    assert _errors(MODERN, "CancelledNotification", wire) != []


def test_legacy_results_and_errors_are_valid_in_2024_11_05() -> None:
    call = t.CallToolResult(content=[t.TextContent(text="hi")], is_error=False)
    response = t.JSONRPCResultResponse(id=1, result=_wire(call))
    error = t.JSONRPCError(id=1, error=t.InvalidParamsError(message="Unknown tool"))

    assert _errors("2024-11-05", "CallToolResult", _wire(call)) == []
    assert _errors("2024-11-05", "JSONRPCResponse", _wire(response)) == []
    assert _errors("2024-11-05", "JSONRPCError", _wire(error)) == []
    # Without an id, an error response is only valid from 2025-11-25 on.
    anonymous = t.JSONRPCErrorResponse(error=t.ParseError(message="Parse error"))
    assert _errors("2024-11-05", "JSONRPCError", _wire(anonymous)) != []
    assert _errors("2025-11-25", "JSONRPCErrorResponse", _wire(anonymous)) == []


def test_completion_with_resource_reference_is_valid_in_every_revision() -> None:
    request = t.CompleteRequest(
        id=1,
        params=t.CompleteRequestParams(
            ref=t.ResourceTemplateReference(uri="file:///{path}"),
            argument=t.CompletionArgument(name="path", value="src/"),
        ),
    )
    for revision in LEGACY:
        assert _errors(revision, "CompleteRequest", _wire(request)) == []
    request.params.meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    assert _errors(MODERN, "CompleteRequest", _wire(request)) == []


def test_legacy_server_requests_are_valid_json_rpc_requests() -> None:
    sampling = t.CreateMessageRequest(
        jsonrpc="2.0",
        id=2,
        params=t.CreateMessageRequestParams(
            messages=[t.SamplingMessage(role="user", content=t.TextContent(text="Hi"))],
            max_tokens=10,
        ),
    )
    elicit = t.ElicitRequest(
        jsonrpc="2.0",
        id=3,
        params=t.ElicitRequestFormParams(
            message="Name?",
            requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        ),
    )
    assert _errors("2024-11-05", "CreateMessageRequest", _wire(sampling)) == []
    assert _errors("2024-11-05", "JSONRPCRequest", _wire(sampling)) == []
    # 2025-06-18 elicitation had no modes: a form request without `mode` is valid there.
    assert _errors("2025-06-18", "ElicitRequest", _wire(elicit)) == []
    assert _errors("2025-11-25", "ElicitRequest", _wire(elicit)) == []


def test_ping_and_empty_result_are_valid_in_every_legacy_revision() -> None:
    for revision in LEGACY:
        assert _errors(revision, "PingRequest", _wire(t.PingRequest(id=1))) == []
        assert _errors(revision, "EmptyResult", _wire(t.EmptyResult())) == []
