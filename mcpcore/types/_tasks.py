"""Experimental tasks of 2025-11-25 (core there; an extension in 2026-07-28).

Every type here is legacy only: 2025-11-25. The 2026-07-28 tasks extension
(``io.modelcontextprotocol/tasks``) is not part of the schema; its own, flatter shapes
are in `mcpcore.types._tasks_extension`.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

from ._base import UNSET, MCPType, ResultType, UnsetType, meta_field
from ._common import (
    NotificationMetaObject,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
    Result,
    ResultMetaObject,
    TypedNotification,
    TypedRequest,
)

__all__ = [
    "TERMINAL_TASK_STATUSES",
    "CancelTaskRequest",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskRequestParams",
    "GetTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
]

#: The status of a task. Legacy only: 2025-11-25.
TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
#: The statuses a task never leaves ("Terminal states are final", 2025-11-25 tasks; the
#: 2026-07-28 extension's are the same).
TERMINAL_TASK_STATUSES: Final[frozenset[TaskStatus]] = frozenset(
    {"completed", "failed", "cancelled"}
)


class TaskMetadata(MCPType, kw_only=True):
    """Metadata for augmenting a request with task execution.

    Legacy only: 2025-11-25.
    """

    ttl: int | UnsetType = UNSET


class RelatedTaskMetadata(MCPType, kw_only=True):
    """Metadata for associating messages with a task (``_meta`` key ``related-task``).

    Legacy only: 2025-11-25.
    """

    task_id: str


class TaskAugmentedRequestParams(RequestParams, kw_only=True):
    """Common params for any task-augmented request.

    Legacy only: 2025-11-25.
    """

    task: TaskMetadata | UnsetType = UNSET


class Task(MCPType, kw_only=True):
    """Data associated with a task.

    Legacy only: 2025-11-25.
    """

    task_id: str
    status: TaskStatus
    status_message: str | UnsetType = UNSET
    created_at: str
    last_updated_at: str
    # Required, and null means unlimited retention: here None is a value, not absence.
    ttl: int | None
    poll_interval: int | UnsetType = UNSET


class CreateTaskResult(Result, kw_only=True):
    """A response to a task-augmented request.

    Legacy only: 2025-11-25.
    """

    task: Task


class GetTaskRequestParams(RequestParams, kw_only=True):
    """Parameters for a `tasks/get` request.

    Legacy only: 2025-11-25.
    """

    task_id: str


class GetTaskRequest(TypedRequest, kw_only=True, tag="tasks/get"):
    """A request to retrieve the state of a task.

    Legacy only: 2025-11-25.
    """

    params: GetTaskRequestParams


class GetTaskResult(Task, kw_only=True):
    """The response to a tasks/get request: the common result fields and a Task.

    Legacy only: 2025-11-25.
    """

    # The schema's "Result & Task": Task's fields (inherited) plus Result's. msgspec
    # Structs can't inherit from both, so the two Result fields are repeated here.
    meta: ResultMetaObject | UnsetType = meta_field()
    result_type: ResultType | UnsetType = UNSET


class GetTaskPayloadRequestParams(RequestParams, kw_only=True):
    """Parameters for a `tasks/result` request.

    Legacy only: 2025-11-25.
    """

    task_id: str


class GetTaskPayloadRequest(TypedRequest, kw_only=True, tag="tasks/result"):
    """A request to retrieve the result of a completed task.

    Legacy only: 2025-11-25.
    """

    params: GetTaskPayloadRequestParams


#: The response to a tasks/result request: exactly the result of the original request
#: (e.g. a CallToolResult), so it stays a JSON object until the original method is known.
#: Legacy only: 2025-11-25.
GetTaskPayloadResult: TypeAlias = dict[str, Any]


class CancelTaskRequestParams(RequestParams, kw_only=True):
    """Parameters for a `tasks/cancel` request.

    Legacy only: 2025-11-25.
    """

    task_id: str


class CancelTaskRequest(TypedRequest, kw_only=True, tag="tasks/cancel"):
    """A request to cancel a task.

    Legacy only: 2025-11-25.
    """

    params: CancelTaskRequestParams


class CancelTaskResult(Task, kw_only=True):
    """The response to a tasks/cancel request: the common result fields and a Task.

    Legacy only: 2025-11-25.
    """

    # "Result & Task", as GetTaskResult.
    meta: ResultMetaObject | UnsetType = meta_field()
    result_type: ResultType | UnsetType = UNSET


class ListTasksRequest(TypedRequest, kw_only=True, tag="tasks/list"):
    """A request to retrieve a list of tasks.

    Legacy only: 2025-11-25.
    """

    params: PaginatedRequestParams | UnsetType = UNSET


class ListTasksResult(PaginatedResult, kw_only=True):
    """The response to a tasks/list request.

    Legacy only: 2025-11-25.
    """

    tasks: list[Task]


class TaskStatusNotificationParams(Task, kw_only=True):
    """Parameters for a `notifications/tasks/status` notification: a Task.

    Legacy only: 2025-11-25.
    """

    # "NotificationParams & Task": Task's fields plus the notification's _meta.
    meta: NotificationMetaObject | UnsetType = meta_field()


class TaskStatusNotification(TypedNotification, kw_only=True, tag="notifications/tasks/status"):
    """An optional notification informing the requestor that a task's status has changed.

    Legacy only: 2025-11-25.
    """

    params: TaskStatusNotificationParams
