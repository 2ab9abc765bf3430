"""`serve_http(replies=...)`: how a POST carrying a request is answered, in both eras.

``"auto"`` (default): legacy sessions get a primed event stream, 2026-07-28 requests a
JSON body unless something comes first. ``"json"``: a JSON body whenever nothing comes
before the answer (legacy too: no priming, nothing stored), a stream otherwise.
``"stream"``: an event stream always. Checked over raw HTTP (content type and body), and
with our client and the official SDK's client (``mcp`` 2.3.0) against each mode.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, Final

import mcp_types as sdk_types
import pytest
import trio
from mcp import Client

from examples.conformance_client import elicit, roots, sample
from examples.everything import build_server
from mcpcore.client import ClientCallbacks, ConnectMode
from mcpcore.framing import SSEEvent
from tests.transports.anyio_helpers import anyio_runner
from tests.transports.http_raw import (
    LEGACY,
    POST_HEADERS,
    RawConnection,
    RawResponse,
    build_test_server,
    http_test,
    jump,
    message,
    modern_body,
    modern_headers,
    running_server,
)
from tests.transports.test_queued_cancellation import Gate, hold_call, settle
from transports import HttpLimits, MemoryEventStore, ReplyMode, open_http_client, serve_http

REPLY_MODES: Final = ["auto", "json", "stream"]
JSON: Final = "application/json"
SSE: Final = "text/event-stream"
#: Seconds any one client test may take.
TEST_TIMEOUT: Final = 30.0
#: Seconds a call made through a client may take.
CALL_TIMEOUT: Final = 10.0
CALLBACKS: Final = ClientCallbacks(elicitation=elicit, sampling=sample, roots=roots)


class CountingStore(MemoryEventStore):
    """The in-memory event store, counting the events stored."""

    def __init__(self) -> None:
        super().__init__()
        self.stored = 0

    async def store_event(self, stream_id: str, message: bytes | None) -> str:
        self.stored += 1
        return await super().store_event(stream_id, message)


async def read_answer(http: RawConnection) -> tuple[RawResponse, list[Any], list[SSEEvent]]:
    """Read a response: its head, its JSON-RPC messages, and its events (if a stream)."""
    head = await http.read_head()
    if head.headers["content-type"] == SSE:
        events = await http.read_all_events()
        return head, [json.loads(event.data) for event in events if event.data], events
    body = b""
    while chunk := await http.read_chunk():
        body += chunk
    return head, [json.loads(body)], []


async def open_session(http: RawConnection, version: str = LEGACY) -> dict[str, str]:
    """Initialize a legacy session by hand; the headers of its later POSTs."""
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    await http.send(http.encode(headers=POST_HEADERS, body=message("initialize", params, 0)))
    head, [answer], _ = await read_answer(http)
    assert answer["result"]["protocolVersion"] == version
    headers = {
        **POST_HEADERS,
        "Mcp-Session-Id": head.headers["mcp-session-id"],
        "MCP-Protocol-Version": version,
    }
    initialized = await http.request(headers=headers, body=message("notifications/initialized"))
    assert initialized.status == 202
    return headers


def call_body(era: str, name: str, meta: dict[str, Any] | None = None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    if era == "modern":
        return modern_body("tools/call", params, request_id=7)
    return message("tools/call", params, 7)


# ------------------------------------------------------------------ raw HTTP


@pytest.mark.parametrize("replies", REPLY_MODES)
@http_test
async def test_a_plain_legacy_call_in_each_mode(replies: str) -> None:
    server, _ = build_test_server()
    store = CountingStore()
    async with (
        running_server(server, replies=replies, event_store=store) as running,
        await RawConnection.open(running.port) as http,
    ):
        headers = await open_session(http)
        stored_before = store.stored
        await http.send(http.encode(headers=headers, body=call_body("legacy", "test_simple_text")))
        head, [answer], events = await read_answer(http)
        assert head.status == 200
        assert head.headers["mcp-session-id"] == headers["Mcp-Session-Id"]
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"].startswith("This is a simple text")
        if replies == "json":
            # A JSON body: no priming, nothing stored (nothing to resume).
            assert head.headers["content-type"] == JSON
            assert store.stored == 0
        else:
            # A 2025-11-25 stream: the priming event (an id, no data, retry), the answer.
            assert head.headers["content-type"] == SSE
            priming, last = events
            assert (priming.data, priming.retry) == ("", 1000)
            assert priming.id is not None
            assert last.id is not None
            assert store.stored - stored_before == 2


@pytest.mark.parametrize("replies", REPLY_MODES)
@http_test
async def test_a_plain_modern_call_in_each_mode(replies: str) -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, replies=replies) as running,
        await RawConnection.open(running.port) as http,
    ):
        await http.send(
            http.encode(
                headers=modern_headers("tools/call", "test_simple_text"),
                body=call_body("modern", "test_simple_text"),
            )
        )
        head, [answer], events = await read_answer(http)
        assert head.status == 200
        assert answer["id"] == 7
        assert answer["result"]["content"][0]["text"].startswith("This is a simple text")
        assert "mcp-session-id" not in head.headers
        if replies == "stream":
            assert head.headers["content-type"] == SSE
            assert head.headers["x-accel-buffering"] == "no"
            [event] = events
            assert event.id is None  # (2026-07-28 streams are not resumable)
        else:
            assert head.headers["content-type"] == JSON


@pytest.mark.parametrize("era", ["legacy", "modern"])
@http_test
async def test_json_replies_fall_back_to_a_stream_when_progress_comes_first(era: str) -> None:
    server, _ = build_test_server()
    store = CountingStore()
    async with (
        running_server(server, replies="json", event_store=store) as running,
        await RawConnection.open(running.port) as http,
    ):
        if era == "legacy":
            headers = await open_session(http)
        else:
            headers = modern_headers("tools/call", "test_tool_with_progress")
        body = call_body(era, "test_tool_with_progress", {"progressToken": "p-1"})
        await http.send(http.encode(headers=headers, body=body))
        head, messages, events = await read_answer(http)
        assert head.headers["content-type"] == SSE
        progress = [m["params"]["progress"] for m in messages if m.get("method")]
        assert progress == [0, 50, 100]
        assert messages[-1]["id"] == 7
        assert messages[-1]["result"]["content"][0]["text"] == "Progress test completed"
        if era == "legacy":
            # Primed when it became a stream, and resumable from then on: all stored.
            assert (events[0].data, events[0].retry) == ("", 1000)
            assert all(event.id is not None for event in events)
            assert store.stored == len(events)
        else:
            assert all(event.id is None for event in events)
        # The connection goes on, and a quiet call is JSON again.
        if era == "legacy":
            await http.send(http.encode(headers=headers, body=call_body(era, "test_simple_text")))
        else:
            await http.send(
                http.encode(
                    headers=modern_headers("tools/call", "test_simple_text"),
                    body=call_body(era, "test_simple_text"),
                )
            )
        head, _, _ = await read_answer(http)
        assert head.headers["content-type"] == JSON


@http_test
async def test_json_replies_let_a_quiet_legacy_call_become_a_stream_for_keepalives() -> None:
    server, record = build_test_server()
    limits = HttpLimits(sse_keepalive_interval=10)
    async with (
        running_server(server, replies="json", limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        headers = await open_session(http)
        await http.send(
            http.encode(headers=headers, body=call_body("legacy", "progress_then_wait"))
        )
        await jump(11)  # (no progress token: nothing was sent so far)
        head = await http.read_head()
        assert head.headers["content-type"] == SSE
        assert head.headers["mcp-session-id"] == headers["Mcp-Session-Id"]
        assert await http.read_chunk() == b": keep-alive\n\n"
        record["release"].set()
        [event] = await http.read_all_events()
        assert json.loads(event.data)["result"]["content"][0]["text"] == "released"


@http_test
async def test_json_replies_answer_a_call_that_never_waits_within_the_sessions_cap() -> None:
    # A plain def tool's call is answered in its POST's task, with no stream, but only
    # with a handler slot of its session free: at the cap it waits, as any call.
    server, _ = build_test_server()
    gate = Gate(server)
    ran: list[int] = []

    @server.tool()
    def count() -> str:
        """Says how many times it ran (no Context: it never waits)."""
        ran.append(len(ran))
        return f"ran {len(ran)}"

    def count_call(request_id: int) -> bytes:
        return message("tools/call", {"name": "count", "arguments": {}}, request_id)

    limits = HttpLimits(max_session_handlers=1)
    async with (
        running_server(server, replies="json", limits=limits) as running,
        contextlib.AsyncExitStack() as stack,
    ):
        held, waiting, control = [
            await stack.enter_async_context(await RawConnection.open(running.port))
            for _ in range(3)
        ]
        headers = await open_session(control)
        await held.send(held.encode(headers=headers, body=hold_call(1)))
        await settle()
        assert gate.ran == ["1"]  # the session's one slot is taken
        await waiting.send(waiting.encode(headers=headers, body=count_call(2)))
        await settle()
        assert ran == []  # it waits for the slot
        gate.open.set()
        for http, request_id in ((held, 1), (waiting, 2)):
            head, [answer], _ = await read_answer(http)
            assert (head.status, head.headers["content-type"]) == (200, JSON)
            assert answer["id"] == request_id
        assert ran == [0]
        response = await control.request(headers=headers, body=count_call(3))  # (a free slot)
        assert (response.status, response.headers["content-type"]) == (200, JSON)
        assert response.headers["mcp-session-id"] == headers["Mcp-Session-Id"]
        assert response.json()["result"]["content"][0]["text"] == "ran 2"


@http_test
async def test_json_replies_answer_a_2025_03_26_batch_with_a_json_batch() -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, replies="json") as running,
        await RawConnection.open(running.port) as http,
    ):
        headers = await open_session(http, "2025-03-26")
        batch = b"[" + message("ping", None, 1) + b"," + message("tools/list", {}, 2) + b"]"
        response = await http.request(headers=headers, body=batch)
        assert (response.status, response.headers["content-type"]) == (200, JSON)
        assert sorted(item["id"] for item in response.json()) == [1, 2]


@http_test
async def test_stream_replies_keep_the_status_of_a_modern_error() -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, replies="stream") as running,
        await RawConnection.open(running.port) as http,
    ):
        # An unknown tool: -32602, which 2026-07-28 answers with 400 (a stream is 200).
        response = await http.request(
            headers=modern_headers("tools/call", "no_such_tool"),
            body=call_body("modern", "no_such_tool"),
        )
        assert (response.status, response.headers["content-type"]) == (400, JSON)
        assert response.json()["error"]["code"] == -32602


@pytest.mark.parametrize("replies", REPLY_MODES)
@http_test
async def test_accept_must_list_both_types_in_every_mode(replies: str) -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, replies=replies) as running,
        await RawConnection.open(running.port) as http,
    ):
        legacy = await open_session(http)
        for accept in ("application/json", "text/event-stream"):
            body = call_body("modern", "test_simple_text")
            headers = modern_headers("tools/call", "test_simple_text", Accept=accept)
            assert (await http.request(headers=headers, body=body)).status == 406
            body = call_body("legacy", "test_simple_text")
            assert (await http.request(headers={**legacy, "Accept": accept}, body=body)).status == (
                406
            )


def test_an_unknown_reply_mode_is_refused() -> None:
    async def main() -> None:
        server, _ = build_test_server()
        await serve_http(server, port=0, replies="xml")  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="replies"):
        trio.run(main)


# ------------------------------------------------------------------ clients


@contextmanager
def server_thread(replies: ReplyMode) -> Iterator[str]:
    """The everything server with ``replies``, in a thread of its own; its URL."""
    ready = threading.Event()
    running: list[Any] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            server = build_server(trio.sleep)
            port = await nursery.start(partial(serve_http, server, port=0, replies=replies))
            running.extend([port, trio.lowlevel.current_trio_token(), nursery.cancel_scope])
            ready.set()

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    assert ready.wait(TEST_TIMEOUT), "the server did not start"
    port, token, scope = running
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        token.run_sync_soon(scope.cancel)
        thread.join(TEST_TIMEOUT)
        assert not thread.is_alive()


anyio_test = anyio_runner(TEST_TIMEOUT)


def text_of(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
@pytest.mark.parametrize("replies", REPLY_MODES)
def test_our_client_in_each_mode(replies: ReplyMode, mode: ConnectMode) -> None:
    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT):
            async with open_http_client(
                url, mode=mode, timeout=CALL_TIMEOUT, callbacks=CALLBACKS
            ) as client:
                simple = await client.call_tool("test_simple_text")
                assert text_of(simple) == "This is a simple text response for testing."
                seen: list[float] = []
                done = await client.call_tool(
                    "test_tool_with_progress",
                    progress=lambda value, total, message: seen.append(value),
                )
                assert text_of(done) == "Progress test completed"
                assert seen == [0, 50, 100]
                # Legacy: requests to the client on the call's own stream.
                elicited = await client.call_tool("test_elicitation", {"message": "Who?"})
                assert text_of(elicited).startswith("User response: action=accept")
                sampled = await client.call_tool("test_sampling", {"prompt": "Hi"})
                assert text_of(sampled) == "LLM response: A canned answer."
                resumed = await client.call_tool("test_reconnection")
                assert text_of(resumed) == "Reconnection test completed"

    with server_thread(replies) as url:
        trio.run(main)


@pytest.mark.parametrize(
    ("mode", "version"), [("legacy", LEGACY), pytest.param("auto", "2026-07-28", id="modern")]
)
@pytest.mark.parametrize("replies", REPLY_MODES)
def test_the_sdk_client_in_each_mode(replies: ReplyMode, mode: str, version: str) -> None:
    received: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append(progress)

    async def elicit_for_sdk(context: Any, params: Any) -> sdk_types.ElicitResult:
        return sdk_types.ElicitResult(action="accept", content={"username": "ada"})

    @anyio_test
    async def main() -> None:
        async with Client(
            url,
            mode=mode,
            read_timeout_seconds=CALL_TIMEOUT,
            elicitation_callback=elicit_for_sdk,
        ) as client:
            assert client.protocol_version == version
            tools = (await client.list_tools()).tools
            assert tools[0].name == "test_simple_text"
            simple = await client.call_tool("test_simple_text", {})
            assert [block.text for block in simple.content if block.type == "text"] == [
                "This is a simple text response for testing."
            ]
            done = await client.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert not done.is_error
            if mode == "legacy":
                elicited = await client.call_tool("test_elicitation", {"message": "Who?"})
                [block] = elicited.content
                assert isinstance(block, sdk_types.TextContent)
                assert block.text.startswith("User response: action=accept")

    with server_thread(replies) as url:
        main()
    assert received == [0, 50, 100]
