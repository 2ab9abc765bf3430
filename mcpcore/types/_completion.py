"""Completion: completion/complete and the prompt / resource references."""

from __future__ import annotations

from ._base import UNSET, MCPType, UnsetType
from ._common import RequestParams, Result, TypedRequest, TypedResultResponse

__all__ = [
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteResult",
    "CompleteResultResponse",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "PromptReference",
    "ResourceReference",
    "ResourceTemplateReference",
]


class PromptReference(MCPType, kw_only=True, tag_field="type", tag="ref/prompt"):
    """Identifies a prompt."""

    name: str
    title: str | UnsetType = UNSET


class ResourceTemplateReference(MCPType, kw_only=True, tag_field="type", tag="ref/resource"):
    """A reference to a resource or resource template definition."""

    uri: str


class ResourceReference(MCPType, kw_only=True, tag_field="type", tag="ref/resource"):
    """A reference to a resource or resource template definition.

    Legacy only: 2024-11-05 … 2025-03-26 (renamed ResourceTemplateReference in 2025-06-18;
    same wire shape, so `CompleteRequestParams.ref` decodes it as that).
    """

    uri: str


class CompletionArgument(MCPType, kw_only=True):
    """The argument's information, in a `completion/complete` request."""

    name: str
    value: str


class CompletionContext(MCPType, kw_only=True):
    """Additional, already-resolved context for completions."""

    arguments: dict[str, str] | UnsetType = UNSET


class CompleteRequestParams(RequestParams, kw_only=True):
    """Parameters for a `completion/complete` request."""

    ref: PromptReference | ResourceTemplateReference
    argument: CompletionArgument
    context: CompletionContext | UnsetType = UNSET


class CompleteRequest(TypedRequest, kw_only=True, tag="completion/complete"):
    """A request from the client to the server, to ask for completion options."""

    params: CompleteRequestParams


class Completion(MCPType, kw_only=True):
    """The completion values of a CompleteResult (at most 100)."""

    values: list[str]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class CompleteResult(Result, kw_only=True):
    """The result returned by the server for a completion/complete request."""

    completion: Completion


class CompleteResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a completion/complete request."""

    result: CompleteResult
