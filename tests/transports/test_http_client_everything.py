"""Our HTTP client against our own HTTP server (`serve_http`), in both eras.

Most tests serve `examples.everything.build_server` in-process on 127.0.0.1 (port 0);
a few serve a small server of their own with a tool that waits for ever, to watch the
server's side of a cancellation. One runs ``examples/everything.py --transport http``
as a subprocess, the peer the conformance suite uses, and kills it mid-call.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from bench._ports import reserve_port
from examples.conformance_client import elicit, roots, sample
from examples.everything import build_server
from mcpcore import NotificationReceived, types
from mcpcore.client import ClientCallbacks, ConnectMode
from mcpcore.server import Server
from mcpcore.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from mcpcore.versions import Era
from tests.transports.test_asgi_app import OnePass
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from transports import ConnectionClosedError, HttpClient, open_http_client, serve_http

TIMEOUT = 10.0
EVERYTHING = REPOSITORY / "examples" / "everything.py"
CALLBACKS = ClientCallbacks(elicitation=elicit, sampling=sample, roots=roots)
MODES = [
    pytest.param("legacy", Era.LEGACY, id="legacy"),
    pytest.param("modern", Era.MODERN, id="modern"),
    pytest.param("auto", Era.MODERN, id="auto"),
]


@asynccontextmanager
async def serving(server: Server | None = None) -> AsyncIterator[tuple[str, trio.CancelScope]]:
    """Serve ``server`` (the everything server by default); its URL and its cancel scope."""
    async with trio.open_nursery() as nursery:
        scope = trio.CancelScope()

        async def serve(task_status: trio.TaskStatus[int]) -> None:
            with scope:
                await serve_http(
                    server or build_server(trio.sleep), port=0, task_status=task_status
                )

        port = await nursery.start(serve)
        try:
            yield f"http://127.0.0.1:{port}/mcp", scope
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def everything(mode: ConnectMode, **options: Any) -> AsyncIterator[HttpClient]:
    async with (
        serving() as (url, _),
        open_http_client(url, mode=mode, timeout=TIMEOUT, callbacks=CALLBACKS, **options) as client,
    ):
        yield client


def text_of(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_tools_resources_prompts(mode: ConnectMode, era: Era) -> None:
    async with everything(mode) as client:
        assert client.era is era
        assert (client.session_id is not None) == (era is Era.LEGACY)
        names = [tool.name async for tool in client.iter_tools()]
        assert names[0] == "test_simple_text"
        assert "test_x_mcp_header" in names
        assert not client.invalid_tools
        assert text_of(await client.call_tool("test_simple_text")) == (
            "This is a simple text response for testing."
        )
        failed = await client.call_tool("test_error_handling")
        assert failed.is_error is True
        text = await client.read_resource("test://static-text")
        [content] = text.contents
        assert isinstance(content, types.TextResourceContents)
        binary = await client.read_resource("test://static-binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert blob.mime_type == "image/png"
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt.messages


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_progress_elicitation_and_sampling(mode: ConnectMode, era: Era) -> None:
    async with everything(mode) as client:
        seen: list[float] = []
        done = await client.call_tool(
            "test_tool_with_progress", progress=lambda value, total, message: seen.append(value)
        )
        assert text_of(done) == "Progress test completed"
        assert seen[-1] == 100
        # Legacy: a request on the POST's stream, answered by a POST; 2026-07-28: an
        # InputRequiredResult and a retry. The same callbacks either way.
        answer = await client.call_tool("test_elicitation", {"message": "Who?"})
        assert text_of(answer).startswith("User response: action=accept")
        sampled = await client.call_tool("test_sampling", {"prompt": "Hi"})
        assert text_of(sampled) == "LLM response: A canned answer."


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_a_stream_the_server_closes_is_resumed(mode: ConnectMode, era: Era) -> None:
    async with everything(mode) as client:
        # Legacy: the server closes the answer stream after its priming event (SSE
        # polling) and the client resumes it by GET with Last-Event-ID.
        answer = await client.call_tool("test_reconnection")
        assert text_of(answer) == "Reconnection test completed"


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_x_mcp_header_arguments_reach_the_server(mode: ConnectMode, era: Era) -> None:
    async with everything(mode) as client:
        # Not listed first: a 2026-07-28 server refuses the call without Mcp-Param-Region
        # (-32020), and the client lists the tools and tries again.
        answer = await client.call_tool("test_x_mcp_header", {"region": "eu west ✓"})
        assert text_of(answer) == "region=eu west ✓"


@trio_test
async def test_change_notifications_in_each_era() -> None:
    notified = trio.Event()
    methods: list[str] = []

    def on_notification(event: NotificationReceived) -> None:
        methods.append(event.method)
        notified.set()

    # Legacy: on the session's GET stream.
    async with everything("legacy", on_notification=on_notification) as client:
        await client.call_tool("test_trigger_tool_change")
        await notified.wait()
        assert methods == ["notifications/tools/list_changed"]
    # 2026-07-28: on a subscriptions/listen stream.
    async with everything("modern") as client:
        listened = types.SubscriptionFilter(tools_list_changed=True)
        async with client.listen(listened) as subscription:
            assert subscription.acknowledged.tools_list_changed is True
            await client.call_tool("test_trigger_tool_change")
            notification = await anext(subscription)
            assert notification.method == "notifications/tools/list_changed"


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_a_hundred_concurrent_calls(mode: ConnectMode, era: Era) -> None:
    async with everything(mode) as client:
        answers: list[str] = []

        async def call() -> None:
            answers.append(text_of(await client.call_tool("test_simple_text")))

        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(call)
        assert answers == ["This is a simple text response for testing."] * 100


class Waiting:
    """The ``wait`` tool's events: it started, it was cancelled (`renew`: the next call's)."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = trio.Event()

    def renew(self) -> None:
        """Fresh events, for the next call."""
        self.started, self.cancelled = trio.Event(), trio.Event()


def waiting_server() -> tuple[Server, Waiting]:
    """A server whose tool ``wait`` waits for ever, and its events."""
    server = Server("waiting", "1.0")
    waiting = Waiting()

    @server.tool()
    async def wait() -> str:
        """Waits until cancelled."""
        cancelled = waiting.cancelled
        waiting.started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    @server.tool()
    def ping() -> str:
        """Answers at once."""
        return "pong"

    return server, waiting


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_a_timeout_cancels_the_call_on_the_server(
    mode: ConnectMode, era: Era, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice: in 2026-07-28 the second call, its envelope known, is awaited in one pass."""
    server, waiting = waiting_server()
    one_pass = OnePass(monkeypatch)
    async with (
        serving(server) as (url, _),
        open_http_client(url, mode=mode, timeout=TIMEOUT) as client,
    ):
        for _ in range(2):
            with pytest.raises(TimeoutError):
                await client.call_tool("wait", timeout=0.5)
            assert waiting.started.is_set()
            # Legacy: notifications/cancelled; 2026-07-28: the closed answer stream.
            await waiting.cancelled.wait()
            waiting.renew()
        assert text_of(await client.call_tool("ping")) == "pong"
    assert one_pass.count == (1 if era is Era.MODERN else 0)


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test
async def test_a_server_that_stops_fails_the_pending_calls(mode: ConnectMode, era: Era) -> None:
    server, waiting = waiting_server()
    failures: list[BaseException] = []
    async with (
        serving(server) as (url, serve_scope),
        open_http_client(url, mode=mode, timeout=60) as client,
    ):

        async def call() -> None:
            try:
                await client.call_tool("wait")
            except ConnectionClosedError as exc:
                failures.append(exc)

        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(call)
            await waiting.started.wait()
            serve_scope.cancel()  # the server goes away, connections and all
    assert len(failures) == 3


@trio_test
async def test_a_session_the_server_ended_is_started_again() -> None:
    async with (
        serving() as (url, _),
        open_http_client(url, mode="legacy", timeout=TIMEOUT) as client,
    ):
        old = client.session_id
        assert old is not None
        await delete_session(url, old)
        answer = await client.call_tool("test_simple_text")  # 404, a new session, again
        assert text_of(answer) == "This is a simple text response for testing."
        assert client.session_id not in (None, old)


async def delete_session(url: str, session_id: str) -> None:
    """End a session from outside the client, with a raw DELETE."""
    port = int(url.split(":")[2].split("/", maxsplit=1)[0])
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(
            f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session_id}\r\n"
            "MCP-Protocol-Version: 2025-11-25\r\nContent-Length: 0\r\n\r\n".encode()
        )
        head = await stream.receive_some(4096)
    assert head.startswith(b"HTTP/1.1 2"), head


async def wait_until_listening(port: int) -> None:
    """Return once something accepts connections on ``port`` (a server starting up)."""
    while True:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            await trio.sleep(0.05)  # (polling a port: there is no event to wait on)
            continue
        await stream.aclose()
        return


@trio_test(timeout=30)
async def test_the_everything_example_dying_mid_call() -> None:
    port = reserve_port()
    command = [PYTHON, str(EVERYTHING), "--transport", "http", "--port", str(port)]
    process = await trio.lowlevel.open_process(
        command, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, stderr=subprocess.DEVNULL
    )
    asked = 0
    all_asked = trio.Event()
    all_failed = trio.Event()
    failures: list[BaseException] = []

    async def ask_forever(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
        nonlocal asked
        asked += 1
        if asked == 3:
            all_asked.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    try:
        with trio.fail_after(15):
            await wait_until_listening(port)
        async with open_http_client(
            f"http://127.0.0.1:{port}/mcp",
            mode="legacy",
            timeout=60,
            callbacks=ClientCallbacks(elicitation=ask_forever),
        ) as client:
            assert text_of(await client.call_tool("test_simple_text")).startswith("This is")

            async def call() -> None:
                try:
                    await client.call_tool("test_elicitation", {"message": "Wait"})
                except ConnectionClosedError as exc:
                    failures.append(exc)
                    if len(failures) == 3:
                        all_failed.set()

            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(call)
                await all_asked.wait()  # three calls in flight, each waiting on the user
                process.send_signal(signal.SIGKILL)
                await process.wait()
                # The forms are moot now: the calls fail without waiting for them.
                await all_failed.wait()
                nursery.cancel_scope.cancel()  # (the callbacks still wait)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert all("server" in str(failure) for failure in failures)
