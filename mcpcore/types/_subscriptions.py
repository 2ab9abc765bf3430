"""Subscriptions: subscriptions/listen and the notifications it delivers.

Also the list_changed and resources/updated notifications, and the legacy
resources/subscribe and resources/unsubscribe.
"""

from __future__ import annotations

import msgspec

from ._base import UNSET, MCPType, UnsetType
from ._common import (
    NotificationParams,
    RequestMetaObject,
    RequestParams,
    Result,
    SubscriptionsListenResultMetaObject,
    TypedNotification,
    TypedRequest,
    TypedResultResponse,
)
from ._resources import ResourceRequestParams

__all__ = [
    "PromptListChangedNotification",
    "ResourceListChangedNotification",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultResponse",
    "ToolListChangedNotification",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
]


class SubscriptionFilter(MCPType, kw_only=True):
    """The set of notification types a client may opt in to on a subscriptions/listen request."""

    tools_list_changed: bool | UnsetType = UNSET
    prompts_list_changed: bool | UnsetType = UNSET
    resources_list_changed: bool | UnsetType = UNSET
    resource_subscriptions: list[str] | UnsetType = UNSET
    #: The tasks extension's filter (``io.modelcontextprotocol/tasks``, SEP-2663):
    #: ``notifications/tasks`` for these task ids. Not in the 2026-07-28 schema itself.
    task_ids: list[str] | UnsetType = UNSET


class SubscriptionsListenRequestParams(RequestParams, kw_only=True):
    """Parameters for a subscriptions/listen request."""

    # Only in 2026-07-28, where every request carries its _meta.
    meta: RequestMetaObject = msgspec.field(name="_meta")
    notifications: SubscriptionFilter


class SubscriptionsListenRequest(TypedRequest, kw_only=True, tag="subscriptions/listen"):
    """Sent from the client to open a long-lived channel for receiving notifications."""

    params: SubscriptionsListenRequestParams


class SubscriptionsListenResult(Result, kw_only=True):
    """The response to a subscriptions/listen request, signalling a graceful end.

    Its ``_meta`` is required and carries ``io.modelcontextprotocol/subscriptionId``.
    """

    meta: SubscriptionsListenResultMetaObject = msgspec.field(name="_meta")


class SubscriptionsListenResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a subscriptions/listen request."""

    result: SubscriptionsListenResult


class SubscriptionsAcknowledgedNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a notifications/subscriptions/acknowledged notification."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(
    TypedNotification, kw_only=True, tag="notifications/subscriptions/acknowledged"
):
    """Sent by the server to acknowledge a subscriptions/listen subscription."""

    params: SubscriptionsAcknowledgedNotificationParams


class ToolListChangedNotification(
    TypedNotification, kw_only=True, tag="notifications/tools/list_changed"
):
    """Informs the client that the list of tools the server offers has changed."""

    params: NotificationParams | UnsetType = UNSET


class PromptListChangedNotification(
    TypedNotification, kw_only=True, tag="notifications/prompts/list_changed"
):
    """Informs the client that the list of prompts the server offers has changed."""

    params: NotificationParams | UnsetType = UNSET


class ResourceListChangedNotification(
    TypedNotification, kw_only=True, tag="notifications/resources/list_changed"
):
    """Informs the client that the list of resources the server can read has changed."""

    params: NotificationParams | UnsetType = UNSET


class ResourceUpdatedNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a `notifications/resources/updated` notification."""

    uri: str


class ResourceUpdatedNotification(
    TypedNotification, kw_only=True, tag="notifications/resources/updated"
):
    """Informs the client that a resource has changed and may need to be read again."""

    params: ResourceUpdatedNotificationParams


class SubscribeRequestParams(ResourceRequestParams, kw_only=True):
    """Parameters for a `resources/subscribe` request.

    Legacy only: 2024-11-05 … 2025-11-25 (a named definition in 2025-11-25 only).
    """


class SubscribeRequest(TypedRequest, kw_only=True, tag="resources/subscribe"):
    """Sent from the client to request resources/updated notifications for a resource.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: SubscribeRequestParams


class UnsubscribeRequestParams(ResourceRequestParams, kw_only=True):
    """Parameters for a `resources/unsubscribe` request.

    Legacy only: 2024-11-05 … 2025-11-25 (a named definition in 2025-11-25 only).
    """


class UnsubscribeRequest(TypedRequest, kw_only=True, tag="resources/unsubscribe"):
    """Sent from the client to cancel resources/updated notifications for a resource.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: UnsubscribeRequestParams
