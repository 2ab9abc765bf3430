"""The tasks extension end to end: our `Client` against `serve_http` (2026-07-28, SEP-2663).

`examples.everything.build_server` served in-process by `transports.serve_http`, whose
nursery runs the tasks; `open_http_client` with ``ClientCallbacks(tasks=True)`` waits
for them (polling ``tasks/get``, answering with ``tasks/update``, cancelling with
``tasks/cancel``), every request over real sockets with the 2026-07-28 headers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from examples.everything import build_server
from mcpcore import jsonrpc
from mcpcore.client import ClientCallbacks, ConnectMode, McpError
from mcpcore.types import (
    DetailedTaskResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from tests.transports.trio_helpers import trio_test
from transports import HttpClient, open_http_client, serve_http
from transports._runtime.tasks import GroupTaskRunner, new_task_id

TIMEOUT = 10.0


async def answer(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    """Fills in every form: names are Alice, confirmations yes."""
    assert isinstance(params, ElicitRequestFormParams)
    properties = params.requested_schema.get("properties", {})
    content: dict[str, str | int | float | bool | list[str]] = {
        name: True if spec.get("type") == "boolean" else "Alice"
        for name, spec in properties.items()
    }
    return ElicitResult(action="accept", content=content)


TASKS = ClientCallbacks(elicitation=answer, tasks=True)


@asynccontextmanager
async def client_of(
    callbacks: ClientCallbacks = TASKS, mode: ConnectMode = "modern"
) -> AsyncIterator[HttpClient]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_http, build_server(trio.sleep), port=0))
        url = f"http://127.0.0.1:{port}/mcp"
        async with open_http_client(url, mode=mode, timeout=TIMEOUT, callbacks=callbacks) as client:
            yield client
        nursery.cancel_scope.cancel()


def text_of(result: Any) -> str:
    return str(result.content[0].text)


@trio_test
async def test_a_tool_runs_as_a_task_and_the_call_waits_for_it() -> None:
    async with client_of() as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert "io.modelcontextprotocol/tasks" in (capabilities.extensions or {})
        seen: list[str] = []
        result = await client.call_tool(
            "slow_compute",
            {"seconds": 0.2, "label": "sum"},
            task_status=lambda task: seen.append(task.status),
        )
        assert text_of(result) == "Computed sum after 0.2s"
        assert seen[-1] == "completed"
        assert seen[0] in ("working", "completed")


@trio_test
async def test_a_task_asks_for_input_and_the_callbacks_answer() -> None:
    async with client_of() as client:
        statuses: list[str] = []
        deleted = await client.call_tool(
            "confirm_delete",
            {"filename": "a.txt"},
            task_status=lambda task: statuses.append(task.status),
        )
        assert text_of(deleted) == "Deleted a.txt"
        assert "input_required" in statuses
        both = await client.call_tool("multi_input")
        assert text_of(both) == "Got 2 answers"
        # MRTR within the request, then the task (SEP-2663 "MRTR → Tasks composition").
        composed = await client.call_tool("test_tool_with_task")
        assert text_of(composed) == "Hello, Alice, from a task!"


@trio_test
async def test_tool_errors_complete_and_protocol_errors_fail() -> None:
    async with client_of() as client:
        failed = await client.call_tool("failing_job")
        assert failed.is_error is True
        with pytest.raises(McpError) as raised:
            await client.call_tool("protocol_error_job")
        assert raised.value.code == jsonrpc.INTERNAL_ERROR


@trio_test
async def test_giving_up_on_the_wait_cancels_the_task_on_the_server() -> None:
    async with client_of() as client:
        tasks: list[DetailedTaskResult] = []
        with trio.move_on_after(1.0):
            await client.call_tool("slow_compute", {"seconds": 60}, task_status=tasks.append)
        [working] = tasks
        assert working.status == "working"
        after = await client.session.get_task(working.task_id)
        assert after.status == "cancelled"


@trio_test
async def test_a_client_without_the_extension_gets_no_tasks() -> None:
    plain = ClientCallbacks(elicitation=answer)
    async with client_of(plain) as client:
        result = await client.call_tool("slow_compute", {"seconds": 0, "label": "sync"})
        assert text_of(result) == "Computed sync after 0s"
        with pytest.raises(McpError) as raised:
            await client.call_tool("failing_job")
        assert raised.value.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY


@trio_test
async def test_the_legacy_era_runs_task_tools_synchronously() -> None:
    async with client_of(mode="legacy") as client:
        result = await client.call_tool("slow_compute", {"seconds": 0, "label": "old"})
        assert text_of(result) == "Computed old after 0s"


@trio_test
async def test_the_runner_cancels_by_id_and_forgets_runs_that_ended() -> None:
    ended: list[str] = []

    def work(name: str, seconds: float) -> Any:
        async def run() -> None:
            try:
                await trio.sleep(seconds)
            finally:
                ended.append(name)

        return run

    async with trio.open_nursery() as nursery:
        runner = GroupTaskRunner(nursery)
        runner.start("quick", work("quick", 0))
        runner.start("slow", work("slow", 60))
        await trio.sleep(0.01)
        assert len(runner) == 1  # "quick" ended and was forgotten
        runner.cancel("slow")
        runner.cancel("slow")  # (twice, and for an id that ended: nothing happens)
        runner.cancel("quick")
    assert ended == ["quick", "slow"]
    assert len(runner) == 0
    assert len({new_task_id() for _ in range(100)}) == 100
