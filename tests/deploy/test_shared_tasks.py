"""Tasks across the workers of one `transports.Deployment` (issue 19), on a real Redis.

Two `transports.serve_http` workers, each with its own `Server` (as two processes
would have), share a ``redis-server``; the test chooses which worker each request
reaches, as a load balancer without stickiness may. A 2026-07-28 task created on one
worker is polled (``tasks/get``) on the other until it completes; its question is
answered (``tasks/update``) on the other, which runs it on; ``tasks/cancel`` on the
other cancels the run where it runs (the tool sees the cancellation); a 2025-11-25
``tasks/result`` on the other blocks until the task ends (failed, when the task's
worker stops), and puts the task's question to its own client, whose answer runs the
task on there; and ``tasks/list`` on the other shows the principal's tasks. Waits are
counted polls, never clock bounds.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import trio
import trio.testing

from examples.everything import build_server
from mcpcore.server import Context, MemoryTaskStore, Server
from tests.deploy.test_shared_sessions import Worker, legacy_headers, parse_events
from tests.deploy.test_shared_sessions import workers as shared_workers
from tests.redis_server import RedisServer
from tests.transports.http_raw import (
    LEGACY,
    RawConnection,
    http_test,
    message,
    modern_body,
    modern_headers,
)
from tests.transports.test_http_legacy_tasks import (
    ELICITATION,
    answer,
    next_question,
    open_stream,
    start,
    until_input_required,
)
from tests.transports.test_http_server_legacy import Session
from transports import BearerAuth, Deployment, Principal, serve_http

#: Polls of a task's status before a test gives up (each after the servers went idle).
POLLS = 200
#: The _meta of a 2026-07-28 request that declares the tasks extension (SEP-2663).
TASKS_META: dict[str, Any] = {
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {},
    }
}
TOKENS = {"alice-token": Principal("alice"), "bob-token": Principal("bob")}


@dataclass
class Held:
    """What the test's tools did, on which worker (both share one, in one process)."""

    release: trio.Event = field(default_factory=trio.Event)
    started: trio.Event = field(default_factory=trio.Event)
    cancelled: trio.Event = field(default_factory=trio.Event)
    ran_on: list[str] = field(default_factory=list)


def build(held: Held, name: str) -> Server:
    server = build_server(trio.sleep)

    @server.tool(task="optional")
    async def held_job() -> str:
        """Runs until the test releases it; notes a cancellation."""
        held.ran_on.append(name)
        held.started.set()
        finished = False
        try:
            await held.release.wait()
            finished = True
        finally:
            if not finished:
                held.cancelled.set()
        return f"released on {name}"

    @server.tool(task="optional")
    async def asking_job(ctx: Context) -> str:
        """Asks a question inside the task, then says where it ran."""
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        answer = await ctx.elicit("Go on?", schema, key="go")
        held.ran_on.append(name)
        return f"{(answer.content or {}).get('ok')} on {name}"

    return server


@asynccontextmanager
async def workers(url: str, held: Held, **options: Any) -> AsyncIterator[list[Worker]]:
    """Two workers of one deployment ("one" and "two"), on free ports, for the block."""
    names = ("one", "two")
    async with shared_workers(url, servers=lambda i: build(held, names[i]), **options) as both:
        yield both


class Listening(Protocol):
    """A worker as these helpers reach it: in-process (here) or a process (a cluster's)."""

    @property
    def port(self) -> int: ...


async def modern(worker: Listening, method: str, params: dict[str, Any]) -> Any:
    """A 2026-07-28 request declaring the tasks extension; its JSON-RPC response.

    (An error answers with its HTTP status: 400 for invalid params.)
    """
    name = params.get("name", params.get("taskId"))
    body = modern_body(method, {**params, "_meta": TASKS_META})
    async with await RawConnection.open(worker.port) as http:
        response = await http.request("POST", headers=modern_headers(method, name), body=body)
    return response.json()


async def follow(port: int, task_id: str) -> RawConnection:
    """A 2026-07-28 listen stream following ``task_id`` (subscription ``follow``), acknowledged."""
    listener = await RawConnection.open(port)
    params = {"notifications": {"taskIds": [task_id]}, "_meta": TASKS_META}
    await listener.send(
        listener.encode(
            headers=modern_headers("subscriptions/listen"),
            body=modern_body("subscriptions/listen", params, request_id="follow"),
        )
    )
    assert (await listener.read_head()).status == 200
    [ack] = await listener.read_events(1)
    assert json.loads(ack.data)["params"]["notifications"]["taskIds"] == [task_id]
    return listener


async def create(worker: Listening, tool: str, arguments: dict[str, Any] | None = None) -> str:
    created = (await modern(worker, "tools/call", {"name": tool, "arguments": arguments or {}}))[
        "result"
    ]
    assert created["status"] == "working", created
    task_id: str = created["taskId"]
    return task_id


async def poll(worker: Worker, task_id: str, until: str) -> dict[str, Any]:
    """``tasks/get`` on ``worker`` until the task's status is ``until``."""
    for _ in range(POLLS):
        got: dict[str, Any] = (await modern(worker, "tasks/get", {"taskId": task_id}))["result"]
        if got["status"] == until:
            return got
        await trio.testing.wait_all_tasks_blocked(0.01)
    raise AssertionError(f"the task never became {until}: {got}")


@http_test
async def test_a_task_created_on_one_worker_is_polled_on_the_other(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        task_id = await create(first, "held_job")
        await held.started.wait()
        assert held.ran_on == ["one"]
        working = (await modern(second, "tasks/get", {"taskId": task_id}))["result"]
        assert working["status"] == "working"
        held.release.set()
        done = await poll(second, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "released on one"
        unknown = await modern(second, "tasks/get", {"taskId": "no-such-task"})
        assert unknown["error"]["code"] == -32602


@http_test
async def test_an_answer_on_the_other_worker_resumes_the_task_there(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        task_id = await create(first, "asking_job")
        asked = await poll(second, task_id, "input_required")
        assert list(asked["inputRequests"]) == ["go"]
        answer = {"action": "accept", "content": {"ok": True}}
        updated = await modern(
            second, "tasks/update", {"taskId": task_id, "inputResponses": {"go": answer}}
        )
        assert updated["result"]["resultType"] == "complete"
        done = await poll(first, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "True on two"
        assert held.ran_on == ["two"]


@http_test
async def test_a_cancel_on_the_other_worker_cancels_the_run(redis_server: RedisServer) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        task_id = await create(first, "held_job")
        await held.started.wait()
        cancelled = await modern(second, "tasks/cancel", {"taskId": task_id})
        assert cancelled["result"]["resultType"] == "complete"
        await held.cancelled.wait()  # (the run on the first worker was cancelled)
        for worker in (first, second):
            got = (await modern(worker, "tasks/get", {"taskId": task_id}))["result"]
            assert got["status"] == "cancelled"


async def open_legacy(worker: Worker, token: str | None = None) -> str:
    """A 2025-11-25 session on ``worker`` (with a bearer token); its id."""
    auth = {} if token is None else {"Authorization": f"Bearer {token}"}
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    async with await RawConnection.open(worker.port) as http:
        opened = await http.request(
            "POST", headers=legacy_headers(**auth), body=message("initialize", params, 0)
        )
        assert opened.status == 200, opened
        session_id = opened.headers["mcp-session-id"]
        done = await http.request(
            "POST",
            headers=legacy_headers(session_id, **auth),
            body=message("notifications/initialized"),
        )
        assert done.status == 202, done
    return session_id


async def legacy(
    worker: Worker,
    session_id: str,
    method: str,
    params: dict[str, Any],
    token: str | None = None,
) -> Any:
    """One 2025-11-25 request in a session; its JSON-RPC response."""
    auth = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with await RawConnection.open(worker.port) as http:
        response = await http.request(
            "POST",
            headers=legacy_headers(session_id, **auth),
            body=message(method, params, request_id=7),
        )
    assert response.status == 200, response
    return json.loads(parse_events(response.body)[-1].data)


@http_test
async def test_a_legacy_tasks_result_on_the_other_worker_waits_for_the_end(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        here = await open_legacy(first)
        there = await open_legacy(second)  # (another session, owned by the other worker)
        call = {"name": "held_job", "arguments": {}, "task": {"ttl": 60_000}}
        created = (await legacy(first, here, "tools/call", call))["result"]
        task_id = created["task"]["taskId"]
        await held.started.wait()
        answers: list[Any] = []

        async def wait_for_result() -> None:
            answers.append(await legacy(second, there, "tasks/result", {"taskId": task_id}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_for_result)
            await trio.testing.wait_all_tasks_blocked(0.05)
            assert answers == []  # (blocked: "MUST block until a terminal status")
            held.release.set()
        [answer] = answers
        assert answer["result"]["content"][0]["text"] == "released on one"
        related = answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]
        assert related == {"taskId": task_id}


@http_test
async def test_tasks_list_on_the_other_worker_shows_the_principals_tasks(
    redis_server: RedisServer,
) -> None:
    held = Held()
    auth = BearerAuth(TOKENS.get)
    async with workers(redis_server.url, held, auth=auth) as (first, second):
        alices = await open_legacy(first, "alice-token")
        call = {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
        made = []
        for _ in range(2):
            created = await legacy(first, alices, "tools/call", call, "alice-token")
            made.append(created["result"]["task"]["taskId"])
        bobs = await open_legacy(second, "bob-token")
        bob_made = await legacy(second, bobs, "tools/call", call, "bob-token")
        alice_there = await open_legacy(second, "alice-token")
        listed = (await legacy(second, alice_there, "tasks/list", {}, "alice-token"))["result"]
        assert sorted(task["taskId"] for task in listed["tasks"]) == sorted(made)
        listed = (await legacy(first, bobs, "tasks/list", {}, "bob-token"))["result"]
        assert [task["taskId"] for task in listed["tasks"]] == [
            bob_made["result"]["task"]["taskId"]
        ]


@http_test
async def test_a_task_whose_worker_stops_fails_for_a_tasks_result_waiting_elsewhere(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        here = await open_legacy(first)
        there = await open_legacy(second)
        call = {"name": "held_job", "arguments": {}, "task": {"ttl": 60_000}}
        created = (await legacy(first, here, "tools/call", call))["result"]
        task_id = created["task"]["taskId"]
        await held.started.wait()
        answers: list[Any] = []

        async def wait_for_result() -> None:
            answers.append(await legacy(second, there, "tasks/result", {"taskId": task_id}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_for_result)
            await trio.testing.wait_all_tasks_blocked(0.05)
            first.scope.cancel()  # the worker running the task stops (a restart)
        assert held.cancelled.is_set()
        [answer] = answers
        assert answer["error"] == {
            "code": -32603,
            "message": "The server stopped while the task was running",
        }
        got = (await legacy(second, there, "tasks/get", {"taskId": task_id}))["result"]
        assert got["status"] == "failed"


@http_test
async def test_a_legacy_tasks_question_is_put_by_the_other_worker(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with (
        workers(redis_server.url, held) as (first, second),
        await RawConnection.open(first.port) as on_first,
        await RawConnection.open(second.port) as on_second,
        await RawConnection.open(second.port) as beside,
    ):
        creator = await Session.open(on_first, capabilities=ELICITATION)
        task_id = await start(creator, "asking_job", {}, 1)
        await until_input_required(creator, task_id)
        asker = await Session.open(on_second, capabilities=ELICITATION)
        await open_stream(asker, message("tasks/result", {"taskId": task_id}, 2))
        question = await next_question(on_second)
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Go on?"
        await answer(Session(beside, asker.id, asker.version), question, {"ok": True})
        events = [json.loads(e.data) for e in await on_second.read_all_events() if e.data]
        assert events[-1]["result"]["content"][0]["text"] == "True on two"
        assert held.ran_on == ["two"]


@http_test
async def test_without_redis_a_task_call_fails_and_a_run_cannot_end_the_worker() -> None:
    held = Held()
    with RedisServer() as redis:
        async with workers(redis.url, held) as (first, second):
            task_id = await create(first, "held_job")
            await held.started.wait()
            redis.stop()
            held.release.set()  # (the run ends: its save finds no Redis)
            await trio.testing.wait_all_tasks_blocked(0.05)
            call = {"name": "slow_compute", "arguments": {"seconds": 0}}
            refused = await modern(first, "tools/call", call)
            assert refused["error"] == {"code": -32603, "message": "The task store is unreachable"}
            redis.start()
            # Both workers serve on: a new task completes, polled on the other.
            again = await create(first, "slow_compute", {"seconds": 0, "label": "back"})
            done = await poll(second, again, "completed")
            assert done["result"]["content"][0]["text"] == "Computed back after 0s"
            assert task_id != again


@http_test
async def test_a_server_given_its_own_task_store_keeps_it_in_a_deployment(
    redis_server: RedisServer,
) -> None:
    own = MemoryTaskStore(time.time)
    server = Server("own-store", "1.0", task_store=own)

    @server.tool(task="optional")
    async def quick() -> str:
        """Answers at once."""
        return "done"

    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve_http, server, port=0, deployment=Deployment(redis_server.url))
        )
        worker = Worker(server, port, nursery.cancel_scope)
        task_id = await create(worker, "quick")
        done = await poll(worker, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "done"
        assert server.tasks.store is own
        assert len(own) == 1
        assert redis_server.command("KEYS", "mcpcore:task*") == []  # (none in Redis)
        nursery.cancel_scope.cancel()
    assert server.tasks.store is own


@http_test
async def test_a_listen_stream_on_the_other_worker_hears_the_tasks_news(
    redis_server: RedisServer,
) -> None:
    held = Held()
    async with workers(redis_server.url, held) as (first, second):
        task_id = await create(first, "held_job")
        await held.started.wait()
        listener = await follow(second.port, task_id)
        held.release.set()  # (the run ends on the first worker, which saves it)
        [news] = await listener.read_events(1)
        notification = json.loads(news.data)
        assert notification["method"] == "notifications/tasks"
        assert notification["params"]["taskId"] == task_id
        assert notification["params"]["status"] == "completed"
        assert notification["params"]["result"]["content"][0]["text"] == "released on one"
        meta = notification["params"]["_meta"]
        assert meta["io.modelcontextprotocol/subscriptionId"] == "follow"
        await listener.stream.aclose()
