"""Our `Client` waiting for 2025-11-25 core tasks, against `serve_http` (CHECKLIST §13.1).

`examples.everything.build_server` served in-process; `open_http_client` in the legacy
era. A tool whose ``execution.taskSupport`` is "required" is called as a task by itself
(the tool list read once to learn it), an "optional" one with ``task=True``; the call
waits on the blocking ``tasks/result``, whose questions the callbacks answer, polls
``tasks/get`` for ``task_status`` only, and cancels the task when the caller gives up.
"""

from __future__ import annotations

import pytest
import trio

from mcpcore import jsonrpc
from mcpcore.client import ClientCallbacks, McpError, TaskCancelledError
from mcpcore.types import DetailedTaskResult
from tests.transports.test_http_tasks import answer, client_of, text_of
from tests.transports.trio_helpers import trio_test

LEGACY = ClientCallbacks(elicitation=answer)


@trio_test
async def test_a_required_task_tool_is_called_as_a_task_and_waited_for() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.tasks is not None
        # Never listed: the call reads the tool list once to learn its taskSupport.
        failed = await client.call_tool("failing_job")
        assert failed.is_error is True
        assert await client.session.tool_task_support("failing_job") == "required"
        assert await client.session.tool_task_support("slow_compute") == "optional"
        assert await client.session.tool_task_support("greet") is None


@trio_test
async def test_an_optional_tool_is_a_task_only_when_asked_and_reports_its_statuses() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        statuses: list[DetailedTaskResult] = []
        plain = await client.call_tool(
            "slow_compute", {"seconds": 0, "label": "sync"}, task_status=statuses.append
        )
        assert text_of(plain) == "Computed sync after 0s"
        assert statuses == []  # a plain call: no task
        result = await client.call_tool(
            "slow_compute",
            {"seconds": 0.2, "label": "task"},
            task=True,
            task_status=statuses.append,
        )
        assert text_of(result) == "Computed task after 0.2s"
        assert [s.status for s in statuses] == ["working", "completed"]
        assert statuses[0].task_id == statuses[-1].task_id
        assert statuses[0].ttl_ms is not None


@trio_test
async def test_the_tasks_question_is_answered_by_the_callbacks() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        deleted = await client.call_tool("confirm_delete", {"filename": "a.txt"}, task=True)
        assert text_of(deleted) == "Deleted a.txt"
        both = await client.call_tool("multi_input", task=True)
        assert text_of(both) == "Got 2 answers"


@trio_test
async def test_a_failed_task_raises_its_error_and_task_false_calls_plainly() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool("protocol_error_job", task=True)
        assert raised.value.code == jsonrpc.INTERNAL_ERROR
        with pytest.raises(McpError) as refused:
            await client.call_tool("failing_job", task=False)
        assert refused.value.code == jsonrpc.METHOD_NOT_FOUND  # "required": -32601


@trio_test
async def test_giving_up_on_the_wait_cancels_the_task_on_the_server() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        seen: list[DetailedTaskResult] = []
        with trio.CancelScope() as scope:

            def give_up(task: DetailedTaskResult) -> None:
                seen.append(task)
                scope.cancel()  # on the first status: the caller stops waiting

            await client.call_tool("slow_compute", {"seconds": 60}, task=True, task_status=give_up)
        assert scope.cancelled_caught
        [working] = seen
        after = await client.session.get_legacy_task(working.task_id)
        assert after.status == "cancelled"


@trio_test
async def test_a_task_cancelled_by_someone_else_raises_task_cancelled() -> None:
    async with client_of(LEGACY, mode="legacy") as client:
        ids: list[str] = []

        async def cancel_it(task: DetailedTaskResult) -> None:
            if task.status == "working" and not ids:
                ids.append(task.task_id)
                await client.session.cancel_task(task.task_id)

        with pytest.raises(TaskCancelledError):
            await client.call_tool(
                "slow_compute", {"seconds": 60}, task=True, task_status=cancel_it
            )
