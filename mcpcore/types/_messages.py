"""The per-direction unions of requests, notifications and results, across all revisions.

Requests and notifications are method-tagged, so msgspec decodes `ClientRequest`,
`ServerRequest`, `ClientNotification` and `ServerNotification` directly (an unknown method
is a `msgspec.ValidationError`). Results carry no tag: `ClientResult` and `ServerResult`
are for typing only; decode a result with the type its request's method calls for.
"""

from __future__ import annotations

from typing import TypeAlias

from ._common import Result
from ._completion import CompleteRequest, CompleteResult
from ._elicitation import ElicitationCompleteNotification, ElicitRequest, ElicitResult
from ._lifecycle import (
    DiscoverRequest,
    DiscoverResult,
    InitializedNotification,
    InitializeRequest,
    InitializeResult,
    PingRequest,
)
from ._logging import LoggingMessageNotification, SetLevelRequest
from ._mrtr import InputRequiredResult
from ._notifications import CancelledNotification, ProgressNotification
from ._prompts import GetPromptRequest, GetPromptResult, ListPromptsRequest, ListPromptsResult
from ._resources import (
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ReadResourceRequest,
    ReadResourceResult,
)
from ._roots import ListRootsRequest, ListRootsResult, RootsListChangedNotification
from ._sampling import CreateMessageRequest, CreateMessageResult
from ._subscriptions import (
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    SubscribeRequest,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequest,
    SubscriptionsListenResult,
    ToolListChangedNotification,
    UnsubscribeRequest,
)
from ._tasks import (
    CancelTaskRequest,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadResult,
    GetTaskRequest,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    TaskStatusNotification,
)
from ._tools import CallToolRequest, CallToolResult, ListToolsRequest, ListToolsResult

__all__ = [
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
]

#: Every request a client sends, in any revision.
ClientRequest: TypeAlias = (
    DiscoverRequest
    | InitializeRequest
    | PingRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscriptionsListenRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | SetLevelRequest
    | CompleteRequest
)

#: Every request a server sends (legacy: 2024-11-05 … 2025-11-25; in 2026-07-28 the
#: server asks through InputRequiredResult instead).
ServerRequest: TypeAlias = (
    PingRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | CreateMessageRequest
    | ListRootsRequest
    | ElicitRequest
)

#: Every notification a client sends, in any revision (2026-07-28: cancelled only).
ClientNotification: TypeAlias = (
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | TaskStatusNotification
    | RootsListChangedNotification
)

#: Every notification a server sends, in any revision.
ServerNotification: TypeAlias = (
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | SubscriptionsAcknowledgedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | TaskStatusNotification
    | LoggingMessageNotification
    | ElicitationCompleteNotification
)

#: Every result a client returns, in any revision (typing only).
ClientResult: TypeAlias = (
    Result
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateTaskResult
    | CreateMessageResult
    | ListRootsResult
    | ElicitResult
)

#: Every result a server returns, in any revision (typing only).
ServerResult: TypeAlias = (
    Result
    | InputRequiredResult
    | InitializeResult
    | DiscoverResult
    | ListResourcesResult
    | ListResourceTemplatesResult
    | ReadResourceResult
    | SubscriptionsListenResult
    | ListPromptsResult
    | GetPromptResult
    | ListToolsResult
    | CallToolResult
    | CompleteResult
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateTaskResult
)
