"""`transports.AsgiApp` as workers of one deployment: real ASGI servers, a real Redis.

``examples.everything:asgi_app`` joins the deployment named by ``MCPCORE_REDIS_URL``.
Two servers of different kinds, uvicorn (asyncio, uvloop) and hypercorn's trio worker,
each on its own port, show the cross-worker paths deterministically, across event
loops: a session opened on one is served, asked for an elicitation, answered and
deleted through the other (the shared key is `tests.deploy.test_shared_sessions`'s),
and a 2026-07-28 task started on one is polled and cancelled through the other (the
tasks' Redis store and runner, `tests.deploy.test_shared_tasks` in one process).
``uvicorn --workers 2`` (one port, the kernel choosing the
worker for each connection) shows the configuration issue 18 names: a session and a
2026-07-28 cursor hold whichever worker each fresh connection reaches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore_cli.deploying import REDIS_VARIABLE
from tests.asgi.plain_http import Answer, initialize, send
from tests.asgi.servers import RunningServer, asgi_server
from tests.redis_server import RedisServer
from tests.transports.http_raw import LEGACY, POST_HEADERS, message, modern_body, modern_headers

#: Fresh connections to ``uvicorn --workers 2``, each a request of the one session.
FRESH_CONNECTIONS = 20
#: ``tasks/get`` polls of a task before the test gives up, `POLL_PAUSE` apart.
POLLS = 200
POLL_PAUSE = 0.05
#: The _meta of a 2026-07-28 request that declares the tasks extension (SEP-2663).
TASKS_META: dict[str, Any] = {
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }
}


@pytest.fixture
def redis(monkeypatch: pytest.MonkeyPatch) -> Iterator[RedisServer]:
    with RedisServer() as server:
        monkeypatch.setenv(REDIS_VARIABLE, server.url)
        yield server


def headers(session_id: str | None = None) -> dict[str, str]:
    fields = {**POST_HEADERS, "MCP-Protocol-Version": LEGACY}
    if session_id is not None:
        fields["Mcp-Session-Id"] = session_id
    return fields


def open_session(server: RunningServer) -> str:
    opened = send(server.origin, "POST", "/mcp", initialize(), headers())
    assert opened.status == 200, opened
    session_id = opened.headers["mcp-session-id"]
    done = send(
        server.origin, "POST", "/mcp", message("notifications/initialized"), headers(session_id)
    )
    assert done.status == 202, done
    return session_id


def call(server: RunningServer, session_id: str, request_id: int) -> Answer:
    body = message("tools/call", {"name": "test_simple_text", "arguments": {}}, request_id)
    return send(server.origin, "POST", "/mcp", body, headers(session_id))


@pytest.mark.usefixtures("redis")
def test_sessions_cross_between_uvicorn_and_hypercorn_trio_workers() -> None:
    with (
        asgi_server("uvicorn-uvloop") as uvicorn,
        asgi_server("hypercorn-trio") as hypercorn,
    ):
        for owner, other in ((uvicorn, hypercorn), (hypercorn, uvicorn)):
            session_id = open_session(owner)
            answered = call(other, session_id, 1)
            assert answered.status == 200, answered
            assert answered.result()["content"][0]["text"]
            deleted = send(other.origin, "DELETE", "/mcp", headers=headers(session_id))
            assert deleted.status == 200, deleted
            assert call(owner, session_id, 2).status == 404


@pytest.mark.usefixtures("redis")
def test_a_session_holds_across_uvicorn_workers() -> None:
    with asgi_server("uvicorn-uvloop", extra=("--workers", "2")) as uvicorn:
        session_id = open_session(uvicorn)
        for request_id in range(FRESH_CONNECTIONS):
            answered = call(uvicorn, session_id, request_id)
            assert answered.status == 200, (request_id, answered)
            (result,) = [m for m in answered.messages() if m.get("id") == request_id]
            assert json.dumps(result["result"]).count("text") >= 1


def modern(server: RunningServer, method: str, params: dict[str, Any]) -> Any:
    """A 2026-07-28 request declaring the tasks extension; its result."""
    name = params.get("name", params.get("taskId"))
    body = modern_body(method, {**params, "_meta": TASKS_META})
    answered = send(server.origin, "POST", "/mcp", body, modern_headers(method, name))
    assert answered.status == 200, answered
    return answered.result()


def status_of(server: RunningServer, task_id: str) -> str:
    status: str = modern(server, "tasks/get", {"taskId": task_id})["status"]
    return status


@pytest.mark.usefixtures("redis")
def test_a_task_crosses_between_uvicorn_and_hypercorn_trio_workers() -> None:
    with (
        asgi_server("uvicorn-uvloop") as uvicorn,
        asgi_server("hypercorn-trio") as hypercorn,
    ):
        for owner, other in ((uvicorn, hypercorn), (hypercorn, uvicorn)):
            quick = {"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "x"}}
            task_id = modern(owner, "tools/call", quick)["taskId"]
            for _ in range(POLLS):
                if status_of(other, task_id) == "completed":
                    break
                time.sleep(POLL_PAUSE)
            got = modern(other, "tasks/get", {"taskId": task_id})
            assert got["result"]["content"][0]["text"] == "Computed x after 0.1s"
            slow = {"name": "slow_compute", "arguments": {"seconds": 600}}
            task_id = modern(owner, "tools/call", slow)["taskId"]
            modern(other, "tasks/cancel", {"taskId": task_id})
            assert status_of(owner, task_id) == status_of(other, task_id) == "cancelled"
