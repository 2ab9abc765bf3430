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
