"""open_http_client against scripted servers: event streams, giving up, and things going wrong.

Answers on event streams (progress, a legacy server's own request on the POST's stream),
timeouts and cancellation as each era requires, resumption with ``Last-Event-ID``
after the ``retry`` time, a lost 2026-07-28 stream re-issued, a server that dies
mid-call, listen streams, the 2024-11-05 HTTP+SSE fallback, many calls at once.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from mcpcore.client import ClientCallbacks
from mcpcore.types import ElicitRequestParams, ElicitResult, SubscriptionFilter
from mcpcore.versions import Era
from tests.transports.http_mcp_script import MODERN, Hook, McpScript, result
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.trio_helpers import trio_test
from transports import MAX_CLIENT_CONNECTIONS, ConnectionClosedError, open_http_client

TIMEOUT = 5.0


def text_of(answer: Any) -> str:
    return str(answer.content[0].text)


def only_for(tool: str, script: McpScript, hook: Hook) -> Hook:
    """``hook`` for calls of ``tool``; the script's usual answer for the others."""

    async def hooked(request: Received, reply: Reply) -> None:
        if request.message["params"]["name"] == tool:
            await hook(request, reply)
        else:
            await script.answer(request, reply)

    return hooked


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test
async def test_an_event_stream_answer_with_progress_first(era: str) -> None:
    script = McpScript(era)

    async def streamed(request: Received, reply: Reply) -> None:
        token = request.message["params"]["_meta"]["progressToken"]
        await reply.sse()
        await reply.comment()  # keep-alives are ignored
        for step in (1, 2):
            params = {"progressToken": token, "progress": step, "total": 2}
            await reply.event(
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
            )
        value = {"content": [{"type": "text", "text": "done"}]}
        await reply.event(result(request, value, modern=script.modern))
        await reply.end()

    script.hooks["tools/call"] = only_for("slow", script, streamed)
    seen: list[float] = []
    async with scripted_server(script) as server:
        async with open_http_client(
            server.url, mode="auto", timeout=TIMEOUT, get_stream=False
        ) as client:
            answer = await client.call_tool(
                "slow", progress=lambda value, total, message: seen.append(value)
            )
            assert text_of(answer) == "done"
            assert seen[-1] == 2  # the latest progress is reported before the answer
            await client.call_tool("echo")
        # The stream ended cleanly: its connection carried the next request.
        assert server.connections <= 2


@trio_test
async def test_a_legacy_server_request_on_the_post_stream_is_answered_by_a_new_post() -> None:
    script = McpScript("legacy")
    replied = trio.Event()
    answers: list[Any] = []

    async def asks(request: Received, reply: Reply) -> None:
        await reply.sse()
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        params = {"message": "Sure?", "requestedSchema": schema}
        await reply.event(
            {"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create", "params": params}
        )
        await replied.wait()
        value = {"content": [{"type": "text", "text": f"user said {answers[0]['result']}"}]}
        await reply.event(result(request, value))
        await reply.end()

    async def response(request: Received, reply: Reply) -> None:
        answers.append(request.message)
        replied.set()
        await reply.status(202)

    async def elicit(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"ok": True})

    script.hooks["tools/call"] = asks
    script.hooks[""] = response  # a message without a method: our reply
    async with scripted_server(script) as server:
        async with open_http_client(
            server.url,
            mode="legacy",
            timeout=TIMEOUT,
            get_stream=False,
            callbacks=ClientCallbacks(elicitation=elicit),
        ) as client:
            answer = await client.call_tool("confirm")
            assert "'action': 'accept'" in text_of(answer)
        assert answers[0]["id"] == "srv-1"
        reply_post = next(r for r in server.requests if r.message == answers[0])
        assert reply_post.headers["mcp-session-id"] == "session-1"


@trio_test
async def test_a_legacy_timeout_posts_notifications_cancelled() -> None:
    script = McpScript("legacy")
    release = trio.Event()

    async def hang(request: Received, reply: Reply) -> None:
        await reply.sse()
        await release.wait()

    script.hooks["tools/call"] = only_for("slow", script, hang)
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, mode="legacy", timeout=TIMEOUT, get_stream=False) as client,
    ):
        with pytest.raises(TimeoutError):
            await client.call_tool("slow", timeout=0.2)
        await server.wait_for(lambda: bool(server.rpc("notifications/cancelled")))
        call = server.rpc("tools/call")[0]
        cancelled = server.rpc("notifications/cancelled")[0]
        assert cancelled.message["params"]["requestId"] == call.message["id"]
        assert cancelled.headers["mcp-session-id"] == "session-1"
        assert text_of(await client.call_tool("echo")) == "echo: None"  # still usable
        release.set()


@trio_test
async def test_a_modern_timeout_closes_the_stream_and_posts_nothing() -> None:
    script = McpScript("modern")
    closed = trio.Event()

    async def hang(request: Received, reply: Reply) -> None:
        await reply.sse()
        try:
            while True:  # the server learns of the cancellation as a broken stream
                await reply.comment()
                await trio.sleep(0.01)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            closed.set()
            raise

    script.hooks["tools/call"] = only_for("slow", script, hang)
    async with scripted_server(script) as server:
        async with open_http_client(server.url, timeout=TIMEOUT) as client:
            with pytest.raises(TimeoutError):
                await client.call_tool("slow", timeout=0.2)
            await closed.wait()
            assert text_of(await client.call_tool("echo")).startswith("echo")
        assert not server.rpc("notifications/cancelled")


@trio_test
async def test_cancelling_the_calling_task_cancels_the_request() -> None:
    script = McpScript("legacy")
    started = trio.Event()

    async def hang(request: Received, reply: Reply) -> None:
        await reply.sse()
        started.set()
        await trio.sleep_forever()

    script.hooks["tools/call"] = only_for("slow", script, hang)
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, mode="legacy", timeout=TIMEOUT, get_stream=False) as client,
    ):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "slow")
            await started.wait()
            nursery.cancel_scope.cancel()
        await server.wait_for(lambda: bool(server.rpc("notifications/cancelled")))
        assert server.rpc("notifications/cancelled")[0].message["params"]["reason"] == (
            "cancelled by the client"
        )


@pytest.mark.parametrize("retry", [None, 150])
@trio_test
async def test_a_dropped_legacy_stream_is_resumed_with_last_event_id(retry: int | None) -> None:
    script = McpScript("legacy")
    dropped_at: list[float] = []
    pending: list[Received] = []

    async def drop(request: Received, reply: Reply) -> None:
        pending.append(request)
        await reply.sse()
        await reply.event("", id="stream-1-event-1", retry=retry)  # the priming event
        dropped_at.append(trio.current_time())
        await reply.abort()

    async def resume(request: Received, reply: Reply) -> None:
        assert request.headers["last-event-id"] == "stream-1-event-1"
        await reply.sse()
        value = {"content": [{"type": "text", "text": "resumed"}]}
        await reply.event(result(pending[0], value), id="stream-1-event-2")
        await reply.end()

    script.hooks["tools/call"] = drop
    script.hooks["GET"] = resume
    async with scripted_server(script) as server:
        async with open_http_client(
            server.url, mode="legacy", timeout=TIMEOUT, get_stream=False
        ) as client:
            answer = await client.call_tool("flaky")
            resumed_at = trio.current_time()
            assert text_of(answer) == "resumed"
        get = next(r for r in server.requests if r.method == "GET")
        assert get.headers["mcp-session-id"] == "session-1"
        assert get.headers["mcp-protocol-version"] == "2025-11-25"
        # "(S) SHOULD send a retry: field, which (C) MUST honour before reconnecting".
        assert resumed_at - dropped_at[0] >= (retry or 1000) / 1000


@trio_test
async def test_a_lost_modern_stream_is_reissued_with_a_new_id() -> None:
    script = McpScript("modern")
    attempts: list[Any] = []

    async def lose_once(request: Received, reply: Reply) -> None:
        attempts.append(request.message["id"])
        await reply.sse()
        if len(attempts) == 1:
            await reply.abort()
            return
        value = {"content": [{"type": "text", "text": "second time"}]}
        await reply.event(result(request, value, modern=True))
        await reply.end()

    script.hooks["tools/call"] = lose_once
    async with scripted_server(script) as server:
        async with open_http_client(server.url, timeout=TIMEOUT) as client:
            assert text_of(await client.call_tool("flaky", {"a": 1})) == "second time"
        first, second = server.rpc("tools/call")
        assert first.message["id"] != second.message["id"]  # "MUST re-issue it with a new id"
        assert first.message["params"] == second.message["params"]
        assert first.headers["mcp-name"] == second.headers["mcp-name"] == "flaky"


@pytest.mark.parametrize("era", ["legacy", "modern"])
@trio_test
async def test_a_server_that_dies_fails_every_pending_call_at_once(era: str) -> None:
    script = McpScript(era)
    calls = 5

    async def hang(request: Received, reply: Reply) -> None:
        await reply.sse()
        await trio.sleep_forever()

    script.hooks["tools/call"] = only_for("slow", script, hang)
    failures: list[BaseException] = []
    async with (
        scripted_server(script) as server,
        open_http_client(server.url, timeout=30, get_stream=False) as client,
    ):

        async def call() -> None:
            try:
                await client.call_tool("slow")
            except ConnectionClosedError as exc:
                failures.append(exc)

        async with trio.open_nursery() as nursery:
            for _ in range(calls):
                nursery.start_soon(call)
            await server.wait_for(lambda: len(server.rpc("tools/call")) == calls)
            script.hooks["tools/call"] = die  # a re-issued request finds no one either
            server.kill_connections()
    assert len(failures) == calls
    assert all("server" in str(failure) for failure in failures)


async def die(request: Received, reply: Reply) -> None:
    await reply.abort()


@trio_test
async def test_a_listen_stream_delivers_notifications_and_closing_it_ends_it() -> None:
    script = McpScript("modern")
    stream_closed = trio.Event()

    async def listen(request: Received, reply: Reply) -> None:
        listen_id = request.message["id"]
        meta = {"io.modelcontextprotocol/subscriptionId": listen_id}
        await reply.sse()
        ack = {"notifications": {"toolsListChanged": True}, "_meta": meta}
        await reply.event(
            {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack}
        )
        changed = {"_meta": meta}
        await reply.event(
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": changed}
        )
        try:
            while True:
                await reply.comment()
                await trio.sleep(0.01)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            stream_closed.set()
            raise

    script.hooks["subscriptions/listen"] = listen
    async with scripted_server(script) as server:
        async with open_http_client(server.url, timeout=TIMEOUT) as client:
            async with client.listen(SubscriptionFilter(tools_list_changed=True)) as subscription:
                assert subscription.acknowledged.tools_list_changed is True
                notification = await anext(subscription)
                assert notification.method == "notifications/tools/list_changed"
            await stream_closed.wait()  # "Client ends a subscription: close the SSE stream"
            assert text_of(await client.call_tool("echo")).startswith("echo")
        listen_post = server.rpc("subscriptions/listen")[0]
        assert listen_post.headers["mcp-method"] == "subscriptions/listen"
        assert listen_post.headers["mcp-protocol-version"] == MODERN


@trio_test
async def test_the_2024_11_05_http_sse_fallback() -> None:
    async def handler(request: Received, reply: Reply) -> None:
        if request.target == "/sse" and request.method == "POST":
            await reply.status(405)
        elif request.target == "/sse":
            await reply.sse()
            await reply.event("/messages?session=abc", event="endpoint")
            while True:
                message = await outbox.receive()
                await reply.event(message, event="message")
        else:
            assert request.target == "/messages?session=abc"
            message = request.message
            await reply.status(202)
            if message.get("method") == "initialize":
                value: dict[str, Any] = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "old", "version": "0"},
                }
                await inbox.send({"jsonrpc": "2.0", "id": message["id"], "result": value})
            elif message.get("method") == "tools/call":
                value = {"content": [{"type": "text", "text": "from 2024"}]}
                await inbox.send({"jsonrpc": "2.0", "id": message["id"], "result": value})

    inbox, outbox = trio.open_memory_channel[Any](10)
    async with scripted_server(handler, path="/sse") as server:
        async with open_http_client(server.url, timeout=TIMEOUT) as client:
            assert client.uses_http_sse
            assert client.era is Era.LEGACY
            assert client.protocol_version == "2024-11-05"
            assert text_of(await client.call_tool("old")) == "from 2024"
        assert [r.method for r in server.requests].count("GET") == 1  # its one stream
        posts = [r.rpc_method for r in server.requests if r.method == "POST"]
        # The probe and the initialize at the URL, refused; then the endpoint.
        assert posts == [
            "server/discover",
            "initialize",
            "initialize",
            "notifications/initialized",
            "tools/call",
        ]


@trio_test
async def test_an_off_origin_endpoint_is_not_followed() -> None:
    async def handler(request: Received, reply: Reply) -> None:
        if request.method == "POST":
            await reply.status(405)
        else:
            await reply.sse()
            await reply.event("http://example.com/steal", event="endpoint")
            await reply.end()

    async with scripted_server(handler) as server:
        with pytest.raises(Exception, match="HTTP 405"):
            async with open_http_client(server.url, timeout=TIMEOUT):
                pass
        assert [r.method for r in server.requests].count("POST") == 2


@trio_test
async def test_a_hundred_calls_at_once() -> None:
    script = McpScript("modern")
    async with scripted_server(script) as server:
        async with open_http_client(server.url, timeout=TIMEOUT) as client:
            answers: dict[int, str] = {}

            async def call(n: int) -> None:
                answers[n] = text_of(await client.call_tool("echo", {"n": n}))

            async with trio.open_nursery() as nursery:
                for n in range(100):
                    nursery.start_soon(call, n)
        assert answers == {n: f"echo: {{'n': {n}}}" for n in range(100)}
        assert server.most_open <= MAX_CLIENT_CONNECTIONS
