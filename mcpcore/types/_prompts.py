"""Prompts: prompts/list and prompts/get (GetPromptResultResponse lives in `mrtr`)."""

from __future__ import annotations

from ._base import UNSET, MCPType, MetaObject, Role, UnsetType, meta_field
from ._common import (
    CacheScope,
    Icon,
    InputResponses,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
    Result,
    TypedRequest,
    TypedResultResponse,
)
from ._content import ContentBlock

__all__ = [
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsRequest",
    "ListPromptsResult",
    "ListPromptsResultResponse",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(MCPType, kw_only=True):
    """Describes an argument that a prompt can accept."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(MCPType, kw_only=True):
    """A prompt or prompt template that the server offers."""

    meta: MetaObject | UnsetType = meta_field()
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class PromptMessage(MCPType, kw_only=True):
    """Describes a message returned as part of a prompt."""

    role: Role
    content: ContentBlock


class ListPromptsRequest(TypedRequest, kw_only=True, tag="prompts/list"):
    """Sent from the client to request a list of prompts and prompt templates the server has."""

    params: PaginatedRequestParams | UnsetType = UNSET


class ListPromptsResult(PaginatedResult, kw_only=True):
    """The result returned by the server for a prompts/list request."""

    prompts: list[Prompt]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ListPromptsResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a prompts/list request."""

    result: ListPromptsResult


class GetPromptRequestParams(RequestParams, kw_only=True):
    """Parameters for a `prompts/get` request."""

    name: str
    arguments: dict[str, str] | UnsetType = UNSET
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class GetPromptRequest(TypedRequest, kw_only=True, tag="prompts/get"):
    """Used by the client to get a prompt provided by the server."""

    params: GetPromptRequestParams


class GetPromptResult(Result, kw_only=True):
    """The result returned by the server for a prompts/get request."""

    description: str | UnsetType = UNSET
    messages: list[PromptMessage]
