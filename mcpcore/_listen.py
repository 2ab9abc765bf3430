"""The rules of a 2026-07-28 ``subscriptions/listen`` stream (basic/patterns/subscriptions).

"Each notification type is opt-in, and the server MUST NOT send notification types
that were not requested"; the acknowledgement echoes "the honoured subset of the
filter, with unsupported types omitted"; and every message of the stream carries
``_meta["io.modelcontextprotocol/subscriptionId"]``, the id of the listen request.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from mcpcore._envelope import meta_of
from mcpcore._inflight import IncomingRequest, OutgoingRequest
from mcpcore.types import (
    SUBSCRIPTION_ID_META_KEY,
    RequestId,
    SubscriptionFilter,
    SubscriptionsListenResult,
)

__all__ = [
    "LISTEN_ACKNOWLEDGED",
    "NEVER_ON_LISTEN",
    "TASK_NOTIFICATION",
    "acknowledgement_problem",
    "closing_result",
    "filter_allows",
    "is_subset",
    "receive_on_stream",
    "sending_problem",
    "stamp_subscription_id",
    "subscription_id_of",
]

LISTEN_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_RESOURCE_UPDATED: Final = "notifications/resources/updated"
#: The tasks extension's status news, for the ids in the filter's ``taskIds`` (SEP-2663).
TASK_NOTIFICATION: Final = "notifications/tasks"
# The filter flag each list_changed notification needs.
_FLAGS: Final = {
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/resources/list_changed": "resources_list_changed",
}
#: "notifications/progress and notifications/message MUST NOT be delivered on a listen
#: stream": they belong to the request they report on.
NEVER_ON_LISTEN: Final = frozenset({"notifications/progress", "notifications/message"})


def filter_allows(honoured: SubscriptionFilter | None, method: str) -> bool:
    """Whether a stream with the ``honoured`` filter may carry ``method``.

    Notifications the core does not know (an extension's) are the extension's business.
    """
    if honoured is None:
        return False
    if method == _RESOURCE_UPDATED:
        return bool(honoured.resource_subscriptions)
    if method == TASK_NOTIFICATION:
        return bool(honoured.task_ids)
    flag = _FLAGS.get(method)
    return flag is None or getattr(honoured, flag) is True


def is_subset(honoured: SubscriptionFilter, requested: SubscriptionFilter) -> bool:
    """Whether the acknowledged filter only keeps what the client asked for."""
    for flag in _FLAGS.values():
        if getattr(honoured, flag) is True and getattr(requested, flag) is not True:
            return False
    wanted = set(requested.resource_subscriptions or ())
    tasks = set(requested.task_ids or ())
    return (
        set(honoured.resource_subscriptions or ()) <= wanted
        and set(honoured.task_ids or ()) <= tasks
    )


def acknowledgement_problem(stream: IncomingRequest, honoured: SubscriptionFilter) -> str | None:
    """Server: why ``honoured`` can't acknowledge ``stream``, or None."""
    if stream.honoured_filter is not None:
        return "this subscription was already acknowledged"
    if stream.requested_filter is None or not is_subset(honoured, stream.requested_filter):
        return "the acknowledged filter must be a subset of the request's"
    return None


def sending_problem(stream: IncomingRequest, method: str) -> str | None:
    """Server: why ``method`` can't go on ``stream``, or None."""
    if stream.honoured_filter is None:
        return "acknowledge the subscription first"
    if method in NEVER_ON_LISTEN:
        return f"{method} is never delivered on a listen stream"
    if not filter_allows(stream.honoured_filter, method):
        return f"the subscription did not ask for {method}"
    return None


def receive_on_stream(stream: OutgoingRequest | None, method: str, params: Any) -> str | None:
    """Client: take in a notification naming ``stream``; why it is not believed, or None.

    An acknowledgement that is believed records the filter the server honours.
    """
    if stream is None or not stream.spec.opens_stream:
        return "Notification for an unknown subscription"
    if method == LISTEN_ACKNOWLEDGED:
        if stream.honoured_filter is not None:
            return "Subscription acknowledged twice"
        stream.honoured_filter = params.notifications
        return None
    if stream.honoured_filter is None:
        # "No notification may precede" the acknowledgement (2026-07-28).
        return "Notification before the acknowledgement"
    if not filter_allows(stream.honoured_filter, method):
        return "Notification the subscription did not ask for"
    return None


def subscription_id_of(params: Any) -> Any:
    """The subscription id a notification carries, or None."""
    meta = meta_of(params)
    return None if meta is None else meta.get(SUBSCRIPTION_ID_META_KEY)


def stamp_subscription_id(value: Any, subscription_id: RequestId) -> Any:
    """A copy of notification params (or a listen result) carrying the stream's id."""
    meta = {**(meta_of(value) or {}), SUBSCRIPTION_ID_META_KEY: subscription_id}
    if isinstance(value, dict):
        return {**value, "_meta": meta}
    return msgspec.structs.replace(value, meta=meta)


def closing_result() -> SubscriptionsListenResult:
    """The result that ends a stream gracefully (its id is stamped when sent)."""
    return SubscriptionsListenResult(meta={})
