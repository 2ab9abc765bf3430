"""``notifications/tasks`` on ``subscriptions/listen`` (2026-07-28 tasks extension, SEP-2663).

"notifications/tasks (full DetailedTask) arrive through subscriptions/listen with filter
taskIds[]; the ack echoes the honoured ids. Requesting this without the capability →
-32021." A listen stream follows the tasks of its own principal, and hears each new
state `Tasks` saves.
"""

from __future__ import annotations

from typing import Any

from mcpcore import ErrorReceived, RequestReceived, jsonrpc, types
from mcpcore.server import Server
from tests.core.server_harness import Harness
from tests.core.test_server_tasks import StepRunner, created, modern, task_server
from tests.core.test_server_tools import asynchronous

ID_KEY = types.SUBSCRIPTION_ID_META_KEY


async def listen(harness: Harness, *task_ids: str) -> Any:
    wanted = types.SubscriptionFilter(task_ids=list(task_ids))
    params = types.SubscriptionsListenRequestParams(notifications=wanted, meta={})
    return await harness.call("subscriptions/listen", params)


def task_news(harness: Harness) -> list[Any]:
    return [n.params for n in harness.notifications if n.method == "notifications/tasks"]


async def setup() -> tuple[Server, StepRunner, Harness, Harness]:
    runner = StepRunner()
    server, _ = task_server(runner)
    return server, runner, modern(server), modern(server)


@asynchronous
async def test_a_stream_hears_each_new_state_of_the_tasks_it_follows() -> None:
    _, runner, caller, listener = await setup()
    task_id = await created(caller, "ask_two")
    other = await created(caller, "compute")
    opened = await listen(listener, task_id, "unknown", task_id)
    assert isinstance(opened, RequestReceived)  # the stream stays open
    [ack] = listener.notifications
    assert ack.method == "notifications/subscriptions/acknowledged"
    assert ack.params.notifications.task_ids == [task_id]  # the honoured ids only
    await runner.run()  # ask_two asks; compute completes (not followed)
    [asking] = task_news(listener)
    assert (asking.task_id, asking.status) == (task_id, "input_required")
    assert sorted(asking.input_requests) == ["a", "b"]
    assert asking.meta[ID_KEY] == opened.request_id
    answers = {"a": {"action": "accept", "content": {"ok": True}}}
    update = types.UpdateTaskRequestParams(task_id=task_id, input_responses=answers)
    await caller.result("tasks/update", update)  # a partial answer: still asking
    answers = {"b": {"action": "decline"}}
    update = types.UpdateTaskRequestParams(task_id=task_id, input_responses=answers)
    await caller.result("tasks/update", update)
    await runner.run()
    statuses = [(n.task_id, n.status) for n in task_news(listener)]
    assert statuses == [(task_id, s) for s in ("input_required",) * 2 + ("working", "completed")]
    done = task_news(listener)[-1]
    assert done.result["content"][0]["text"].startswith("{'ok': True}")
    assert other not in {n.task_id for n in task_news(listener)}


@asynchronous
async def test_a_cancelled_task_is_announced_and_a_closed_stream_hears_no_more() -> None:
    server, runner, caller, listener = await setup()
    task_id = await created(caller, "compute")
    opened = await listen(listener, task_id)
    await caller.result("tasks/cancel", types.CancelTaskRequestParams(task_id=task_id))
    assert [n.status for n in task_news(listener)] == ["cancelled"]
    server.request_cancelled(listener.connection, opened.request_id)
    later = await created(caller, "compute")
    await listen(listener, later)
    server.detach(listener.connection)
    await runner.run()
    assert [n.status for n in task_news(listener)] == ["cancelled"]


@asynchronous
async def test_following_tasks_needs_the_extension_declared() -> None:
    _, _, caller, _ = await setup()
    task_id = await created(caller, "compute")
    server = caller.server
    undeclared = modern(server, caps=types.ClientCapabilities())
    refused = await listen(undeclared, task_id)
    assert isinstance(refused, ErrorReceived)
    assert refused.error.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    data: Any = refused.error.data
    assert data["requiredCapabilities"]["extensions"] == {types.TASKS_EXTENSION: {}}


@asynchronous
async def test_another_principals_task_is_not_followed() -> None:
    _, runner, caller, listener = await setup()
    caller.principal = "alice"
    task_id = await created(caller, "compute")
    listener.principal = "mallory"
    await listen(listener, task_id)
    [ack] = listener.notifications
    assert ack.params.notifications.task_ids is types.UNSET
    await runner.run()
    assert task_news(listener) == []
