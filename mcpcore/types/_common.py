"""Shared building blocks: params and result bases, metadata objects, icons, annotations."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from ._base import (
    UNSET,
    MCPType,
    RequestId,
    ResultType,
    Role,
    UnsetType,
    meta_field,
)

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "PROGRESS_TOKEN_META_KEY",
    "PROTOCOL_VERSION_META_KEY",
    "RELATED_TASK_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "Annotated",
    "Annotations",
    "BaseMetadata",
    "CacheScope",
    "CacheableResult",
    "EmptyResult",
    "Icon",
    "Icons",
    "InputResponseRequestParams",
    "InputResponses",
    "NotificationMetaObject",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "RequestMetaObject",
    "RequestParams",
    "Result",
    "ResultMetaObject",
    "SubscriptionsListenResultMetaObject",
]

# Reserved ``_meta`` keys. The metadata objects stay plain dicts (their keys are open-ended
# and must survive a round trip), so these constants are how code names the known keys.
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"
PROGRESS_TOKEN_META_KEY = "progressToken"

#: A request's ``_meta``: protocolVersion and clientCapabilities (required in 2026-07-28),
#: clientInfo, logLevel, progressToken, plus any extension key.
RequestMetaObject: TypeAlias = dict[str, Any]
#: A result's ``_meta``: serverInfo plus any extension key.
ResultMetaObject: TypeAlias = dict[str, Any]
#: A notification's ``_meta``: subscriptionId on a listen stream plus any extension key.
NotificationMetaObject: TypeAlias = dict[str, Any]
#: A SubscriptionsListenResult's ``_meta``: subscriptionId (required) and serverInfo.
SubscriptionsListenResultMetaObject: TypeAlias = dict[str, Any]

#: Who may share a cached result (2026-07-28 caching).
CacheScope: TypeAlias = Literal["public", "private"]

#: Client answers to InputRequests, keyed like the requests. The values carry no type tag,
#: so they stay JSON objects; `decode_input_response` converts one once its request is known.
InputResponses: TypeAlias = dict[str, Any]


class Icon(MCPType, kw_only=True):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class Icons(MCPType, kw_only=True):
    """Base interface to add `icons` property."""

    icons: list[Icon] | UnsetType = UNSET


class BaseMetadata(MCPType, kw_only=True):
    """Base interface for metadata with name (identifier) and title (display name) properties."""

    name: str
    title: str | UnsetType = UNSET


class Annotations(MCPType, kw_only=True):
    """Optional annotations for the client, to inform how objects are used or displayed."""

    audience: list[Role] | UnsetType = UNSET
    priority: float | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class Annotated(MCPType, kw_only=True):
    """Base for objects that include optional annotations for the client.

    Legacy only: 2024-11-05.
    """

    annotations: Annotations | UnsetType = UNSET


class RequestParams(MCPType, kw_only=True):
    """Common params for any request."""

    meta: RequestMetaObject | UnsetType = meta_field()


class PaginatedRequestParams(RequestParams, kw_only=True):
    """Common params for paginated requests."""

    cursor: str | UnsetType = UNSET


class InputResponseRequestParams(RequestParams, kw_only=True):
    """Common params of the requests that can be retried with input responses (MRTR).

    The request params of tools/call, resources/read and prompts/get carry the same two
    fields but derive from `RequestParams` directly, since their ``_meta`` is optional
    in legacy revisions.
    """

    # Only in 2026-07-28, where every request carries its _meta.
    meta: RequestMetaObject = msgspec.field(name="_meta")
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class NotificationParams(MCPType, kw_only=True):
    """Common params for any notification."""

    meta: NotificationMetaObject | UnsetType = meta_field()


class Result(MCPType, kw_only=True):
    """Common result fields.

    ``resultType`` is required in 2026-07-28 and absent in legacy revisions, so it is
    optional here; the Connection fills it in when the revision in use needs it.
    """

    meta: ResultMetaObject | UnsetType = meta_field()
    result_type: ResultType | UnsetType = UNSET


#: The result of a method that returns nothing but the common result fields.
EmptyResult: TypeAlias = Result


class PaginatedResult(Result, kw_only=True):
    """Common fields of a paginated result."""

    next_cursor: str | UnsetType = UNSET


class CacheableResult(Result, kw_only=True):
    """A result that supports a time-to-live (TTL) hint for client-side caching.

    The cacheable results (DiscoverResult, ReadResourceResult, the four list results)
    declare these fields themselves rather than deriving from this class, so test for
    the fields, not with ``isinstance``. Both are optional: legacy results lack them.
    """

    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class _MethodTagged(MCPType, kw_only=True, tag_field="method"):
    """A request or notification whose ``method`` is its msgspec tag."""

    @property
    def method(self) -> str:
        """The JSON-RPC method (the class's msgspec tag)."""
        return str(self.__struct_config__.tag)


class TypedRequest(_MethodTagged, kw_only=True):
    """A full JSON-RPC request of one method: ``{jsonrpc, id, method, params}``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId


class TypedNotification(_MethodTagged, kw_only=True):
    """A full JSON-RPC notification of one method: ``{jsonrpc, method, params}``."""

    jsonrpc: Literal["2.0"] = "2.0"


class InputRequestBase(_MethodTagged, kw_only=True):
    """A server-to-client request: a JSON-RPC request in legacy, a bare object in MRTR.

    In 2026-07-28 these travel inside `InputRequiredResult.input_requests` as
    ``{method, params}`` objects, so ``jsonrpc`` and ``id`` are optional; a legacy
    sender sets both.
    """

    jsonrpc: Literal["2.0"] | UnsetType = UNSET
    id: RequestId | UnsetType = UNSET


class TypedResultResponse(MCPType, kw_only=True):
    """The envelope fields of a successful response: ``{jsonrpc, id}``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
