"""Resources: resources/list, resources/templates/list, resources/read.

ReadResourceResultResponse lives in `mrtr`; subscriptions and resources/updated in
`subscriptions`.
"""

from __future__ import annotations

from ._base import UNSET, MCPType, MetaObject, UnsetType, meta_field
from ._common import (
    Annotations,
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
from ._content import ResourceContentsItem
from ._unions import resolve_each

__all__ = [
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourceTemplatesResultResponse",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListResourcesResultResponse",
    "ReadResourceRequest",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceRequestParams",
    "ResourceTemplate",
]


class Resource(MCPType, kw_only=True):
    """A known resource that the server is capable of reading."""

    meta: MetaObject | UnsetType = meta_field()
    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class ResourceTemplate(MCPType, kw_only=True):
    """A template description for resources available on the server."""

    meta: MetaObject | UnsetType = meta_field()
    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class ListResourcesRequest(TypedRequest, kw_only=True, tag="resources/list"):
    """Sent from the client to request a list of resources the server has."""

    params: PaginatedRequestParams | UnsetType = UNSET


class ListResourcesResult(PaginatedResult, kw_only=True):
    """The result returned by the server for a resources/list request."""

    resources: list[Resource]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ListResourcesResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a resources/list request."""

    result: ListResourcesResult


class ListResourceTemplatesRequest(TypedRequest, kw_only=True, tag="resources/templates/list"):
    """Sent from the client to request a list of resource templates the server has."""

    params: PaginatedRequestParams | UnsetType = UNSET


class ListResourceTemplatesResult(PaginatedResult, kw_only=True):
    """The result returned by the server for a resources/templates/list request."""

    resource_templates: list[ResourceTemplate]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ListResourceTemplatesResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a resources/templates/list request."""

    result: ListResourceTemplatesResult


class ResourceRequestParams(RequestParams, kw_only=True):
    """Common params for resource-related requests."""

    uri: str


class ReadResourceRequestParams(ResourceRequestParams, kw_only=True):
    """Parameters for a `resources/read` request."""

    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class ReadResourceRequest(TypedRequest, kw_only=True, tag="resources/read"):
    """Sent from the client to the server, to read a specific resource URI."""

    params: ReadResourceRequestParams


class ReadResourceResult(Result, kw_only=True):
    """The result returned by the server for a resources/read request."""

    contents: list[ResourceContentsItem]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET

    def __post_init__(self) -> None:
        resolve_each(self.contents)
