"""The tasks extension from the sans-IO `ClientSession` (2026-07-28, SEP-2663).

`start_tool`, `get_task`, `update_task`, `cancel_task` and `answer_task_input` against a
real `Server` in memory; the task runs when the test says (`StepRunner`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpcore import types
from mcpcore.client import ClientCallbacks, InvalidServerResponseError
from mcpcore.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from tests.core.memory_link import MemoryLink
from tests.core.test_server_tasks import StepRunner, task_server
from tests.core.test_server_tools import asynchronous


async def accept(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"ok": True})


TASKS = ClientCallbacks(elicitation=accept, tasks=True)


async def linked(callbacks: ClientCallbacks = TASKS) -> tuple[MemoryLink, StepRunner]:
    runner = StepRunner()
    server, _ = task_server(runner)
    link = MemoryLink(server, callbacks=callbacks)
    await link.session.connect("modern")
    return link, runner


def test_declaring_tasks_puts_the_extension_in_the_capabilities() -> None:
    assert TASKS.capabilities().extensions == {types.TASKS_EXTENSION: {}}
    assert ClientCallbacks().capabilities().extensions is types.UNSET


@asynchronous
async def test_a_task_is_started_polled_answered_and_finished() -> None:
    link, runner = await linked()
    session = link.session
    task = await session.start_tool("ask_two")
    assert isinstance(task, types.CreateTaskExtensionResult)
    await runner.run()
    waiting = await session.get_task(task.task_id)
    assert waiting.status == "input_required"
    answers: dict[str, Any] = await session.answer_task_input(waiting)
    assert sorted(answers) == ["a", "b"]
    await session.update_task(task.task_id, answers)
    await runner.run()
    done = await session.get_task(task.task_id)
    assert done.status == "completed"
    assert done.result["content"][0]["text"] == "{'ok': True},{'ok': True}"  # type: ignore[index]
    assert await session.answer_task_input(done) == {}


@asynchronous
async def test_a_task_is_cancelled_and_a_plain_result_passes_through() -> None:
    link, runner = await linked()
    session = link.session
    task = await session.start_tool("compute")
    assert isinstance(task, types.CreateTaskExtensionResult)
    await session.cancel_task(task.task_id)
    assert runner.cancelled == [task.task_id]
    assert (await session.get_task(task.task_id)).status == "cancelled"
    plain = await session.start_tool("plain")
    assert isinstance(plain, types.CallToolResult)


@asynchronous
async def test_mrtr_rounds_come_before_the_task() -> None:
    link, runner = await linked()
    task = await link.session.start_tool("gather")
    assert isinstance(task, types.CreateTaskExtensionResult)
    await runner.run()
    done = await link.session.get_task(task.task_id)
    assert done.result["content"][0]["text"] == "task saw {'ok': True} in_task=True"  # type: ignore[index]


@asynchronous
async def test_call_tool_refuses_a_task_it_cannot_wait_for() -> None:
    link, _ = await linked()
    with pytest.raises(InvalidServerResponseError):
        await link.session.call_tool("compute")


@asynchronous
async def test_without_the_extension_start_tool_gets_the_result() -> None:
    link, runner = await linked(ClientCallbacks(elicitation=accept))
    result = await link.session.start_tool("compute", {"label": "now"})
    assert isinstance(result, types.CallToolResult)
    assert not runner.pending


# -- the 2025-11-25 core tasks ----------------------------------------------------------

ASKING = ClientCallbacks(elicitation=accept)


async def legacy_link() -> tuple[MemoryLink, StepRunner]:
    runner = StepRunner()
    server, _ = task_server(runner)
    link = MemoryLink(server, callbacks=ASKING)
    await link.session.connect("legacy")
    return link, runner


@asynchronous
async def test_legacy_task_support_is_read_from_the_tool_list_once() -> None:
    link, _ = await legacy_link()
    session = link.session
    assert await session.tool_task_support("must_be_a_task") == "required"
    assert await session.tool_task_support("compute") == "optional"
    assert await session.tool_task_support("plain") is None
    sent = [json.loads(data) for sender, data, _ in link.pair.emitted if sender == "client"]
    assert [m.get("method") for m in sent].count(
        "tools/list"
    ) == 1  # read once, then remembered (unknown names included)
    assert await session.tool_task_support("nope") is None
    # A changed list is read again.
    await link.server.tools_changed()
    assert await session.tool_task_support("nope") is None
    sent = [json.loads(data) for sender, data, _ in link.pair.emitted if sender == "client"]
    assert [m.get("method") for m in sent].count("tools/list") == 2


@asynchronous
async def test_a_legacy_task_is_started_and_its_result_asks_the_callbacks() -> None:
    link, _ = await legacy_link()
    session = link.session
    created = await session.start_tool_task("ask_two", ttl_ms=5_000)
    assert isinstance(created, types.CreateTaskResult)
    assert created.task.ttl == 5_000
    # tasks/result blocks (the StepRunner runs the task inside it); its questions go
    # to the elicitation callback.
    result = await session.task_result(created.task.task_id)
    assert result.content[0].text == "{'ok': True},{'ok': True}"  # type: ignore[union-attr]
    task = await session.get_legacy_task(created.task.task_id)
    assert task.status == "completed"


@asynchronous
async def test_a_modern_session_knows_no_legacy_task_support() -> None:
    link, _ = await linked()
    assert await link.session.tool_task_support("must_be_a_task") is None
