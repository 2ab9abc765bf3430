"""Tools: what a server publishes in tools/list, and how a tools/call reaches the handler.

The rules (server/tools, 2024-11-05 … 2026-07-28):

* arguments are validated before the handler runs; a validation failure is a tool
  result with ``isError: true`` (2025-11-25, SEP-1303), not a protocol error;
* a handler's exception is a tool result with ``isError: true`` whose message leaks no
  internals (a `ToolError` message is shown as written);
* structured output comes with its serialized JSON as a text block too (2025-06-18);
  ``structuredContent`` and the output schema's root must be objects before 2026-07-28,
  so a non-object result is wrapped as ``{"result": value}`` for legacy clients;
* an unknown tool is -32602;
* tools/list keeps registration order (2026-07-28: "SHOULD return tools in a
  deterministic order").
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc, types
from mcpcore.errors import McpError
from mcpcore.jsonschema import SchemaError, Validator
from mcpcore.server._context import Context
from mcpcore.server._errors import ToolError
from mcpcore.server._signature import HandlerSignature, inspect_handler, json_schema_of
from mcpcore.versions import Era

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "RegisteredTool",
    "ToolRegistry",
    "bind_arguments",
    "run_at_once",
    "run_tool",
    "to_call_result",
]

#: "Tool names SHOULD be 1-128 characters" (2025-11-25 server/tools).
MAX_TOOL_NAME_LENGTH: Final = 128
#: How a tool takes to running as a task (2026-07-28 tasks extension): "optional" runs
#: it as a task for a client that declared the extension and synchronously for one that
#: did not; "required" refuses the latter with -32021 (SEP-2663).
TaskSupport: TypeAlias = Literal["optional", "required"]
_NAME_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
)
_CONTENT_TYPES: Final = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)
# Return annotations that are content, not structured output.
_UNSTRUCTURED: Final = (str, types.CallToolResult, *_CONTENT_TYPES)
_ENCODER: Final = msgspec.json.Encoder()


@dataclass(slots=True)
class RegisteredTool:
    """A tool as the registry keeps it: its two published forms and how to call it."""

    modern: types.Tool
    legacy: types.Tool
    handler: Callable[..., Any]
    signature: HandlerSignature | None
    validator: Validator | None
    wraps_output: bool
    #: "optional" or "required" when the tool may run as a task (2026-07-28 tasks
    #: extension), None when it never does.
    task: TaskSupport | None = None
    #: Whether it asks its questions within the request before becoming a task
    #: (`Context.start_task`).
    gathers_input_first: bool = False
    #: The 2025-11-25 definition with ``execution.taskSupport``, published when the
    #: server can run tasks (`Server` advertises ``capabilities.tasks`` then); None
    #: for a tool that never runs as a task.
    legacy_task: types.Tool | None = None
    #: Whether calling the handler returns an awaitable (an ``async def`` handler); set
    #: from ``signature`` (read on every call: a field, not a property).
    awaits: bool = field(init=False)

    def __post_init__(self) -> None:
        self.awaits = self.signature is not None and self.signature.is_async


class ToolRegistry:
    """The tools of one server, in registration order."""

    __slots__ = ("_task_tools", "_tools")

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._task_tools = 0  # (counted: has_tasks is asked on every tools/call)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def has_tasks(self) -> bool:
        """Whether any tool may run as a task (the server then offers the extension)."""
        return self._task_tools > 0

    def add(
        self,
        handler: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: types.ToolAnnotations | None = None,
        icons: list[types.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        task: TaskSupport | None = None,
        gather_input_first: bool = False,
    ) -> RegisteredTool:
        """Register ``handler`` as a tool (see `Server.tool`)."""
        name = name or handler.__name__
        if task not in (None, "optional", "required"):
            raise ValueError(f"tool {name!r}: task must be 'optional', 'required' or None")
        if gather_input_first and task is None:
            raise ValueError(f"tool {name!r}: gather_input_first needs task=...")
        if not 0 < len(name) <= MAX_TOOL_NAME_LENGTH or not set(name) <= _NAME_CHARACTERS:
            raise ValueError(f"tool name {name!r}: 1-128 characters of A-Z a-z 0-9 _ . -")
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        signature = None
        validator = None
        if input_schema is None:
            signature = inspect_handler(handler, name=name, context_type=Context)
            input_schema = _input_schema(signature)
        else:
            # Passed through verbatim ($schema, $defs, $ref kept); validated by its own
            # rules, so a schema we can't honour fails now, not on the first call.
            if input_schema.get("type") != "object":
                raise ValueError(f"tool {name!r}: the input schema's root must be an object")
            try:
                validator = Validator(input_schema)
            except SchemaError as exc:
                raise ValueError(f"tool {name!r}: {exc}") from exc
            signature = inspect_handler(handler, name=name, context_type=Context)
            if [p.name for p in signature.parameters] != ["arguments"]:
                raise TypeError(
                    f"tool {name!r}: with an explicit input schema the handler takes one "
                    "parameter, `arguments` (the validated dict), besides the Context"
                )
        returns = signature.return_type
        if output_schema is None and returns not in (None, *_UNSTRUCTURED):
            output_schema = None if _is_content_list(returns) else json_schema_of(returns)
        wraps_output = output_schema is not None and output_schema.get("type") != "object"
        fields: dict[str, Any] = {
            "name": name,
            "title": title or UNSET,
            "description": description or _docstring(handler) or UNSET,
            "input_schema": input_schema,
            "annotations": annotations or UNSET,
            "icons": icons or UNSET,
            "meta": meta or UNSET,
        }
        modern = types.Tool(**fields, output_schema=output_schema or UNSET)
        legacy_output = (
            {"type": "object", "properties": {"result": output_schema}, "required": ["result"]}
            if wraps_output
            else output_schema
        )
        legacy = types.Tool(**fields, output_schema=legacy_output or UNSET)
        # "taskSupport ... optional ... required" (2025-11-25 server/tools, execution).
        legacy_task = (
            None
            if task is None
            else msgspec.structs.replace(legacy, execution=types.ToolExecution(task_support=task))
        )
        tool = RegisteredTool(
            modern,
            legacy,
            handler,
            signature,
            validator,
            wraps_output,
            task,
            gather_input_first,
            legacy_task,
        )
        self._tools[name] = tool
        self._task_tools += task is not None
        return tool

    def remove(self, name: str) -> None:
        """Unregister a tool; KeyError if there is none by that name."""
        self._task_tools -= self._tools.pop(name).task is not None

    def definitions(self, *, modern: bool, tasks: bool = False) -> list[types.Tool]:
        """What tools/list publishes, in registration order.

        ``tasks``: the 2025-11-25 definitions carry ``execution.taskSupport`` (the
        server runs tasks; meaningless in 2026-07-28, where the extension says it).
        """
        if modern:
            return [tool.modern for tool in self._tools.values()]
        if tasks and self._task_tools:
            return [tool.legacy_task or tool.legacy for tool in self._tools.values()]
        return [tool.legacy for tool in self._tools.values()]

    def definition(self, name: str, *, modern: bool) -> types.Tool | None:
        """The published definition of the tool ``name`` (None: no such tool)."""
        tool = self._tools.get(name)
        if tool is None:
            return None
        return tool.modern if modern else tool.legacy

    def task_support(self, name: str) -> tuple[TaskSupport | None, bool]:
        """Whether the tool ``name`` may run as a task, and whether it gathers input first."""
        tool = self._tools.get(name)
        return (None, False) if tool is None else (tool.task, tool.gathers_input_first)

    def standalone(self, name: str) -> RegisteredTool | None:
        """The tool ``name`` if its call needs nothing of the request but its arguments.

        That is, it takes no `Context` and never runs as a task: run it with `run_tool`
        (or `run_at_once`, without a coroutine, unless it `~RegisteredTool.awaits`).
        """
        tool = self._tools.get(name)
        if tool is None or tool.task is not None:
            return None
        signature = tool.signature
        return tool if signature is None or signature.context_parameter is None else None

    async def call(self, context: Context, params: types.CallToolRequestParams) -> Any:
        """Run a tools/call; the result (or an InputRequiredResult to pass through)."""
        tool = self._tools.get(params.name)
        if tool is None:
            raise McpError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = {} if params.arguments is UNSET else params.arguments
        problem, kwargs = bind_arguments(tool, arguments)
        if problem is not None:
            return _error_result(f"Invalid arguments for tool {params.name}: {problem}")
        wrap = tool.wraps_output and context.era is Era.LEGACY
        signature = tool.signature
        if signature is not None and signature.context_parameter is not None:
            kwargs[signature.context_parameter] = context
        return await run_tool(tool, kwargs, wrap=wrap)


def run_at_once(tool: RegisteredTool, kwargs: dict[str, Any], *, wrap: bool = False) -> Any:
    """Call a synchronous tool with ``kwargs``; its result (`to_call_result`).

    A `ToolError` becomes a result with ``isError``; any other exception propagates
    (the server answers it, `mcpcore.server.Server.handle_request`). ``wrap``: see
    `to_call_result`.
    """
    try:
        value = tool.handler(**kwargs)
    except ToolError as exc:
        return _error_result(str(exc))
    return to_call_result(value, wrap=wrap)


async def run_tool(tool: RegisteredTool, kwargs: dict[str, Any], *, wrap: bool = False) -> Any:
    """Call any tool with ``kwargs`` (awaited if it `~RegisteredTool.awaits`); as `run_at_once`."""
    if not tool.awaits:
        return run_at_once(tool, kwargs, wrap=wrap)
    try:
        value = await tool.handler(**kwargs)
    except ToolError as exc:
        return _error_result(str(exc))
    return to_call_result(value, wrap=wrap)


def to_call_result(value: Any, *, wrap: bool = False) -> Any:
    """Turn what a tool handler returned into a `CallToolResult`.

    A result (or an InputRequiredResult) passes through; text becomes a text block;
    content blocks are the content; anything else is structured output, with its JSON
    as a text block too ("SHOULD also return the serialized JSON", 2025-06-18).
    """
    if isinstance(value, str):  # the most common, so looked at first
        return types.CallToolResult(content=[types.TextContent(text=value)])
    if isinstance(value, (types.CallToolResult, types.InputRequiredResult)):
        return value
    if isinstance(value, _CONTENT_TYPES):
        return types.CallToolResult(content=[value])
    if isinstance(value, list) and value and all(isinstance(v, _CONTENT_TYPES) for v in value):
        return types.CallToolResult(content=value)
    structured = msgspec.to_builtins(value)
    # The text block carries the value itself; only structuredContent is wrapped.
    text = _ENCODER.encode(structured).decode()
    if wrap:
        structured = {"result": structured}
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def bind_arguments(
    tool: RegisteredTool, arguments: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    """Validate the arguments; (why not, {}) or (None, the handler's keyword arguments)."""
    if tool.validator is not None:
        issues = tool.validator.errors(arguments)
        if issues:
            return "; ".join(f"{i.path or '/'}: {i.message}" for i in issues[:5]), {}
        return None, {"arguments": arguments}
    signature = tool.signature
    if signature is None or signature.arguments_type is None:
        return None, {}
    try:
        bound = msgspec.convert(arguments, signature.arguments_type)
    except msgspec.ValidationError as exc:
        return str(exc), {}
    return None, msgspec.structs.asdict(bound)


def _input_schema(signature: HandlerSignature) -> dict[str, Any]:
    if signature.arguments_type is None:
        # "A no-parameter tool should use {"type":"object","additionalProperties":false}"
        return {"type": "object", "additionalProperties": False}
    return json_schema_of(signature.arguments_type)


def _is_content_list(annotation: Any) -> bool:
    """``list[TextContent]`` and the like (also ``list[ContentBlock]``, a union)."""
    if typing.get_origin(annotation) is not list:
        return False
    [item] = typing.get_args(annotation) or (None,)
    members = typing.get_args(item) or (item,)
    return all(member in _CONTENT_TYPES for member in members)


def _docstring(handler: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(handler)
    return doc.strip() if doc else None


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
