"""The official SDK (``mcp`` 2.3.0) reading our 2025-11-25 core tasks over HTTP.

The SDK has the 2025-11-25 task types (``mcp_types``: ``TaskMetadata``,
``CreateTaskResult``, ``GetTaskResult``...) but no task machinery: its `mcp.Client`
never augments a call nor polls, and its `ClientSession.send_request` checks a
``tools/call`` answer as a ``CallToolResult`` only. So the task-augmented call goes
through the session's dispatcher (the SDK's wire, our answer parsed by its
``CreateTaskResult``), every other request through ``send_request``, and the SDK's
pydantic models parse our answers: the
capability, each tool's ``execution.taskSupport``, the task a task-augmented
``tools/call`` answers, ``tasks/get``, ``tasks/result`` (blocking, with the related-task
``_meta``), ``tasks/list`` and ``tasks/cancel``; and a task's question put on the
``tasks/result`` stream, answered by the SDK's elicitation callback.
``examples/everything.py`` runs under `transports.serve_http` and as `transports.AsgiApp`
under uvicorn (its lifespan's task group runs the tasks).
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types as sdk_types
import pytest
from mcp import Client, MCPError

from tests.asgi.servers import everything_endpoint
from tests.transports.anyio_helpers import anyio_runner

TEST_TIMEOUT = 30.0
READ_TIMEOUT = 10.0
RELATED_TASK = "io.modelcontextprotocol/related-task"

anyio_test = anyio_runner(TEST_TIMEOUT)


@pytest.fixture(scope="module", params=["serve_http", "uvicorn"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with everything_endpoint(request.param) as endpoint:
        yield endpoint


async def call_as_task(
    client: Client, name: str, arguments: dict[str, object]
) -> sdk_types.CreateTaskResult:
    params = sdk_types.CallToolRequestParams(
        name=name, arguments=arguments, task=sdk_types.TaskMetadata(ttl=60_000)
    )
    data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    dispatcher = client.session._dispatcher
    raw = await dispatcher.send_raw_request("tools/call", data, {"timeout": READ_TIMEOUT})
    return sdk_types.CreateTaskResult.model_validate(raw, by_name=False)


@anyio_test
async def test_the_sdk_parses_the_capability_task_support_and_a_whole_task(url: str) -> None:
    async with Client(url, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.tasks is not None
        assert capabilities.tasks.requests is not None
        assert capabilities.tasks.requests.tools is not None
        assert capabilities.tasks.requests.tools.call is not None
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        slow = tools["slow_compute"].execution
        assert slow is not None
        assert slow.task_support == "optional"
        session = client.session
        created = await call_as_task(client, "slow_compute", {"seconds": 0.2, "label": "sdk"})
        task_id = created.task.task_id
        assert created.task.status == "working"
        got = await session.send_request(
            sdk_types.GetTaskRequest(params=sdk_types.GetTaskRequestParams(task_id=task_id)),
            sdk_types.GetTaskResult,
        )
        assert got.task_id == task_id
        payload = await session.send_request(
            sdk_types.GetTaskPayloadRequest(
                params=sdk_types.GetTaskPayloadRequestParams(task_id=task_id)
            ),
            sdk_types.CallToolResult,
        )
        [block] = payload.content
        assert isinstance(block, sdk_types.TextContent)
        assert block.text == "Computed sdk after 0.2s"
        assert payload.meta is not None
        assert payload.meta[RELATED_TASK] == {"taskId": task_id}
        listed = await session.send_request(sdk_types.ListTasksRequest(), sdk_types.ListTasksResult)
        assert listed.tasks == []  # anonymous: no ids listed


@anyio_test
async def test_the_sdk_cancels_a_task_and_sees_the_errors(url: str) -> None:
    async with Client(url, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
        session = client.session
        created = await call_as_task(client, "slow_compute", {"seconds": 60})
        cancel = sdk_types.CancelTaskRequest(
            params=sdk_types.CancelTaskRequestParams(task_id=created.task.task_id)
        )
        cancelled = await session.send_request(cancel, sdk_types.CancelTaskResult)
        assert cancelled.status == "cancelled"
        with pytest.raises(MCPError) as again:
            await session.send_request(cancel, sdk_types.CancelTaskResult)
        assert again.value.error.code == -32602
        with pytest.raises(MCPError) as required:
            await client.call_tool("failing_job", {})
        assert required.value.error.code == -32601  # "required": call it as a task


@anyio_test
async def test_the_sdk_answers_a_tasks_question_asked_on_its_tasks_result(url: str) -> None:
    # The SDK's session answers any elicitation/create with its callback, so the task's
    # question, put on the blocking tasks/result's stream with the related-task _meta,
    # reaches it like a plain call's would.
    asked: list[sdk_types.ElicitRequestParams] = []

    async def elicit(
        context: object, params: sdk_types.ElicitRequestParams
    ) -> sdk_types.ElicitResult:
        asked.append(params)
        return sdk_types.ElicitResult(action="accept", content={"confirm": True})

    async with Client(
        url, mode="legacy", read_timeout_seconds=READ_TIMEOUT, elicitation_callback=elicit
    ) as client:
        created = await call_as_task(client, "confirm_delete", {"filename": "b.txt"})
        task_id = created.task.task_id
        payload = await client.session.send_request(
            sdk_types.GetTaskPayloadRequest(
                params=sdk_types.GetTaskPayloadRequestParams(task_id=task_id)
            ),
            sdk_types.CallToolResult,
        )
        [block] = payload.content
        assert isinstance(block, sdk_types.TextContent)
        assert block.text == "Deleted b.txt"
        [question] = asked
        assert question.message == "Delete b.txt?"
        meta = question.model_dump(by_alias=True)["_meta"]
        assert meta[RELATED_TASK] == {"taskId": task_id}
