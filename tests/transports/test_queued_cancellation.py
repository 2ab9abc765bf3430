"""A request cancelled while it waits for a handler slot never starts (issue 15, defect 5).

Every queue where a request can wait for a slot, in both eras: the stdio/WebSocket
runtime's handler cap (`transports._runtime.serving`, stdio in process and WebSocket over a real
socket), a legacy session's cap (`HttpLimits.max_session_handlers`) on Streamable HTTP
and on 2024-11-05 HTTP+SSE, and the server-wide `transports._runtime.workers.WorkerPool` the
sessions hand their requests to. In each: fill the slots with blocked handlers, queue
more, cancel the queued ones (``notifications/cancelled``, the POST's connection
closing, the session's DELETE), release the slots, and count who ran.
"""

from __future__ import annotations

import contextlib
import functools
import json
from typing import Any

import trio
import trio.testing

from mcpcore import CLIENT, Connection, ResponseReceived, types
from mcpcore.server import Server
from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    message,
    running_server,
)
from tests.transports.test_http_server_legacy import Session, initialize
from tests.transports.test_runtime import INFO, RecordingStream, Script, trio_run
from tests.transports.ws_raw import RawWebSocket, modern_request, running_ws
from transports import HttpLimits, WebSocketLimits
from transports._http.server.sessions import Call, abandon_call, call_key, run_call
from transports._http.server.sessions import Session as HttpSession
from transports._runtime.serving import ServerDriver
from transports._runtime.workers import WorkerPool
from transports._runtime.writer import MessageWriter


class Gate:
    """A tool ``hold(label)`` that records who ran and waits for the test to open it."""

    def __init__(self, server: Server) -> None:
        self.ran: list[str] = []
        self.open = trio.Event()

        @server.tool()
        async def hold(label: str) -> str:
            """Waits for the test to let it finish."""
            self.ran.append(label)
            await self.open.wait()
            return f"done {label}"


def cancel_message(request_id: int, reason: str = "not needed") -> bytes:
    return message("notifications/cancelled", {"requestId": request_id, "reason": reason})


def hold_call(request_id: int, label: str | None = None) -> bytes:
    arguments = {"label": label or str(request_id)}
    return message("tools/call", {"name": "hold", "arguments": arguments}, request_id)


async def settle() -> None:
    await trio.testing.wait_all_tasks_blocked(0.05)


# ------------------------------------------------------------------ stdio's runtime


@trio_run
async def test_the_runtime_never_starts_a_request_cancelled_while_it_waited_for_a_slot() -> None:
    server = Server("runtime", "1.0")
    gate = Gate(server)
    client = Connection(CLIENT, capabilities=types.ClientCapabilities(), implementation=INFO)
    client.start_modern()
    calls = {}
    for label in ("0", "1", "2", "3", "4"):
        params = types.CallToolRequestParams(name="hold", arguments={"label": label})
        request_id, calls[label] = client.send_request("tools/call", params)
        assert request_id == int(label) + 1
    cancels = [client.cancel(3), client.cancel(4)]  # "2" and "3"
    assert None not in cancels
    # Two run, three wait for a slot; two of those are cancelled, then a slot frees.
    script = Script([*calls.values(), *(c for c in cancels if c is not None)])
    out = RecordingStream()
    writer = MessageWriter(out)
    connection = server.connection()
    driver = ServerDriver(server, connection, writer, frame=lambda m: m + b"\n", max_handlers=2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(functools.partial(driver.serve, aiter(script), grace=5.0))
        await settle()
        assert sorted(gate.ran) == ["0", "1"]
        assert script.pulled == len(script.messages)  # the cancels were read meanwhile
        gate.open.set()
        await settle()
        script.release.set()
        await settle()
        await writer.aclose()
    assert sorted(gate.ran) == ["0", "1", "4"]
    answers = [
        event
        for line in b"".join(out.writes).splitlines()
        for event in client.receive(line)
        if isinstance(event, ResponseReceived)
    ]
    assert sorted(answer.request_id for answer in answers) == [1, 2, 5]
    assert connection.requests_in_flight == 0  # nothing of the dropped ones is left


@trio_run
async def test_a_handler_cancelled_while_running_leaves_nothing_in_flight() -> None:
    server = Server("runtime", "1.0")
    gate = Gate(server)
    client = Connection(CLIENT, capabilities=types.ClientCapabilities(), implementation=INFO)
    client.start_modern()
    params = types.CallToolRequestParams(name="hold", arguments={"label": "a"})
    _, call = client.send_request("tools/call", params)
    cancel = client.cancel(1)
    assert cancel is not None
    end = trio.Event()

    async def messages() -> Any:
        yield call
        while not gate.ran:
            await trio.sleep(0)
        yield cancel
        await end.wait()

    out = RecordingStream()
    writer = MessageWriter(out)
    connection = server.connection()
    driver = ServerDriver(server, connection, writer, frame=lambda m: m + b"\n")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(functools.partial(driver.serve, messages(), grace=1.0))
        await settle()
        # The cancelled request is forgotten: its id is not "in flight" for ever (a
        # client cancelling 64 Ki calls would otherwise lock itself out of the session).
        assert connection.requests_in_flight == 0
        end.set()
        await settle()
        await writer.aclose()
    assert out.writes == []


# ------------------------------------------------------------------ WebSocket


@trio_run
async def test_over_websocket_queued_requests_cancelled_never_start() -> None:
    server, _ = build_test_server()
    gate = Gate(server)
    limits = WebSocketLimits(max_handlers=2)
    async with running_ws(server, limits=limits) as port, await RawWebSocket.connect(port) as ws:
        for number in range(1, 6):
            arguments = {"name": "hold", "arguments": {"label": str(number)}}
            await ws.send_json(modern_request(number, "tools/call", arguments))
        for number in (3, 4):
            await ws.send_json(json.loads(cancel_message(number)))
        await settle()
        assert sorted(gate.ran) == ["1", "2"]
        gate.open.set()
        answers = {(await ws.receive_json())["id"] for _ in range(3)}
        assert answers == {1, 2, 5}
        assert sorted(gate.ran) == ["1", "2", "5"]


# ------------------------------------------------------------------ Streamable HTTP


async def open_posts(
    stack: contextlib.AsyncExitStack, port: int, count: int
) -> list[RawConnection]:
    """``count`` connections, closed with ``stack``, for POSTs answered later."""
    return [await stack.enter_async_context(await RawConnection.open(port)) for _ in range(count)]


async def post_and_wait(http: RawConnection, session: Session, body: bytes) -> None:
    """Send a POST whose answer is not read yet (its handler waits, or its slot does)."""
    await http.send(http.encode(headers=session.headers(), body=body))


@http_test
async def test_a_legacy_session_never_starts_queued_requests_that_were_cancelled() -> None:
    server, _ = build_test_server()
    gate = Gate(server)
    limits = HttpLimits(max_session_handlers=2)
    async with (
        running_server(server, limits=limits) as running,
        contextlib.AsyncExitStack() as stack,
        await RawConnection.open(running.port) as control,
    ):
        session = await Session.open(control)
        posts = await open_posts(stack, running.port, 6)
        for number, http in enumerate(posts, start=1):
            await post_and_wait(http, session, hold_call(number))
            await settle()
        assert sorted(gate.ran) == ["1", "2"]  # 3 to 6 wait for a slot
        # 3: cancelled by the client; 4: its POST's connection closes.
        cancelled = await session.post(cancel_message(3))
        assert cancelled.status == 202
        await posts[3].stream.aclose()
        await settle()
        # The cancelled request's stream ends at once, with no answer.
        head = await posts[2].read_head()
        assert head.status == 200
        events = await posts[2].read_all_events()
        assert all(not event.data for event in events)
        gate.open.set()
        for number in (1, 2, 5, 6):
            await posts[number - 1].read_head()
            events = await posts[number - 1].read_all_events()
            answer = json.loads(events[-1].data)
            assert answer["id"] == number
        assert sorted(gate.ran) == ["1", "2", "5", "6"]


@http_test
async def test_deleting_a_session_drops_its_queued_requests_unstarted() -> None:
    server, _ = build_test_server()
    gate = Gate(server)
    limits = HttpLimits(max_session_handlers=1)
    async with (
        running_server(server, limits=limits) as running,
        contextlib.AsyncExitStack() as stack,
        await RawConnection.open(running.port) as control,
    ):
        session = await Session.open(control)
        posts = await open_posts(stack, running.port, 3)
        for number, http in enumerate(posts, start=1):
            await post_and_wait(http, session, hold_call(number))
            await settle()
        assert gate.ran == ["1"]
        deleted = await control.request("DELETE", headers={"Mcp-Session-Id": session.id})
        assert deleted.status == 200
        await settle()
        gate.open.set()
        await settle()
        assert gate.ran == ["1"]  # 2 and 3 never started


@http_test
async def test_a_batch_cancelling_its_own_request_never_starts_it() -> None:
    server, _ = build_test_server()
    gate = Gate(server)
    gate.open.set()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        session = await Session.open(http, "2025-03-26")
        # The request and its cancellation in one 2025-03-26 batch: routed before it starts.
        batch = b"[" + hold_call(1) + b"," + cancel_message(1) + b"," + hold_call(2) + b"]"
        head, events = await session.call(batch)
        assert head.status == 200
        [answer] = [json.loads(event.data) for event in events if event.data]
        assert [item["id"] for item in answer] == [2]
        assert gate.ran == ["2"]


# ------------------------------------------------------------------ 2024-11-05 HTTP+SSE


@http_test
async def test_an_http_sse_session_never_starts_queued_requests_that_were_cancelled() -> None:
    server, _ = build_test_server()
    gate = Gate(server)
    limits = HttpLimits(max_session_handlers=1)
    headers = {"Content-Type": "application/json"}
    async with (
        running_server(server, limits=limits) as running,
        contextlib.AsyncExitStack() as stack,
    ):
        stream = await stack.enter_async_context(await RawConnection.open(running.port))
        await stream.send(stream.encode("GET", headers={"Accept": "text/event-stream"}))
        assert (await stream.read_head()).status == 200
        [endpoint] = await stream.read_events(1)
        async with await RawConnection.open(running.port) as poster:
            body = initialize("2024-11-05")
            opened = await poster.request(target=endpoint.data, headers=headers, body=body)
            assert opened.status == 202
            await stream.read_events(1)
            initialized = message("notifications/initialized")
            await poster.request(target=endpoint.data, headers=headers, body=initialized)
        posts = await open_posts(stack, running.port, 3)
        for number, http in enumerate(posts, start=1):
            await http.send(
                http.encode(target=endpoint.data, headers=headers, body=hold_call(number))
            )
            await settle()
        assert gate.ran == ["1"]  # 2 and 3 wait for the slot
        async with await RawConnection.open(running.port) as poster:
            cancel = cancel_message(2)
            cancelled = await poster.request(target=endpoint.data, headers=headers, body=cancel)
            assert cancelled.status == 202
        await settle()
        gate.open.set()
        answers = [json.loads(event.data)["id"] for event in await stream.read_events(2)]
        assert sorted(answers) == [1, 3]
        assert gate.ran == ["1", "3"]


class RecordingOutbound:
    """A `CallOutbound` that notes each answer delivered (None: there is none)."""

    finish_waits = False

    def __init__(self) -> None:
        self.finished: dict[Any, bytes | None] = {}

    async def send(self, data: bytes) -> None:
        return None

    async def request(self, request_id: Any, data: bytes) -> Any:
        raise ConnectionError("not in this test")

    async def finish(self, request_id: Any, reply: bytes | None) -> None:
        self.finished[request_id] = reply


@trio_run
async def test_a_post_whose_connection_closes_starts_none_of_its_waiting_requests() -> None:
    server = Server("sessions", "1.0")
    gate = Gate(server)
    outbound = RecordingOutbound()
    async with trio.open_nursery() as nursery:
        pool: WorkerPool[Call] = WorkerPool(nursery, run_call, call_key, abandon=abandon_call)
        session = HttpSession("s", server, pool, principal=None, max_handlers=1)
        connection = session.connection
        [handshake], _ = await session.route(connection.receive(initialize("2025-03-26")))
        await session.start(handshake, outbound)
        await settle()
        await session.route(connection.receive(message("notifications/initialized")))
        batch = b"[" + b",".join(hold_call(n) for n in (1, 2, 3)) + b"]"
        requests, _ = await session.route(connection.receive(batch))
        await session.start(requests[0], outbound)  # takes the one slot
        post = trio.CancelScope()  # the second POST, whose connection will close

        async def second_post() -> None:
            with post:
                await session.start_all(requests[1:], outbound)

        nursery.start_soon(second_post)
        await settle()
        post.cancel()
        await settle()
        gate.open.set()
        await settle()
        assert gate.ran == ["1"]
        assert outbound.finished.keys() == {0, 1, 2, 3}
        assert outbound.finished[2] is None
        assert outbound.finished[3] is None
        assert connection.requests_in_flight == 0
        nursery.cancel_scope.cancel()
