"""Two workers of one `transports.Deployment`, in one process, sharing a real Redis.

Each worker is a `transports.serve_http` with its own `Server` (as two processes would
have), both pointed at the same ``redis-server`` (`tests.redis_server`). The test
chooses which worker each request reaches, to show what a load balancer without
stickiness needs (issue 18): a legacy session opened on one worker is served by the
other (its requests forwarded to the owner, the answers relayed), a ``DELETE`` on
either ends it for both, a client's answer to an elicitation reaches the handler
waiting on the other worker, a stream cut on one is resumed on the other from Redis,
news (a resource update, a list change) noticed on one reaches listeners held by the
other, and both seal with one key. The real processes behind nginx are
`tests.deploy.test_balanced`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import trio

from mcpcore.framing import SSEEvent, SSEParser
from mcpcore.server import Server
from tests.redis_server import RedisServer
from tests.transports.http_raw import (
    LEGACY,
    POST_HEADERS,
    RawConnection,
    http_test,
    jump,
    message,
    modern_body,
    modern_headers,
)
from transports import Deployment, serve_http
from transports._deploy.relay import RELAY_CHUNK_SIZE
from transports._deploy.shared import LIST_KINDS, RECHECK_INTERVAL


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@dataclass
class Worker:
    """One worker: its server and port, and the scope that stops it."""

    server: Server
    port: int
    scope: trio.CancelScope


#: Seconds of Redis's absence the 503 test jumps through at most, a second at a time
#: (the subscriber's backoff reaches 5 s between tries: `transports._redis.RESUBSCRIBE_BACKOFF`).
RESUBSCRIBE_TRIES = 30
#: Characters of `build`'s ``big_text`` answer: several relay messages' worth.
BIG = 3 * RELAY_CHUNK_SIZE + 17


def build() -> Server:
    from examples.everything import build_server

    server = build_server(trio.sleep, page_size=2)

    @server.tool()
    def big_text() -> str:
        """Answers with more text than one relayed message carries."""
        return "x" * BIG

    return server


@asynccontextmanager
async def workers(
    url: str,
    count: int = 2,
    *,
    servers: Callable[[int], Server] | None = None,
    **options: Any,
) -> AsyncIterator[list[Worker]]:
    """``count`` workers of one deployment, on free ports, for the block.

    Each serves ``servers(index)`` (by default this module's `build`).
    """
    running: list[Worker] = []
    errors: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        for index in range(count):
            server = build() if servers is None else servers(index)
            scope = trio.CancelScope()

            async def serve(
                server: Server,
                scope: trio.CancelScope,
                task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
            ) -> None:
                with scope:
                    await serve_http(
                        server,
                        port=0,
                        deployment=Deployment(url),
                        on_error=errors.append,
                        task_status=task_status,
                        **options,
                    )

            port = await nursery.start(serve, server, scope)
            running.append(Worker(server, port, scope))
        yield running
        nursery.cancel_scope.cancel()
    assert not errors, errors


def legacy_headers(session_id: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "MCP-Protocol-Version": LEGACY, **extra}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


def initialize_body() -> bytes:
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "test", "version": "1"},
    }
    return message("initialize", params, request_id=0)


async def open_session(worker: Worker) -> str:
    """Open a session on ``worker`` (the handshake's two messages); its id."""
    async with await RawConnection.open(worker.port) as http:
        opened = await http.request("POST", headers=legacy_headers(), body=initialize_body())
        assert opened.status == 200, opened
        session_id = opened.headers["mcp-session-id"]
        done = await http.request(
            "POST",
            headers=legacy_headers(session_id),
            body=message("notifications/initialized"),
        )
        assert done.status == 202, done
    return session_id


async def open_stream(
    http: RawConnection, session_id: str, last_event_id: str | None = None
) -> None:
    """GET the session's stream (or resume one after ``last_event_id``); its head is read."""
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": LEGACY,
    }
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    await http.send(http.encode("GET", headers=headers))
    head = await http.read_head()
    assert head.status == 200, head


def parse_events(body: bytes) -> list[SSEEvent]:
    return list(SSEParser().feed(body))


def answers(events: list[SSEEvent]) -> list[dict[str, Any]]:
    """The JSON-RPC messages an event stream carried (priming events have none)."""
    return [json.loads(event.data) for event in events if event.data]


async def call(worker: Worker, session_id: str, body: bytes) -> list[dict[str, Any]]:
    """POST one request to ``worker``; the messages of its answer stream."""
    async with await RawConnection.open(worker.port) as http:
        response = await http.request("POST", headers=legacy_headers(session_id), body=body)
        assert response.status == 200, response
        assert response.headers["content-type"] == "text/event-stream"
        events = parse_events(response.body)
    return answers(events)


@http_test
async def test_a_session_opened_on_one_worker_is_served_by_the_other(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(first)
        # The owner's name starts the id; the other worker forwards to it.
        assert "." in session_id
        listed = await call(second, session_id, message("tools/list", request_id=1))
        assert listed[-1]["id"] == 1
        assert len(listed[-1]["result"]["tools"]) == 2  # (page_size=2)
        called = await call(
            second,
            session_id,
            message("tools/call", {"name": "test_simple_text", "arguments": {}}, request_id=2),
        )
        assert called[-1]["result"]["content"][0]["type"] == "text"


@http_test
async def test_delete_on_either_worker_ends_the_session_for_both(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(first)
        async with await RawConnection.open(second.port) as http:
            deleted = await http.request("DELETE", headers=legacy_headers(session_id))
            assert deleted.status == 200, deleted
        for worker in (first, second):
            async with await RawConnection.open(worker.port) as http:
                gone = await http.request(
                    "POST", headers=legacy_headers(session_id), body=message("ping", request_id=3)
                )
            assert gone.status == 404, gone


@http_test
async def test_an_answer_posted_to_the_other_worker_reaches_the_waiting_handler(
    redis: RedisServer,
) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(second)
        arguments = {"message": "Your name?"}
        body = message(
            "tools/call", {"name": "test_elicitation", "arguments": arguments}, request_id=7
        )
        async with await RawConnection.open(first.port) as http:
            await http.send(http.encode("POST", headers=legacy_headers(session_id), body=body))
            head = await http.read_head()
            assert head.status == 200, head
            asked = None
            while asked is None:
                for event in await http.read_events(1):
                    if event.data and "elicitation/create" in event.data:
                        asked = json.loads(event.data)
            answer = {"action": "accept", "content": {"name": "Ada"}}
            response = {"jsonrpc": "2.0", "id": asked["id"], "result": answer}
            async with await RawConnection.open(first.port) as other:
                posted = await other.request(
                    "POST", headers=legacy_headers(session_id), body=json.dumps(response).encode()
                )
                assert posted.status == 202, posted
            rest = answers(await http.read_all_events())
        assert rest[-1]["id"] == 7
        assert "Ada" in json.dumps(rest[-1]["result"])


@http_test
async def test_a_stream_cut_on_one_worker_resumes_on_the_other(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(first)
        body = message("tools/call", {"name": "test_reconnection", "arguments": {}}, request_id=4)
        # The tool closes its stream on purpose before its answer (SSE polling).
        async with await RawConnection.open(second.port) as http:
            response = await http.request("POST", headers=legacy_headers(session_id), body=body)
            assert response.status == 200, response
            events = parse_events(response.body)
        last_id = [event.id for event in events if event.id][-1]
        assert not [m for m in answers(events) if "id" in m]  # (no answer yet)
        async with await RawConnection.open(first.port) as http:
            await open_stream(http, session_id, last_event_id=last_id)
            rest = answers(await http.read_all_events())
        assert rest[-1]["id"] == 4
        assert rest[-1]["result"]["content"][0]["text"] == "Reconnection test completed"


@http_test
async def test_news_noticed_on_one_worker_reaches_a_stream_held_by_the_other(
    redis: RedisServer,
) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(first)
        uri = "test://static-text"
        subscribed = await call(
            second, session_id, message("resources/subscribe", {"uri": uri}, request_id=5)
        )
        assert subscribed[-1]["result"] == {}
        async with await RawConnection.open(second.port) as http:
            await open_stream(http, session_id)
            await trio.testing.wait_all_tasks_blocked(0.05)
            # Noticed by the worker that does not own the session:
            await second.server.resource_updated(uri)
            await second.server.tools_changed()
            seen: list[str] = []
            while len(seen) < 2:
                seen += [m["method"] for m in answers(await http.read_events(1))]
        assert seen == [
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        ]


@http_test
async def test_both_workers_seal_with_the_deployment_s_key(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        async with await RawConnection.open(first.port) as http:
            page = await http.request(
                "POST", headers=modern_headers("tools/list"), body=modern_body("tools/list")
            )
        cursor = page.json()["result"]["nextCursor"]
        async with await RawConnection.open(second.port) as http:
            following = await http.request(
                "POST",
                headers=modern_headers("tools/list"),
                body=modern_body("tools/list", {"cursor": cursor}),
            )
        assert following.status == 200, following
        assert len(following.json()["result"]["tools"]) == 2


@http_test
async def test_a_session_whose_worker_stopped_is_not_found(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        session_id = await open_session(first)
        first.scope.cancel()
        await trio.testing.wait_all_tasks_blocked(0.05)
        async with await RawConnection.open(second.port) as http:
            gone = await http.request(
                "POST", headers=legacy_headers(session_id), body=message("ping", request_id=6)
            )
        assert gone.status == 404, gone


@http_test
async def test_without_redis_legacy_requests_get_503_and_the_modern_era_goes_on(
    redis: RedisServer,
) -> None:
    async with workers(redis.url, count=1) as (only,):
        redis.stop()
        await trio.testing.wait_all_tasks_blocked(0.05)  # (the subscription saw it go)
        async with await RawConnection.open(only.port) as http:
            refused = await http.request("POST", headers=legacy_headers(), body=initialize_body())
            assert refused.status == 503, refused
            assert b"unreachable" in refused.body
            modern = await http.request(
                "POST", headers=modern_headers("tools/list"), body=modern_body("tools/list")
            )
            assert modern.status == 200, modern
        redis.start()
        statuses = []
        for _ in range(RESUBSCRIBE_TRIES):  # (the subscription comes back after its backoff)
            await jump(RECHECK_INTERVAL)
            async with await RawConnection.open(only.port) as http:
                opened = await http.request(
                    "POST", headers=legacy_headers(), body=initialize_body()
                )
            statuses.append(opened.status)
            if opened.status == 200:
                break
        assert statuses[-1] == 200, statuses
        assert set(statuses[:-1]) <= {503}, statuses


@http_test
async def test_a_2024_11_05_session_takes_messages_on_the_other_worker(redis: RedisServer) -> None:
    async with workers(redis.url) as (first, second):
        async with await RawConnection.open(first.port) as stream:
            await stream.send(stream.encode("GET", headers={"Accept": "text/event-stream"}))
            head = await stream.read_head()
            assert head.status == 200, head
            (endpoint,) = await stream.read_events(1)
            assert endpoint.event == "endpoint"
            async with await RawConnection.open(second.port) as http:
                params = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "old", "version": "1"},
                }
                posted = await http.request(
                    "POST",
                    target=endpoint.data,
                    headers={"Content-Type": "application/json"},
                    body=message("initialize", params, request_id=1),
                )
                assert posted.status == 202, posted
            (answer,) = answers(await stream.read_events(1))
        assert answer["result"]["protocolVersion"] == "2024-11-05"


@pytest.mark.parametrize("replies", ["auto", "json"])
@http_test
async def test_a_large_answer_is_relayed_whole(redis: RedisServer, replies: str) -> None:
    async with workers(redis.url, replies=replies) as (first, second):
        session_id = await open_session(first)
        body = message("tools/call", {"name": "big_text", "arguments": {}}, request_id=8)
        async with await RawConnection.open(second.port) as http:
            response = await http.request("POST", headers=legacy_headers(session_id), body=body)
        assert response.status == 200, response.status
        if replies == "json":
            assert response.headers["content-type"] == "application/json"
            (answer,) = [response.json()]
        else:
            (answer,) = answers(parse_events(response.body))
        assert answer["result"]["content"][0]["text"] == "x" * BIG


@http_test
async def test_after_redis_comes_back_listeners_hear_that_every_list_changed(
    redis: RedisServer,
) -> None:
    async with workers(redis.url, count=1) as (only,):
        session_id = await open_session(only)
        async with await RawConnection.open(only.port) as http:
            await open_stream(http, session_id)
            redis.stop()
            await trio.testing.wait_all_tasks_blocked(0.05)
            redis.start()
            seen: list[str] = []
            for _ in range(RESUBSCRIBE_TRIES):  # (until the subscription is made again)
                await jump(RECHECK_INTERVAL)
                with trio.move_on_after(0.2):
                    while len(seen) < len(LIST_KINDS):
                        seen += [m["method"] for m in answers(await http.read_events(1))]
                if len(seen) == len(LIST_KINDS):
                    break
        assert sorted(seen) == sorted(f"notifications/{kind}/list_changed" for kind in LIST_KINDS)
