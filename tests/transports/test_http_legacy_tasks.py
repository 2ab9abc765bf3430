"""The 2025-11-25 core tasks over real `serve_http`, spoken in raw HTTP (CHECKLIST §13.1).

`examples.everything.build_server` in-process; a 2025-11-25 session driven by hand:
task-augmented ``tools/call``, ``tasks/get``, ``tasks/result`` blocking on the running
task (the `GroupTaskRunner` wakes it), ``tasks/list`` and ``tasks/cancel``.
"""

from __future__ import annotations

import json
from typing import Any

import trio

from examples.everything import build_server
from mcpcore import jsonrpc, types
from tests.transports.http_raw import RawConnection, http_test, message, running_server
from tests.transports.test_http_server_legacy import Session


async def ask(session: Session, method: str, params: dict[str, Any], request_id: int) -> Any:
    """The JSON-RPC response to one request (its stream's last event)."""
    head, events = await session.call(message(method, params, request_id))
    assert head.status == 200
    return json.loads(events[-1].data)


async def start(session: Session, name: str, arguments: dict[str, Any], request_id: int) -> str:
    params = {"name": name, "arguments": arguments, "task": {"ttl": 60_000}}
    created = (await ask(session, "tools/call", params, request_id))["result"]
    assert created["task"]["status"] == "working"
    assert created["task"]["ttl"] == 60_000
    assert "content" not in created
    task_id: str = created["task"]["taskId"]
    return task_id


@http_test
async def test_a_task_augmented_call_then_tasks_result_blocks_until_it_ends() -> None:
    async with (
        running_server(build_server(trio.sleep)) as running,
        await RawConnection.open(running.port) as http,
    ):
        session = await Session.open(http)
        init_tools = await ask(session, "tools/list", {}, 1)
        support = {
            t["name"]: t.get("execution", {}).get("taskSupport")
            for t in init_tools["result"]["tools"]
        }
        assert support["slow_compute"] == "optional"
        assert support["failing_job"] == "required"
        assert support["greet"] is None
        task_id = await start(session, "slow_compute", {"seconds": 0.3, "label": "x"}, 2)
        got = (await ask(session, "tasks/get", {"taskId": task_id}, 3))["result"]
        assert got["status"] == "working"
        assert got["pollInterval"] > 0
        result = (await ask(session, "tasks/result", {"taskId": task_id}, 4))["result"]
        assert result["content"][0]["text"] == "Computed x after 0.3s"
        assert result["_meta"][types.RELATED_TASK_META_KEY] == {"taskId": task_id}
        got = (await ask(session, "tasks/get", {"taskId": task_id}, 5))["result"]
        assert got["status"] == "completed"
        # Anonymous: tasks/list shows no ids (they are the only secret here).
        listed = (await ask(session, "tasks/list", {}, 6))["result"]
        assert listed["tasks"] == []


@http_test
async def test_capabilities_errors_and_required_task_tools() -> None:
    async with running_server(build_server(trio.sleep)) as running:
        async with await RawConnection.open(running.port) as http:
            await http.send(
                http.encode(
                    headers={
                        "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream",
                    },
                    body=message(
                        "initialize",
                        {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "1"},
                        },
                        0,
                    ),
                )
            )
            await http.read_head()
            init = json.loads((await http.read_all_events())[-1].data)["result"]
            assert init["capabilities"]["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
        async with await RawConnection.open(running.port) as http:
            session = await Session.open(http)
            plain = await ask(session, "tools/call", {"name": "failing_job", "arguments": {}}, 1)
            assert plain["error"]["code"] == jsonrpc.METHOD_NOT_FOUND
            failing = await start(session, "failing_job", {}, 2)
            tool_error = (await ask(session, "tasks/result", {"taskId": failing}, 3))["result"]
            assert tool_error["isError"] is True
            broken = await start(session, "protocol_error_job", {}, 4)
            error = (await ask(session, "tasks/result", {"taskId": broken}, 5))["error"]
            assert error["code"] == jsonrpc.INTERNAL_ERROR
            unknown = await ask(session, "tasks/get", {"taskId": "nope"}, 6)
            assert unknown["error"]["code"] == jsonrpc.INVALID_PARAMS


@http_test
async def test_cancel_wakes_a_waiting_tasks_result() -> None:
    async with (
        running_server(build_server(trio.sleep)) as running,
        await RawConnection.open(running.port) as http,
        await RawConnection.open(running.port) as other,
    ):
        session = await Session.open(http)
        task_id = await start(session, "slow_compute", {"seconds": 60}, 1)
        waited: list[Any] = []

        async def wait_for_result() -> None:
            waited.append(await ask(session, "tasks/result", {"taskId": task_id}, 2))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_for_result)
            await trio.sleep(0.2)
            assert waited == []  # blocked on the running task
            canceller = Session(other, session.id, session.version)
            cancelled = await ask(canceller, "tasks/cancel", {"taskId": task_id}, 3)
            assert cancelled["result"]["status"] == "cancelled"
        [answer] = waited
        assert answer["error"]["code"] == jsonrpc.INTERNAL_ERROR
        again = await ask(session, "tasks/cancel", {"taskId": task_id}, 4)
        assert again["error"]["code"] == jsonrpc.INVALID_PARAMS


# -- input inside a 2025-11-25 task: asked on a tasks/result stream -------------------

ELICITATION: dict[str, Any] = {"elicitation": {}}
#: tasks/get probes before the task's run has asked (a count, never a clock).
PROBES = 200


async def until_input_required(session: Session, task_id: str) -> dict[str, Any]:
    for probe in range(PROBES):
        got: dict[str, Any] = (await ask(session, "tasks/get", {"taskId": task_id}, 900 + probe))[
            "result"
        ]
        if got["status"] == "input_required":
            return got
        await trio.sleep(0)
    raise AssertionError("the task never asked")


async def next_question(http: RawConnection) -> dict[str, Any]:
    """The next server-to-client request on the stream whose head was read."""
    while True:
        # (Nothing else comes on the stream until the question is answered.)
        events = [e for e in await http.read_events(1) if e.data]
        if events:
            [event] = events
            body: dict[str, Any] = json.loads(event.data)
            assert "method" in body, body
            return body


async def answer(session: Session, question: dict[str, Any], content: dict[str, Any]) -> None:
    reply = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": content},
    }
    posted = await session.post(json.dumps(reply).encode())
    assert posted.status == 202


async def open_stream(session: Session, body: bytes) -> None:
    await session.http.send(session.http.encode(headers=session.headers(), body=body))
    assert (await session.http.read_head()).status == 200


@http_test
async def test_tasks_result_asks_the_tasks_question_on_its_stream() -> None:
    async with (
        running_server(build_server(trio.sleep)) as running,
        await RawConnection.open(running.port) as http,
        await RawConnection.open(running.port) as other,
        await RawConnection.open(running.port) as third,
    ):
        session = await Session.open(http, capabilities=ELICITATION)
        side = Session(other, session.id, session.version)
        task_id = await start(session, "confirm_delete", {"filename": "a.txt"}, 1)
        await until_input_required(side, task_id)
        await open_stream(session, message("tasks/result", {"taskId": task_id}, 2))
        question = await next_question(http)
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Delete a.txt?"
        # "Nested requests MUST carry related-task" (2025-11-25 basic/utilities/tasks).
        meta = question["params"]["_meta"]
        assert meta[types.RELATED_TASK_META_KEY] == {"taskId": task_id}
        # A second tasks/result meanwhile waits; it is not asked the same question.
        waiting = Session(third, session.id, session.version)
        await open_stream(waiting, message("tasks/result", {"taskId": task_id}, 3))
        got = (await ask(side, "tasks/get", {"taskId": task_id}, 4))["result"]
        assert got["status"] == "input_required"
        await answer(side, question, {"confirm": True})
        for stream in (http, third):
            events = [json.loads(e.data) for e in await stream.read_all_events() if e.data]
            assert all("method" not in e for e in events)
            result = events[-1]["result"]
            assert result["content"][0]["text"] == "Deleted a.txt"
            assert result["_meta"][types.RELATED_TASK_META_KEY] == {"taskId": task_id}
        got = (await ask(side, "tasks/get", {"taskId": task_id}, 5))["result"]
        assert got["status"] == "completed"


@http_test
async def test_a_cancelled_tasks_result_leaves_its_question_for_the_next() -> None:
    async with (
        running_server(build_server(trio.sleep)) as running,
        await RawConnection.open(running.port) as http,
        await RawConnection.open(running.port) as other,
        await RawConnection.open(running.port) as third,
    ):
        session = await Session.open(http, capabilities=ELICITATION)
        side = Session(other, session.id, session.version)
        task_id = await start(session, "multi_input", {}, 1)
        await until_input_required(side, task_id)
        await open_stream(session, message("tasks/result", {"taskId": task_id}, 2))
        first = await next_question(http)
        assert first["params"]["message"] == "What is your name?"
        cancel = message("notifications/cancelled", {"requestId": 2})
        assert (await side.post(cancel)).status == 202
        ended = [json.loads(e.data) for e in await http.read_all_events() if e.data]
        assert all("result" not in e and "error" not in e for e in ended)  # no answer
        got = (await ask(side, "tasks/get", {"taskId": task_id}, 3))["result"]
        assert got["status"] == "input_required"
        # The next tasks/result is asked both questions, the unanswered one first.
        later = Session(third, session.id, session.version)
        await open_stream(later, message("tasks/result", {"taskId": task_id}, 4))
        again = await next_question(third)
        assert again["params"]["message"] == "What is your name?"
        await answer(side, again, {"name": "Ada"})
        second = await next_question(third)
        assert second["params"]["message"] == "Confirm?"
        await answer(side, second, {"confirm": True})
        events = [json.loads(e.data) for e in await third.read_all_events() if e.data]
        assert events[-1]["result"]["content"][0]["text"] == "Got 2 answers"


@http_test
async def test_a_session_without_elicitation_fails_the_task_with_the_missing_capability() -> None:
    async with (
        running_server(build_server(trio.sleep)) as running,
        await RawConnection.open(running.port) as http,
    ):
        session = await Session.open(http)
        task_id = await start(session, "confirm_delete", {"filename": "a.txt"}, 1)
        error = (await ask(session, "tasks/result", {"taskId": task_id}, 2))["error"]
        assert error["code"] == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}
        got = (await ask(session, "tasks/get", {"taskId": task_id}, 3))["result"]
        assert got["status"] == "failed"
