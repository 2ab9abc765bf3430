"""Logging: notifications/message and the legacy logging/setLevel."""

from __future__ import annotations

from typing import Any

from ._base import UNSET, LoggingLevel, UnsetType
from ._common import NotificationParams, RequestParams, TypedNotification, TypedRequest

__all__ = [
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "SetLevelRequest",
    "SetLevelRequestParams",
]


class LoggingMessageNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a `notifications/message` notification."""

    level: LoggingLevel
    logger: str | UnsetType = UNSET
    data: Any


class LoggingMessageNotification(TypedNotification, kw_only=True, tag="notifications/message"):
    """A log message passed from server to client."""

    params: LoggingMessageNotificationParams


class SetLevelRequestParams(RequestParams, kw_only=True):
    """Parameters for a `logging/setLevel` request.

    Legacy only: 2024-11-05 … 2025-11-25 (a named definition in 2025-11-25 only).
    """

    level: LoggingLevel


class SetLevelRequest(TypedRequest, kw_only=True, tag="logging/setLevel"):
    """A request from the client to the server, to enable or adjust logging.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: SetLevelRequestParams
