"""Progress and cancellation notifications."""

from __future__ import annotations

from ._base import UNSET, ProgressToken, RequestId, UnsetType
from ._common import NotificationParams, TypedNotification

__all__ = [
    "CancelledNotification",
    "CancelledNotificationParams",
    "ProgressNotification",
    "ProgressNotificationParams",
]


class ProgressNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a notifications/progress notification."""

    progress_token: ProgressToken
    progress: float
    total: float | UnsetType = UNSET
    message: str | UnsetType = UNSET


class ProgressNotification(TypedNotification, kw_only=True, tag="notifications/progress"):
    """An out-of-band notification informing the receiver of progress on a long-running request."""

    params: ProgressNotificationParams


class CancelledNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a `notifications/cancelled` notification."""

    # Required in 2026-07-28 (and inline before 2025-11-25), optional in 2025-11-25,
    # where a task is cancelled with tasks/cancel instead.
    request_id: RequestId | UnsetType = UNSET
    reason: str | UnsetType = UNSET


class CancelledNotification(TypedNotification, kw_only=True, tag="notifications/cancelled"):
    """Sent to indicate that the sender is cancelling a request it previously issued."""

    params: CancelledNotificationParams
