"""The 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663).

Not part of the 2026-07-28 schema: an extension negotiated under
``capabilities.extensions``. Its shapes are flatter than the 2025-11-25 core tasks
(`mcpcore.types._tasks`): ``Result & Task`` with no nested ``task``, ``ttlMs`` and
``pollIntervalMs`` instead of ``ttl`` and ``pollInterval``, the original result inlined
in ``tasks/get``, input gathered with ``tasks/update``; ``tasks/result`` and
``tasks/list`` are gone.
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, MCPType, ResultType, UnsetType, meta_field
from ._common import NotificationParams, RequestParams, ResultMetaObject
from ._jsonrpc import Error
from ._mrtr import InputRequest
from ._tasks import TaskStatus

__all__ = [
    "TASKS_EXTENSION",
    "CreateTaskExtensionResult",
    "DetailedTaskResult",
    "TaskNotificationParams",
    "UpdateTaskRequestParams",
]

#: The tasks extension's identifier, the key under ``capabilities.extensions`` on both
#: sides (SEP-2663 "Capability Negotiation").
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


class CreateTaskExtensionResult(MCPType, kw_only=True):
    """The answer to a ``tools/call`` the server runs as a task (2026-07-28 tasks extension).

    Flat ``Result & Task``: no nested ``task``, no ``requestState``, and never the
    result, error or input requests, which live on ``tasks/get`` (SEP-2663).
    """

    meta: ResultMetaObject | UnsetType = meta_field()
    result_type: Literal["task"] = "task"
    task_id: str
    status: TaskStatus
    status_message: str | UnsetType = UNSET
    #: ISO 8601.
    created_at: str
    last_updated_at: str
    #: How long the task stays readable after its creation, in integer milliseconds;
    #: None means unlimited.
    ttl_ms: int | None
    poll_interval_ms: int | UnsetType = UNSET


class DetailedTaskResult(MCPType, kw_only=True):
    """The answer to ``tasks/get``: the task, and what its status carries (2026-07-28 extension).

    ``input_required`` carries every outstanding ``inputRequests``; ``completed`` the
    original request's ``result`` (a tool's ``isError`` result is completed too);
    ``failed`` a JSON-RPC ``error`` and never a result (SEP-2663).
    """

    meta: ResultMetaObject | UnsetType = meta_field()
    result_type: ResultType | UnsetType = UNSET
    task_id: str
    status: TaskStatus
    status_message: str | UnsetType = UNSET
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | UnsetType = UNSET
    input_requests: dict[str, InputRequest] | UnsetType = UNSET
    result: dict[str, Any] | UnsetType = UNSET
    error: Error | UnsetType = UNSET


class TaskNotificationParams(NotificationParams, kw_only=True):
    """``notifications/tasks``: a task's full DetailedTask, on a listen stream (SEP-2663).

    Sent on a ``subscriptions/listen`` stream whose filter named the task in
    ``taskIds``; the fields are `DetailedTaskResult`'s.
    """

    task_id: str
    status: TaskStatus
    status_message: str | UnsetType = UNSET
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | UnsetType = UNSET
    input_requests: dict[str, InputRequest] | UnsetType = UNSET
    result: dict[str, Any] | UnsetType = UNSET
    error: Error | UnsetType = UNSET


class UpdateTaskRequestParams(RequestParams, kw_only=True):
    """Parameters for a ``tasks/update`` request: answers to a task's input requests.

    2026-07-28 tasks extension. Keys are those of the task's ``inputRequests``.
    """

    task_id: str
    input_responses: dict[str, Any]
