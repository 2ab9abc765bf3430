"""Waiting for a task: polling, input, cancellation, in both eras.

A server that runs a tool as a task answers ``tools/call`` at once with the task. For
the 2026-07-28 tasks extension the client polls ``tasks/get`` at the interval the
server suggests until the task ends, answers the questions the task asks
(``tasks/update``, through the same callbacks as a multi round-trip request) and, when
the caller stops waiting (its cancel scope, a timeout), cancels the task with
``tasks/cancel`` ("notifications/cancelled MUST NOT be used for tasks", SEP-2663).

For the 2025-11-25 core tasks the client calls ``tasks/result`` at once, which blocks
until the task ends ("The requestor SHOULD call tasks/result pre-emptively",
2025-11-25 basic/utilities/tasks); the questions the task asks arrive on that request's
stream and the callbacks answer them as a plain call's. Only for a ``task_status``
callback does it poll ``tasks/get`` meanwhile, at the suggested interval: the status is
all a poll would tell, so without a callback no poll is sent. Giving up cancels the
task with ``tasks/cancel`` as above.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Awaitable, Callable
from typing import Final, TypeAlias

import msgspec
import trio

from mcpcore.client import ClientSession, McpError, TaskCancelledError
from mcpcore.errors import LocalProtocolError
from mcpcore.types import (
    TERMINAL_TASK_STATUSES,
    CallToolResult,
    CreateTaskExtensionResult,
    DetailedTaskResult,
    Error,
    Task,
)

__all__ = [
    "CANCEL_GRACE",
    "DEFAULT_POLL_INTERVAL",
    "MAX_POLL_INTERVAL",
    "MIN_POLL_INTERVAL",
    "TaskStatusCallback",
    "wait_for_legacy_task",
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


def _legacy_poll_interval(task: Task) -> float:
    """As `poll_interval`, for a 2025-11-25 task (``pollInterval``, in milliseconds)."""
    suggested = task.poll_interval
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
    reporter = None if on_status is None else _Reporter(on_status)
    try:
        while True:
            await trio.sleep(interval)
            detail = await session.get_task(task_id, timeout=timeout)
            interval = poll_interval(detail)
            if reporter is not None:
                await reporter.tell(detail)
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


async def wait_for_legacy_task(
    session: ClientSession,
    task: Task,
    *,
    timeout: float | None,
    on_status: TaskStatusCallback | None = None,
) -> CallToolResult:
    """Wait for a 2025-11-25 task through its blocking ``tasks/result``; its tool's result.

    ``timeout`` bounds each ``tasks/get`` (polls sent only for ``on_status``, which is
    told each new status as a `DetailedTaskResult`); ``tasks/result`` itself waits
    as long as the task runs, and the wait ends with the caller's cancel scope, which
    cancels the task on the server.

    Raises:
        McpError: The task failed (its JSON-RPC error).
        TaskCancelledError: It was cancelled.
    """
    task_id = task.task_id
    reporter = None if on_status is None else _Reporter(on_status)
    try:
        if reporter is None:
            outcome = await _task_result(session, task_id)
        else:
            await reporter.report(task)
            failure: Exception | None = None
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch, session, task, timeout, reporter)
                try:
                    outcome = await _task_result(session, task_id)
                except Exception as exc:  # (raised below as itself, not in an exception group)
                    failure = exc
                nursery.cancel_scope.cancel()
            if failure is not None:
                raise failure
    except BaseException:
        await _cancel(session, task_id, timeout)
        raise
    if isinstance(outcome, CallToolResult) and reporter is None:
        return outcome
    # The last status, as the 2026-07-28 wait reports it, and whether a failure was a
    # cancellation (which 2025-11-25 tasks/result answers with some error): one request.
    last: Task | None = None
    with contextlib.suppress(McpError, TimeoutError):
        last = await session.get_legacy_task(task_id, timeout=timeout)
    if last is not None and reporter is not None:
        await reporter.report(last)
    if isinstance(outcome, CallToolResult):
        return outcome
    if last is not None and last.status == "cancelled":
        raise TaskCancelledError(task_id) from outcome
    raise outcome


async def _task_result(session: ClientSession, task_id: str) -> CallToolResult | McpError:
    """The blocking ``tasks/result``: the result, or the error that ended the task."""
    try:
        return await session.task_result(task_id, timeout=math.inf)
    except McpError as failure:
        return failure  # the task ended: nothing to cancel


class _Reporter:
    """Tells ``task_status`` each new status of a task (a status or message not told yet)."""

    def __init__(self, on_status: TaskStatusCallback) -> None:
        self._on_status = on_status
        self._seen: tuple[str, object] | None = None

    async def tell(self, detail: DetailedTaskResult) -> None:
        """Tell a 2026-07-28 task's status, if new."""
        if (detail.status, detail.status_message) == self._seen:
            return
        self._seen = (detail.status, detail.status_message)
        returned = self._on_status(detail)
        if inspect.isawaitable(returned):
            await returned

    async def report(self, task: Task) -> None:
        """Tell a 2025-11-25 task's status, if new, as a DetailedTaskResult."""
        detail = DetailedTaskResult(
            task_id=task.task_id,
            status=task.status,
            status_message=task.status_message,
            created_at=task.created_at,
            last_updated_at=task.last_updated_at,
            ttl_ms=task.ttl,
            poll_interval_ms=task.poll_interval,
        )
        await self.tell(detail)


async def _watch(
    session: ClientSession, task: Task, timeout: float | None, reporter: _Reporter
) -> None:
    """Poll ``tasks/get`` for the status callback until the task ends (or a poll fails)."""
    while task.status not in TERMINAL_TASK_STATUSES:
        await trio.sleep(_legacy_poll_interval(task))
        try:
            task = await session.get_legacy_task(task.task_id, timeout=timeout)
        except (McpError, TimeoutError, ConnectionError, LocalProtocolError):
            return  # the status is a courtesy: tasks/result brings the outcome (or failure)
        await reporter.report(task)
