"""Waiting for a task of the 2026-07-28 tasks extension: polling, input, cancellation.

A server that runs a tool as a task answers ``tools/call`` at once with the task; the
client polls ``tasks/get`` at the interval the server suggests until the task ends,
answers the questions the task asks (``tasks/update``, through the same callbacks as a
multi round-trip request) and, when the caller stops waiting (its cancel scope, a
timeout), cancels the task with ``tasks/cancel`` ("notifications/cancelled MUST NOT be
used for tasks", SEP-2663).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Final, TypeAlias

import msgspec
import trio

from mcpcore.client import ClientSession, McpError, TaskCancelledError
from mcpcore.errors import LocalProtocolError
from mcpcore.types import CallToolResult, CreateTaskExtensionResult, DetailedTaskResult, Error

__all__ = [
    "CANCEL_GRACE",
    "DEFAULT_POLL_INTERVAL",
    "MAX_POLL_INTERVAL",
    "MIN_POLL_INTERVAL",
    "TaskStatusCallback",
    "wait_for_task",
]

#: Seconds between polls when the server suggests none (its ``pollIntervalMs``
#: otherwise): "the requestor SHOULD respect pollInterval" (2025-11-25 tasks).
DEFAULT_POLL_INTERVAL: Final = 0.5
#: The bounds put on a server's suggestion: a server asking for polls every millisecond
#: would have us flood it; one asking for an hour would hide a finished task that long.
MIN_POLL_INTERVAL: Final = 0.05
MAX_POLL_INTERVAL: Final = 30.0
#: Seconds the ``tasks/cancel`` sent on the way out may take, shielded from the cancel
#: that caused it: enough for one round trip, short enough not to hold the caller.
CANCEL_GRACE: Final = 5.0

#: Told about every new status the task reports (its ``DetailedTaskResult``), in the
#: waiting task; sync or async.
TaskStatusCallback: TypeAlias = Callable[[DetailedTaskResult], Awaitable[None] | None]


def poll_interval(task: CreateTaskExtensionResult | DetailedTaskResult) -> float:
    """Seconds to wait before the next poll, as the server suggests within our bounds."""
    suggested = task.poll_interval_ms
    if not isinstance(suggested, int):
        return DEFAULT_POLL_INTERVAL
    return min(MAX_POLL_INTERVAL, max(MIN_POLL_INTERVAL, suggested / 1000))


async def wait_for_task(
    session: ClientSession,
    task: CreateTaskExtensionResult,
    *,
    timeout: float | None,
    on_status: TaskStatusCallback | None = None,
) -> CallToolResult:
    """Poll ``task`` until it ends; its tool's result.

    ``timeout`` bounds each request; the wait itself ends with the caller's cancel
    scope, which cancels the task on the server.

    Raises:
        McpError: The task failed (its JSON-RPC error).
        TaskCancelledError: It was cancelled.
    """
    task_id = task.task_id
    interval = poll_interval(task)
    seen: tuple[str, object] | None = None
    try:
        while True:
            await trio.sleep(interval)
            detail = await session.get_task(task_id, timeout=timeout)
            interval = poll_interval(detail)
            if on_status is not None and (detail.status, detail.status_message) != seen:
                seen = (detail.status, detail.status_message)
                returned = on_status(detail)
                if inspect.isawaitable(returned):
                    await returned
            result = _outcome(detail)
            if result is not None:
                return result
            if detail.status == "input_required":
                answers = await session.answer_task_input(detail)
                if answers:
                    await session.update_task(task_id, answers, timeout=timeout)
                    interval = 0  # the answers may finish it at once
    except (McpError, TaskCancelledError):
        raise  # the task ended (or the server refused us): nothing to cancel
    except BaseException:
        await _cancel(session, task_id, timeout)
        raise


def _outcome(detail: DetailedTaskResult) -> CallToolResult | None:
    """The result of a finished task; raises for one that failed or was cancelled."""
    if detail.status == "completed":
        # "completed with result" (SEP-2663): the original tools/call result, inlined.
        return msgspec.convert(detail.result or {}, CallToolResult)
    if detail.status == "failed":
        error = detail.error
        if isinstance(error, Error):
            raise McpError(error.code, error.message, error.data or None)
        raise McpError(-32603, "The task failed without an error")
    if detail.status == "cancelled":
        raise TaskCancelledError(detail.task_id)
    return None


async def _cancel(session: ClientSession, task_id: str, timeout: float | None) -> None:
    """Cancel the task we stop waiting for, shielded and briefly; failures don't matter."""
    # (A failure doesn't matter: the server expires the task at its TTL anyway.)
    with (
        trio.CancelScope(shield=True),
        trio.move_on_after(CANCEL_GRACE),
        contextlib.suppress(McpError, ConnectionError, TimeoutError, LocalProtocolError),
    ):
        await session.cancel_task(task_id, timeout=timeout)
