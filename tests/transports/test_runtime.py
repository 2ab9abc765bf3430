"""The shared trio runtime in process: the writer and the serving driver.

The writer: whole messages only, in order, coalesced, bounded, shielded. The driver:
a request per task, cancellation by the peer, the cap on handlers as backpressure.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator

import pytest
import trio
import trio.testing

from mcpcore import CLIENT, Connection, ResponseReceived, types
from mcpcore.framing import OversizedMessage
from mcpcore.server import Server
from tests.transports.trio_helpers import trio_test
from transports._runtime.serving import ServerDriver
from transports._runtime.writer import WRITES_PER_TURN, MessageWriter

TEST_TIMEOUT = 10.0
INFO = types.Implementation(name="runtime-test", version="1")


trio_run = trio_test(timeout=TEST_TIMEOUT)


class RecordingStream(trio.abc.SendStream):
    """A send stream that keeps every ``send_all``, optionally slowly or broken."""

    def __init__(self, *, delay: float = 0.0, broken: bool = False) -> None:
        self.writes: list[bytes] = []
        self.delay = delay
        self.broken = broken
        self.started = trio.Event()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.started.set()
        if self.broken:
            raise trio.BrokenResourceError("the peer is gone")
        if self.delay:
            await trio.sleep(self.delay)
        self.writes.append(bytes(data))

    async def wait_send_all_might_not_block(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


# -- the writer -------------------------------------------------------------------------


@trio_run
async def test_waiting_messages_are_written_together_in_order() -> None:
    stream = RecordingStream()
    writer = MessageWriter(stream)
    for n in range(50):
        assert writer.send_nowait(b"%d\n" % n)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await writer.aclose()
    assert b"".join(stream.writes) == b"".join(b"%d\n" % n for n in range(50))
    assert len(stream.writes) == 1  # 50 messages, one system call


@trio_test(autojump=True)
async def test_a_sender_on_an_idle_stream_writes_itself_and_later_ones_queue_behind() -> None:
    stream = RecordingStream(delay=1.0)
    writer = MessageWriter(stream)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(writer.send, b"first\n")  # idle: written by its sender
        await stream.started.wait()
        await writer.send(b"second\n")  # a write is under way: queued
        await writer.send(b"third\n")
        assert stream.writes == []  # (still writing the first)
        await writer.aclose()
    assert stream.writes == [b"first\n", b"second\nthird\n"]  # in order, the queue joined


class Pipe:
    """A ``write_now`` for `MessageWriter`: takes up to ``room`` bytes per call."""

    def __init__(self, room: int = 1 << 20, *, broken: bool = False) -> None:
        self.room = room
        self.broken = broken
        self.taken: list[bytes] = []

    def __call__(self, data: bytes) -> int:
        if self.broken:
            raise trio.BrokenResourceError("the reader is gone")
        taken = data[: self.room]
        if taken:
            self.taken.append(bytes(taken))
        return len(taken)


@trio_run
async def test_with_write_now_an_idle_sender_writes_at_once_and_the_rest_goes_first() -> None:
    stream, pipe = RecordingStream(), Pipe(room=4)
    writer = MessageWriter(stream, write_now=pipe)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await trio.testing.wait_all_tasks_blocked()
        await writer.send(b"abc\n")  # taken whole, in the sender's step
        assert pipe.taken == [b"abc\n"]
        assert stream.writes == []
        await writer.send(b"defgh\n")  # the pipe takes 4 bytes; the rest is queued first
        await writer.send(b"ij\n")  # (behind it)
        await trio.testing.wait_all_tasks_blocked()
        await writer.aclose()
    assert pipe.taken == [b"abc\n", b"defg"]
    assert stream.writes == [b"h\nij\n"]


@trio_run
async def test_a_sender_whose_writes_never_wait_still_yields() -> None:
    writer = MessageWriter(RecordingStream(), write_now=Pipe())
    other_ran = 0

    async def other() -> None:
        nonlocal other_ran
        while True:
            other_ran += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)
        await trio.lowlevel.checkpoint()  # (the other task is running: it never blocks)
        ran = other_ran
        for _ in range(WRITES_PER_TURN * 3):
            await writer.send(b"x\n")  # (never waits: the pipe takes everything)
        assert other_ran - ran >= 2  # the sender let the other task run
        nursery.cancel_scope.cancel()


@trio_run
async def test_a_write_now_that_breaks_fails_the_sender_and_every_later_one() -> None:
    writer = MessageWriter(RecordingStream(), write_now=Pipe(broken=True))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        with pytest.raises(ConnectionError, match="broke"):
            await writer.send(b"first\n")
        with pytest.raises(ConnectionError, match="broke"):
            await writer.send(b"second\n")
        assert writer.send_nowait(b"third\n") is False
    assert isinstance(writer.failure, trio.BrokenResourceError)


@pytest.mark.parametrize("method", ["send", "post"])
@trio_test(autojump=True)
async def test_a_full_queue_makes_senders_wait(method: str) -> None:
    writer = MessageWriter(RecordingStream(), max_queued=2)
    assert writer.send_nowait(b"a\n")  # (nobody drains the queue: no writer task)
    assert writer.send_nowait(b"b\n")
    send = getattr(writer, method)
    with trio.move_on_after(1) as waited:
        await send(b"c\n")
    assert waited.cancelled_caught  # the queue is full: the sender waits
    assert writer.send_nowait(b"c\n") is False


@trio_run
async def test_posted_messages_share_one_write_and_go_before_a_later_send() -> None:
    stream = RecordingStream()
    writer = MessageWriter(stream)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await trio.testing.wait_all_tasks_blocked()
        for n in range(10):  # (fewer than POSTS_PER_TURN: the poster never yields)
            await writer.post(b"%d\n" % n)
        await writer.send(b"answer\n")  # queued behind the posted ones, not written first
        await trio.testing.wait_all_tasks_blocked()
        await writer.aclose()
    assert stream.writes == [b"".join(b"%d\n" % n for n in range(10)) + b"answer\n"]


@pytest.mark.parametrize("queued", [False, True], ids=["written-by-sender", "queued"])
@trio_run
async def test_a_broken_stream_fails_every_sender(queued: bool) -> None:
    stream = RecordingStream(broken=True)
    writer = MessageWriter(stream)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        if queued:
            await writer.post(b"first\n")  # the writer task finds the stream broken
            await stream.started.wait()
            await trio.testing.wait_all_tasks_blocked()
        else:
            with pytest.raises(ConnectionError, match="broke"):
                await writer.send(b"first\n")  # found broken by the sender itself
        with pytest.raises(ConnectionError, match="broke"):
            await writer.send(b"second\n")
        with pytest.raises(ConnectionError, match="broke"):
            await writer.post(b"third\n")
    assert isinstance(writer.failure, trio.BrokenResourceError)


@pytest.mark.parametrize("queued", [False, True], ids=["written-by-sender", "queued"])
@trio_test(autojump=True)
async def test_a_write_in_progress_survives_cancellation_whole(queued: bool) -> None:
    stream = RecordingStream(delay=1.0)
    writer = MessageWriter(stream)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await trio.testing.wait_all_tasks_blocked()
        send = writer.post if queued else writer.send
        nursery.start_soon(send, b'{"a":1}\n')
        await stream.started.wait()
        nursery.cancel_scope.cancel()  # mid-write: the write is shielded
    assert stream.writes == [b'{"a":1}\n']


# -- the driver -------------------------------------------------------------------------


class Script:
    """Messages for the driver to read, recording how far the reader has read."""

    def __init__(self, messages: list[bytes | OversizedMessage]) -> None:
        self.messages = messages
        self.pulled = 0
        self.release = trio.Event()  # the end of input waits for this

    async def __aiter__(self) -> AsyncIterator[bytes | OversizedMessage]:
        for message in self.messages:
            self.pulled += 1
            yield message
        await self.release.wait()


def blocking_server(gate: trio.Event, started: list[str]) -> Server:
    server = Server("runtime", "1.0")

    @server.tool()
    async def wait_for_gate(label: str) -> str:
        started.append(label)
        await gate.wait()
        return label

    return server


def client_requests(count: int) -> tuple[Connection, list[bytes]]:
    client = Connection(CLIENT, capabilities=types.ClientCapabilities(), implementation=INFO)
    client.start_modern()
    messages = []
    for n in range(count):
        params = types.CallToolRequestParams(name="wait_for_gate", arguments={"label": str(n)})
        messages.append(client.send_request("tools/call", params)[1])
    return client, messages


@trio_run
async def test_busy_handlers_stop_the_reader_until_one_finishes() -> None:
    gate = trio.Event()
    started: list[str] = []
    server = blocking_server(gate, started)
    client, messages = client_requests(4)
    script = Script(list(messages))
    out = RecordingStream()
    writer = MessageWriter(out)
    driver = ServerDriver(
        server,
        server.connection(),
        writer,
        frame=lambda m: m + b"\n",
        max_handlers=2,
        max_waiting=1,
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(functools.partial(driver.serve, aiter(script), grace=1.0))
        await trio.testing.wait_all_tasks_blocked()
        # Two handlers run; the third request was read and waits for a slot, which
        # fills the queue of waiting requests; the fourth is not read at all: that is
        # the backpressure.
        assert sorted(started) == ["0", "1"]
        assert script.pulled == 3
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(started) == ["0", "1", "2", "3"]
        script.release.set()
        await trio.testing.wait_all_tasks_blocked()
        await writer.aclose()
    answers = [
        event
        for line in b"".join(out.writes).splitlines()
        for event in client.receive(line)
        if isinstance(event, ResponseReceived)
    ]
    assert sorted(a.result.content[0].text for a in answers) == ["0", "1", "2", "3"]


def started_server(started: trio.Event, stopped: list[str]) -> Server:
    server = Server("runtime", "1.0")

    @server.tool()
    async def wait_for_gate(label: str) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            stopped.append(label)

    return server


@trio_run
async def test_the_peer_cancelling_cancels_the_handler_task() -> None:
    started = trio.Event()
    stopped: list[str] = []
    server = started_server(started, stopped)
    client, [message] = client_requests(1)
    cancel = client.cancel(1, "no longer needed")
    assert cancel is not None
    end = trio.Event()

    async def messages() -> AsyncIterator[bytes | OversizedMessage]:
        yield message
        await started.wait()  # the handler runs: now the client cancels it
        yield cancel
        await end.wait()

    out = RecordingStream()
    writer = MessageWriter(out)
    driver = ServerDriver(server, server.connection(), writer, frame=lambda m: m + b"\n")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(functools.partial(driver.serve, messages(), grace=1.0))
        await started.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert stopped == ["0"]  # cancelled inside the handler, not left waiting
        assert driver._handlers is not None
        assert driver._handlers.running == 0
        end.set()
        await trio.testing.wait_all_tasks_blocked()
        await writer.aclose()
    assert out.writes == []  # a cancelled request gets no answer


@trio_run
async def test_a_request_cancelled_before_its_handler_starts_never_runs() -> None:
    started = trio.Event()
    stopped: list[str] = []
    server = started_server(started, stopped)
    client, [message] = client_requests(1)
    cancel = client.cancel(1)
    assert cancel is not None
    script = Script([message, cancel])  # both in one read: the worker has not run yet
    out = RecordingStream()
    writer = MessageWriter(out)
    driver = ServerDriver(server, server.connection(), writer, frame=lambda m: m + b"\n")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        nursery.start_soon(functools.partial(driver.serve, aiter(script), grace=1.0))
        await trio.testing.wait_all_tasks_blocked()
        script.release.set()
        await trio.testing.wait_all_tasks_blocked()
        await writer.aclose()
    assert not started.is_set()
    assert out.writes == []


@trio_run
async def test_an_oversized_message_is_answered_without_an_id() -> None:
    server = Server("runtime", "1.0")
    script = Script([OversizedMessage(limit=10, size=11)])
    out = RecordingStream()
    writer = MessageWriter(out)
    driver = ServerDriver(server, server.connection(), writer, frame=lambda m: m + b"\n")
    script.release.set()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        await driver.serve(aiter(script), grace=0.0)
        await writer.aclose()
    [reply] = [json.loads(line) for line in b"".join(out.writes).splitlines()]
    assert reply["error"]["code"] == -32600
    assert "id" not in reply
