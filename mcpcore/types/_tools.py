"""Tools: tools/list and tools/call (CallToolResultResponse lives in `mrtr`)."""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, MCPType, MetaObject, UnsetType, meta_field
from ._common import (
    CacheScope,
    Icon,
    InputResponses,
    PaginatedRequestParams,
    PaginatedResult,
    Result,
    TypedRequest,
    TypedResultResponse,
)
from ._content import ContentBlock
from ._tasks import TaskAugmentedRequestParams

__all__ = [
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequest",
    "ListToolsResult",
    "ListToolsResultResponse",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


class ToolAnnotations(MCPType, kw_only=True):
    """Additional properties describing a Tool to clients.

    The hints have spec-level defaults (readOnlyHint false, destructiveHint true, ...);
    an absent hint stays `UNSET` here so that "not said" is not confused with "false".
    """

    title: str | UnsetType = UNSET
    read_only_hint: bool | UnsetType = UNSET
    destructive_hint: bool | UnsetType = UNSET
    idempotent_hint: bool | UnsetType = UNSET
    open_world_hint: bool | UnsetType = UNSET


class ToolExecution(MCPType, kw_only=True):
    """Execution-related properties for a tool.

    Legacy only: 2025-11-25.
    """

    task_support: Literal["forbidden", "optional", "required"] | UnsetType = UNSET


class Tool(MCPType, kw_only=True):
    """Definition for a tool the client can call.

    ``input_schema`` and ``output_schema`` are JSON Schemas kept verbatim (``$schema``,
    ``$defs`` and ``$ref`` included).
    """

    meta: MetaObject | UnsetType = meta_field()
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    execution: ToolExecution | UnsetType = UNSET


class ListToolsRequest(TypedRequest, kw_only=True, tag="tools/list"):
    """Sent from the client to request a list of tools the server has."""

    params: PaginatedRequestParams | UnsetType = UNSET


class ListToolsResult(PaginatedResult, kw_only=True):
    """The result returned by the server for a tools/list request."""

    tools: list[Tool]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ListToolsResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a tools/list request."""

    result: ListToolsResult


class CallToolRequestParams(TaskAugmentedRequestParams, kw_only=True):
    """Parameters for a `tools/call` request."""

    name: str
    arguments: dict[str, Any] | UnsetType = UNSET
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class CallToolRequest(TypedRequest, kw_only=True, tag="tools/call"):
    """Used by the client to invoke a tool provided by the server."""

    params: CallToolRequestParams


class CallToolResult(Result, kw_only=True):
    """The result returned by the server for a tools/call request."""

    content: list[ContentBlock]
    # An object in 2025-06-18 and 2025-11-25, any JSON value in 2026-07-28; null stays null.
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
