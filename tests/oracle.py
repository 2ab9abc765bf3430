"""The official JSON Schemas as a test oracle for every message mcpcore emits.

`SchemaOracle(revision).check(message_bytes, method=...)` validates one JSON-RPC
message against the schema of ``revision``: the envelope against ``JSONRPCMessage``,
a request or notification against the definition whose ``method`` is that constant,
and a result against the definition of the method's result type.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

SPEC_DIR = Path(__file__).parent / "spec"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

# What each request method answers with, by schema definition name.
RESULT_DEFINITIONS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "sampling/createMessage": "CreateMessageResult",
    "elicitation/create": "ElicitResult",
    "roots/list": "ListRootsResult",
    "tasks/get": "GetTaskResult",
    "tasks/result": "GetTaskPayloadResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}


# 2026-07-28 error responses with a definition of their own.
SPECIFIC_ERRORS = {
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}


class SchemaOracle:
    """Validates messages against one revision's official schema."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        document = json.loads((SPEC_DIR / "schema" / revision / "schema.json").read_text())
        self._defs_key = "$defs" if "$defs" in document else "definitions"
        self.definitions: dict[str, Any] = document[self._defs_key]
        draft = DRAFT202012 if self._defs_key == "$defs" else DRAFT7
        self._uri = f"urn:mcp-schema:{revision}"
        resource: Resource[Any] = draft.create_resource(document)
        self._registry: Registry[Any] = Registry().with_resource(self._uri, resource)
        self._validator_class = (
            jsonschema.Draft202012Validator if draft is DRAFT202012 else jsonschema.Draft7Validator
        )
        self.method_definitions: dict[str, str] = {}
        for name, definition in self.definitions.items():
            method = definition.get("properties", {}).get("method", {}).get("const")
            # ClientNotification and the like are unions; skip them for the real definition.
            union = name in (
                "ClientNotification",
                "ServerNotification",
                "ClientRequest",
                "ServerRequest",
            )
            if method is not None and name.endswith(("Request", "Notification")) and not union:
                self.method_definitions[method] = name

    def validate(self, value: Any, definition: str) -> None:
        """Raise `jsonschema.ValidationError` unless ``value`` matches ``definition``."""
        schema = {"$ref": f"{self._uri}#/{self._defs_key}/{definition}"}
        validator = self._validator_class(schema, registry=self._registry)
        validator.validate(value)

    def check(self, data: bytes, *, method: str | None = None) -> None:
        """Validate one emitted message; ``method`` names the request a response answers."""
        message = json.loads(data)
        assert "\n" not in data.decode(), "a message must be a single line"
        self.validate(message, "JSONRPCMessage")
        if self.revision == "2026-07-28" and _tasks_extension(message, method):
            return  # not in the schema: tests/core/test_server_tasks.py checks its shapes
        if "method" in message:
            definition = self.method_definitions.get(message["method"])
            assert definition is not None, f"{message['method']} is not in {self.revision}"
            self.validate(message, definition)
        elif "error" in message and self.revision == "2026-07-28":
            definition = SPECIFIC_ERRORS.get(message["error"]["code"])
            if definition is not None:
                self.validate(message, definition)
        elif "result" in message:
            assert method is not None, "a result needs the method it answers"
            result = message["result"]
            if result.get("resultType") == "input_required":
                self.validate(result, "InputRequiredResult")
            elif method == "tools/call" and "task" in result and "content" not in result:
                # A 2025-11-25 task-augmented tools/call (basic/utilities/tasks).
                self.validate(result, "CreateTaskResult")
            else:
                self.validate(result, RESULT_DEFINITIONS[method])


#: The 2026-07-28 tasks extension's methods (SEP-2663), which the schema leaves out.
TASKS_EXTENSION_METHODS = frozenset(
    {"tasks/get", "tasks/update", "tasks/cancel", "notifications/tasks"}
)


def _tasks_extension(message: dict[str, Any], method: str | None) -> bool:
    """Whether ``message`` belongs to the tasks extension: its methods, or a task result."""
    if message.get("method") in TASKS_EXTENSION_METHODS or method in TASKS_EXTENSION_METHODS:
        return True
    result = message.get("result")
    return isinstance(result, dict) and result.get("resultType") == "task"


@functools.cache
def oracle(revision: str) -> SchemaOracle:
    """The shared oracle of ``revision``."""
    return SchemaOracle(revision)
