"""`serve_http` in the legacy eras, over raw HTTP: sessions, streams, resumption, HTTP+SSE.

2025-03-26 … 2025-11-25 Streamable HTTP (CONFORMANCE §4.3, CHECKLIST §14.3) and the
2024-11-05 HTTP+SSE transport (§14.4), on the same endpoint as 2026-07-28.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio

from mcpcore.framing import SSEEvent
from mcpcore.server import Server
from tests.transports.http_raw import (
    LEGACY,
    POST_HEADERS,
    RawConnection,
    RawResponse,
    build_test_server,
    http_test,
    jump,
    message,
    running_server,
)
from transports import HttpLimits
from transports._runtime.workers import WorkerPool


def initialize(version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> bytes:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    return message("initialize", params, 0)


class Session:
    """A legacy session driven by hand over one connection."""

    def __init__(self, http: RawConnection, session_id: str, version: str) -> None:
        self.http = http
        self.id = session_id
        self.version = version

    @classmethod
    async def open(
        cls, http: RawConnection, version: str = LEGACY, capabilities: dict[str, Any] | None = None
    ) -> Session:
        await http.send(http.encode(headers=POST_HEADERS, body=initialize(version, capabilities)))
        head = await http.read_head()
        assert head.status == 200
        events = await http.read_all_events()
        result = json.loads(events[-1].data)["result"]
        session = cls(http, head.headers["mcp-session-id"], result["protocolVersion"])
        initialized = await session.post(message("notifications/initialized"))
        assert (initialized.status, initialized.body) == (202, b"")
        return session

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            **POST_HEADERS,
            "Mcp-Session-Id": self.id,
            "MCP-Protocol-Version": self.version,
            **extra,
        }

    async def post(self, body: bytes, **extra: str) -> RawResponse:
        return await self.http.request(headers=self.headers(**extra), body=body)

    async def call(self, body: bytes) -> tuple[RawResponse, list[SSEEvent]]:
        """POST and read the whole answer stream."""
        await self.http.send(self.http.encode(headers=self.headers(), body=body))
        head = await self.http.read_head()
        return head, await self.http.read_all_events()


def data(event: SSEEvent) -> Any:
    return json.loads(event.data)


# ------------------------------------------------------------------ sessions


@http_test
async def test_initialize_opens_a_session_and_primes_its_stream() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        await http.send(http.encode(headers=POST_HEADERS, body=initialize()))
        head = await http.read_head()
        assert head.status == 200
        assert head.headers["content-type"] == "text/event-stream"
        session_id = head.headers["mcp-session-id"]
        assert len(session_id) >= 32
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id)  # visible ASCII
        priming, answer = await http.read_all_events()
        assert (priming.data, priming.retry) == ("", 1000)
        assert priming.id is not None
        assert answer.id is not None
        assert answer.id != priming.id
        assert data(answer)["result"]["protocolVersion"] == LEGACY
        # Another client gets another session.
        await http.send(http.encode(headers=POST_HEADERS, body=initialize()))
        assert (await http.read_head()).headers["mcp-session-id"] != session_id
        await http.read_all_events()


@http_test
async def test_requests_need_a_session_and_unknown_ones_are_404() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        tools = message("tools/list", {}, 1)
        assert (await http.request(headers=POST_HEADERS, body=tools)).status == 400
        unknown = {**POST_HEADERS, "Mcp-Session-Id": "no-such-session"}
        assert (await http.request(headers=unknown, body=tools)).status == 404
        get = {"Accept": "text/event-stream", "Mcp-Session-Id": "no-such-session"}
        assert (await http.request("GET", headers=get)).status == 404
        assert (await http.request("DELETE", headers={"Mcp-Session-Id": "nope"})).status == 404


@http_test
async def test_delete_ends_the_session_and_its_id_is_404_afterwards() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        # The harness's DELETE carries neither Accept nor Content-Type (trap 10.2-23).
        deleted = await http.request(
            "DELETE", headers={"Mcp-Session-Id": session.id, "MCP-Protocol-Version": LEGACY}
        )
        assert deleted.status == 200
        assert (await session.post(message("tools/list", {}, 1))).status == 404


@http_test
async def test_an_idle_session_expires() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(session_idle_timeout=20, keepalive_timeout=1000)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        session = await Session.open(http)
        await jump(15)
        head, _ = await session.call(message("tools/list", {}, 1))
        assert head.status == 200  # used: the idle clock starts again
        await jump(15)
        head, _ = await session.call(message("tools/list", {}, 1))
        assert head.status == 200
        await jump(21)
        assert (await session.post(message("tools/list", {}, 2))).status == 404


@http_test
async def test_past_the_cap_of_busy_sessions_a_new_one_gets_503() -> None:
    # (Idle sessions give way instead: tests/transports/test_http_server_sessions.py.)
    server, _ = build_test_server()
    limits = HttpLimits(max_sessions=1)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
        await RawConnection.open(running.port) as streaming,
    ):
        first = await Session.open(http)
        get = {**first.headers(), "Accept": "text/event-stream"}
        await streaming.send(streaming.encode("GET", headers=get))
        assert (await streaming.read_head()).status == 200  # busy: its stream is open
        refused = await http.request(headers=POST_HEADERS, body=initialize())
        assert refused.status == 503
        await http.request("DELETE", headers={"Mcp-Session-Id": first.id})
        await Session.open(http)  # room again


@http_test
async def test_any_supported_version_is_accepted_within_a_session() -> None:
    # 0.1.16 sends 2025-03-26 inside a 2025-11-25 session (trap 10.2-4); a missing
    # header means 2025-03-26.
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        for version in ("2025-03-26", "2025-06-18", None):
            headers = session.headers()
            if version is None:
                del headers["MCP-Protocol-Version"]
            else:
                headers["MCP-Protocol-Version"] = version
            await http.send(http.encode(headers=headers, body=message("ping", None, 5)))
            assert (await http.read_head()).status == 200
            events = await http.read_all_events()
            assert events[0].data == ""  # primed whatever the header says (trap 10.1-7)
            assert data(events[-1])["result"] == {}


# ------------------------------------------------------------------ answer streams


@http_test
async def test_notifications_go_on_the_requests_own_stream_before_its_answer() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": 7}}
        head, events = await session.call(message("tools/call", params, 3))
        assert head.headers["mcp-session-id"] == session.id
        ids = [event.id for event in events]
        assert len(set(ids)) == len(ids)  # unique event ids
        progress = [data(e)["params"] for e in events[1:-1]]
        assert [(p["progressToken"], p["progress"]) for p in progress] == [
            (7, 0),
            (7, 50),
            (7, 100),
        ]
        assert data(events[-1])["id"] == 3


@contextmanager
def _submitted() -> Iterator[list[str]]:
    """The tools called in a worker of the server's pool, by name, while the block runs."""
    submitted: list[str] = []
    submit = WorkerPool.submit

    def spy(pool: WorkerPool[Any], job: Any) -> None:
        if job.event.method == "tools/call":
            submitted.append(job.event.params.name)
        submit(pool, job)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WorkerPool, "submit", spy)
        yield submitted


@http_test
async def test_a_plain_def_tool_is_answered_without_a_worker_and_alike() -> None:
    # (`Server.never_waits`: a synchronous tool with no Context runs in the POST's own
    # task; a tool that may wait still gets a worker, where a cancellation reaches it.)
    server, _ = build_test_server()
    with _submitted() as submitted:
        async with (
            running_server(server) as running,
            await RawConnection.open(running.port) as http,
        ):
            session = await Session.open(http)
            for request_id, name in enumerate(["test_simple_text", "test_tool_with_logging"]):
                head, events = await session.call(message("tools/call", {"name": name}, request_id))
                assert head.status == 200
                assert head.headers["mcp-session-id"] == session.id
                priming, *_, answer = events
                assert (priming.data, priming.id is not None) == ("", True)
                assert data(answer)["id"] == request_id
                assert data(answer)["result"]["content"][0]["type"] == "text"
                assert "isError" not in data(answer)["result"]
    assert submitted == ["test_tool_with_logging"]


@http_test
async def test_a_server_request_goes_on_the_post_stream_and_the_answer_comes_by_post() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        streams = await RawConnection.open(running.port)
        session = await Session.open(streams, capabilities={"sampling": {}})
        call = message("tools/call", {"name": "test_sampling", "arguments": {"prompt": "Hi"}}, 4)
        await streams.send(streams.encode(headers=session.headers(), body=call))
        assert (await streams.read_head()).status == 200
        _priming, asked = await streams.read_events(2)
        request = data(asked)
        assert request["method"] == "sampling/createMessage"
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "Hello"},
                "model": "m",
            },
        }
        async with await RawConnection.open(running.port) as other:
            posted = await other.request(
                headers=session.headers(), body=json.dumps(answer).encode()
            )
            assert posted.status == 202
        [result] = await streams.read_all_events()
        assert data(result)["result"]["content"][0]["text"] == "LLM response: Hello"
        await streams.stream.aclose()


@http_test
async def test_a_client_that_hangs_up_does_not_cancel_and_resumes_with_last_event_id() -> None:
    server, record = build_test_server()
    async with running_server(server) as running:
        first = await RawConnection.open(running.port)
        session = await Session.open(first)
        params = {"name": "progress_then_wait", "_meta": {"progressToken": "t"}}
        await first.send(
            first.encode(headers=session.headers(), body=message("tools/call", params, 8))
        )
        await first.read_head()
        _priming, progress = await first.read_events(2)
        assert data(progress)["params"]["progress"] == 1
        await first.stream.aclose()  # "a disconnect SHOULD NOT be interpreted as cancellation"
        await trio.testing.wait_all_tasks_blocked(0.05)
        record["release"].set()  # the handler goes on, its messages go to the store
        async with await RawConnection.open(running.port) as second:
            resume = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": session.id,
                "MCP-Protocol-Version": LEGACY,
                "Last-Event-ID": str(progress.id),
            }
            await second.send(second.encode("GET", headers=resume))
            assert (await second.read_head()).status == 200
            replayed = await second.read_all_events()
            assert [data(e).get("method") for e in replayed] == ["notifications/progress", None]
            assert data(replayed[-1])["result"]["content"][0]["text"] == "released"
        assert not record["cancelled"].is_set()


@http_test
async def test_sse_polling_the_handler_closes_its_stream_and_the_client_resumes() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        await session.call(message("logging/setLevel", {"level": "info"}, 1))
        _head, events = await session.call(message("tools/call", {"name": "test_reconnection"}, 2))
        # The stream ended before the answer: priming, the first log, nothing else.
        assert events[0].data == ""
        assert [data(e)["method"] for e in events[1:]] == ["notifications/message"]
        resume = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session.id,
            "Last-Event-ID": str(events[0].id),  # from the priming event
        }
        await http.send(http.encode("GET", headers=resume))
        assert (await http.read_head()).status == 200
        rest = await http.read_all_events()
        assert [data(e).get("method") for e in rest] == [
            "notifications/message",  # the log before the stream closed, replayed
            "notifications/message",
            None,
        ]
        assert data(rest[-1])["result"]["content"][0]["text"] == "Reconnection test completed"
        unknown = {**resume, "Last-Event-ID": "ffffffffffffffff-3"}
        assert (await http.request("GET", headers=unknown)).status == 400


@http_test
async def test_a_call_that_never_waits_is_stored_and_resumable_as_any() -> None:
    # A plain def tool's call is answered in its POST's task, its stream written at once:
    # primed and stored all the same, so that a client that lost it resumes it.
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        head, events = await session.call(message("tools/call", {"name": "test_simple_text"}, 2))
        assert (head.status, head.headers["content-type"]) == (200, "text/event-stream")
        priming, answer = events
        assert (priming.data, priming.retry) == ("", 1000)
        assert data(answer)["result"]["content"][0]["text"].startswith("This is a simple")
        resume = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session.id,
            "Last-Event-ID": str(priming.id),
        }
        await http.send(http.encode("GET", headers=resume))
        assert (await http.read_head()).status == 200
        [replayed] = await http.read_all_events()
        assert (replayed.id, replayed.data) == (answer.id, answer.data)


@http_test
async def test_the_standalone_stream_carries_list_changed_and_is_single() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        http = await RawConnection.open(running.port)
        session = await Session.open(http)
        get = {"Accept": "text/event-stream", "Mcp-Session-Id": session.id}
        await http.send(http.encode("GET", headers=get))
        assert (await http.read_head()).status == 200
        [priming] = await http.read_events(1)
        assert priming.data == ""
        async with await RawConnection.open(running.port) as other:
            assert (await other.request("GET", headers=get)).status == 409
            trigger = message("tools/call", {"name": "test_trigger_tool_change"}, 3)
            await other.send(other.encode(headers=session.headers(), body=trigger))
            await other.read_response()
        [changed] = await http.read_events(1)
        assert data(changed)["method"] == "notifications/tools/list_changed"
        await http.stream.aclose()


@http_test
async def test_notifications_cancelled_cancels_the_request() -> None:
    server, record = build_test_server()
    async with running_server(server) as running:
        http = await RawConnection.open(running.port)
        session = await Session.open(http)
        await http.send(
            http.encode(
                headers=session.headers(), body=message("tools/call", {"name": "wait_forever"}, 5)
            )
        )
        await http.read_head()
        await record["started"].wait()
        async with await RawConnection.open(running.port) as other:
            cancel = message("notifications/cancelled", {"requestId": 5, "reason": "no"})
            assert (await other.request(headers=session.headers(), body=cancel)).status == 202
        await record["cancelled"].wait()
        # "Receivers SHOULD NOT send a response for a cancelled request": the stream ends.
        events = await http.read_all_events()
        assert all(not event.data for event in events)
        await http.stream.aclose()


@http_test
async def test_a_2025_03_26_session_is_not_primed_and_answers_a_batch_as_a_batch() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http, "2025-03-26")
        assert session.version == "2025-03-26"
        batch = b"[" + message("ping", None, 1) + b"," + message("tools/list", {}, 2) + b"]"
        head, events = await session.call(batch)
        assert head.status == 200
        [answer] = events  # no priming event before 2025-11-25
        answers = data(answer)
        assert sorted(item["id"] for item in answers) == [1, 2]
        # A batch without requests whose one item is garbage: a batch of one error.
        garbage = b'[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"id":5}]'
        refused = await session.post(garbage)
        assert refused.status == 400
        [error] = refused.json()
        assert error["error"]["code"] == -32600


@http_test
async def test_garbage_in_a_session_is_a_400_with_the_parse_error() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http)
        response = await session.post(b"{oops")
        assert response.status == 400
        assert response.json()["error"]["code"] == -32700
        unknown = await session.post(message("no/such", {}, 9))
        assert (unknown.status, unknown.json()["error"]["code"]) == (200, -32601)


# ------------------------------------------------------------------ 2024-11-05 HTTP+SSE


@http_test
async def test_http_plus_sse_endpoint_event_post_and_answers_on_the_stream() -> None:
    server, _ = build_test_server()
    with _submitted() as submitted:
        await _sse_session_calls_a_tool(server)
    # (The 202 does not wait for the answer, which goes on the other stream: a worker.)
    assert submitted == ["test_simple_text"]


async def _sse_session_calls_a_tool(server: Server) -> None:
    async with running_server(server) as running:
        stream = await RawConnection.open(running.port)
        await stream.send(stream.encode("GET", headers={"Accept": "text/event-stream"}))
        assert (await stream.read_head()).status == 200
        [endpoint] = await stream.read_events(1)
        assert endpoint.event == "endpoint"
        assert endpoint.data.startswith("/mcp?sessionId=")
        async with await RawConnection.open(running.port) as poster:
            headers = {"Content-Type": "application/json"}
            accepted = await poster.request(
                target=endpoint.data, headers=headers, body=initialize("2024-11-05")
            )
            assert (accepted.status, accepted.body) == (202, b"Accepted")
            [answer] = await stream.read_events(1)
            assert answer.event == "message"
            assert data(answer)["result"]["protocolVersion"] == "2024-11-05"
            initialized = message("notifications/initialized")
            assert (
                await poster.request(target=endpoint.data, headers=headers, body=initialized)
            ).status == 202
            call = message("tools/call", {"name": "test_simple_text"}, 1)
            assert (
                await poster.request(target=endpoint.data, headers=headers, body=call)
            ).status == 202
            [result] = await stream.read_events(1)
            assert data(result)["result"]["content"][0]["text"].startswith("This is a simple")
            bad = await poster.request(target=endpoint.data, headers=headers, body=b"{oops")
            assert bad.status == 400
            gone = await poster.request(target="/mcp?sessionId=nope", headers=headers, body=call)
            assert gone.status == 404
        await stream.stream.aclose()


@http_test
async def test_a_plain_get_without_an_event_stream_accept_is_406_not_a_hanging_stream() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        assert (await http.request("GET", headers={"Accept": "*/*"})).status == 406
