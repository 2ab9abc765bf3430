"""The stdio and WebSocket servers under generated messages, valid and hostile: never a crash.

"Hostile input of any shape gets a protocol error, never a crash." A client of a stream
transport sends messages one after another on one connection, so what one leaves behind
meets the next: a handshake, requests in flight, their cancellation, an id used again,
an answer to a request nobody made. Hypothesis draws sequences of such messages, of
either era, often as sent, else broken (`tests.transports.hostile_requests.
stream_messages`), after one of its openings (none, the legacy handshake, a 2026-07-28
call); the everything server answers them.

* stdio: the lines, cut into chunks anywhere, reach the stdio server's loop
  (`transports._stdio.serving.serve_pipes`, what `transports.serve_stdio` and
  `transports.serve_stdio_asyncio` run on their pipes) through in-memory pipes: under
  trio on a virtual clock (its autojump: the tools that sleep, the shutdown grace), and
  fewer under asyncio in real time (what differs is how a request is cancelled).
* WebSocket: a hand-made client (`tests.transports.ws_raw`) sends each message to
  `transports.serve_websocket` as a text message, in one frame or two, with pings
  between; one that is not UTF-8 goes as a binary frame or as a text frame all the same.

Every message the server sends must be well-formed JSON-RPC without a traceback
(`tests.transports.hostile_requests.check_message`), and the server goes on: a ``ping``
sent last is answered. Over WebSocket the connection may instead end where it must (a
binary frame: 1003; a text frame that is not UTF-8: 1007; a message past the limit:
1009), with a Close frame. The serving code must end without an error: the stdio loop
when its input ends, the WebSocket server's connection when its client leaves
(`tests.transports.ws_raw.running_ws` fails on any).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.abc
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wsproto.events import BytesMessage, CloseConnection, Message, Ping, TextMessage

from examples.everything import build_server
from tests.transports.hostile_requests import STREAM_OPENINGS, check_message, stream_messages
from tests.transports.ws_raw import RawWebSocket, is_utf8, running_ws
from transports import WebSocketLimits
from transports._stdio.serving import serve_pipes
from transports._websocket.frames import ClientFrames

#: The longest message the servers take here (the drawn "large" bodies pass it or not).
MAX_MESSAGE: Final = 4096
#: The id of the last ``ping``: no drawn message uses it (drawn text ids are shorter).
PING_ID: Final = "the last ping of the example"
PING: Final = json.dumps({"jsonrpc": "2.0", "id": PING_ID, "method": "ping"}).encode()
#: Seconds (of the virtual clock, on stdio) the last ping's answer may take.
ANSWER_BOUND: Final = 30.0
#: Seconds of a WebSocket example, in real time.
EXAMPLE_BOUND: Final = 60.0
#: Handlers at once on a stdio connection: few, so that a sequence meets the limit.
MAX_HANDLERS: Final = 3
#: The Close codes that may end a WebSocket example (module docstring).
BY_DESIGN: Final = {1003, 1007, 1009}

_sequences = st.builds(
    lambda opening, moves: [*STREAM_OPENINGS[opening], *itertools.chain.from_iterable(moves)],
    st.sampled_from(sorted(STREAM_OPENINGS)),
    st.lists(stream_messages(), min_size=1, max_size=5),
)


# ---------------------------------------------------------------------- stdio


class _Pipe:
    """One way of an in-memory pipe: what `serve_pipes` reads (or writes), and its end."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[bytes](math.inf)
        self._left = b""

    async def send_all(self, data: bytes) -> None:
        """Write ``data`` (the pipe holds any amount; nothing, as a pipe, writes nothing)."""
        if data:
            await self._send.send(data)

    async def receive_some(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` of what was written; ``b""`` once the writer closed it."""
        if not self._left:
            try:
                self._left = await self._receive.receive()
            except anyio.EndOfStream:
                return b""
        data, self._left = self._left[:max_bytes], self._left[max_bytes:]
        return data

    def close(self) -> None:
        """The writer's end: the reader reads what is left, then ``b""``."""
        self._send.close()

    def __enter__(self) -> _Pipe:
        return self

    def __exit__(self, *exc: object) -> None:
        self._send.close()
        self._receive.close()


class _Output:
    """The stdio server's output, each line checked; whether the last ping was answered."""

    def __init__(self) -> None:
        self.pinged = anyio.Event()

    async def read(self, pipe: _Pipe) -> None:
        """Read the server's output until it ends."""
        pending = b""
        while data := await pipe.receive_some(65536):
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                check_message(line)
                answer = json.loads(line)
                if isinstance(answer, dict) and answer.get("id") == PING_ID:
                    self.pinged.set()
        assert pending == b"", "the output ended within a line"


@dataclass(frozen=True)
class Backend:
    """Where the stdio examples run: trio on a virtual clock, or asyncio in real time.

    Attributes:
        name: anyio's name for the library.
        grace: The server's shutdown grace, in seconds.
        examples: How many Hypothesis draws.
    """

    name: str
    grace: float
    examples: int

    def run(self, messages: list[bytes], cuts: list[int]) -> None:
        """Serve ``messages`` (see `_stdio`) on this backend."""
        options = {}
        if self.name == "trio":
            options["clock"] = trio.testing.MockClock(autojump_threshold=0)
        anyio.run(_stdio, self, messages, cuts, backend=self.name, backend_options=options)


BACKENDS: Final = [
    Backend("trio", grace=1.0, examples=300),
    # (Real time: a short grace, fewer draws. What differs is how a request is cancelled.)
    Backend("asyncio", grace=0.1, examples=60),
]


async def _stdio(backend: Backend, messages: list[bytes], cuts: list[int]) -> None:
    """Serve ``messages`` as lines in chunks cut at ``cuts``, then a ping, then the end."""
    data = b"".join(message + b"\n" for message in messages)
    bounds = [0, *sorted({cut % (len(data) + 1) for cut in cuts}), len(data)]
    stdin, stdout, output = _Pipe(), _Pipe(), _Output()

    async def serve(tasks: anyio.abc.TaskGroup) -> None:
        try:
            await serve_pipes(
                build_server(anyio.sleep),
                stdin,
                stdout,
                tasks,
                write_now=None,
                max_message_size=MAX_MESSAGE,
                max_handlers=MAX_HANDLERS,
                shutdown_grace=backend.grace,
            )
        finally:
            stdout.close()

    with stdin, stdout:
        async with anyio.create_task_group() as group:
            group.start_soon(serve, group)
            group.start_soon(output.read, stdout)
            for start, end in itertools.pairwise(bounds):
                await stdin.send_all(data[start:end])
            await stdin.send_all(PING + b"\n")
            with anyio.fail_after(ANSWER_BOUND):
                await output.pinged.wait()
            stdin.close()  # (the server flushes, and its loop returns)


@pytest.mark.parametrize("backend", BACKENDS, ids=[backend.name for backend in BACKENDS])
def test_the_stdio_server_answers_well_and_goes_on(backend: Backend) -> None:
    @settings(
        max_examples=backend.examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(messages=_sequences, cuts=st.lists(st.integers(0, 10_000), max_size=4))
    def check(messages: list[bytes], cuts: list[int]) -> None:
        backend.run(messages, cuts)

    check()


# ------------------------------------------------------------------ WebSocket


async def _send(ws: RawWebSocket, data: bytes, how: str) -> None:
    """One message as ``how`` says: ``"whole"``, ``"split"`` (two frames), ``"ping"`` first.

    Not UTF-8: a binary frame, or (``"split"``) a text frame all the same (`ClientFrames`).
    """
    if how == "ping":
        await ws.send_event(Ping(b"hi"))
    if not is_utf8(data):
        if how == "split":
            await ws.send_raw(ClientFrames()(data))  # (our client's frames: any bytes)
        else:
            await ws.send_event(BytesMessage(data))
        return
    text = data.decode("utf-8")
    if how == "split" and len(text) > 1:
        half = len(text) // 2
        await ws.send_event(Message(data=text[:half], message_finished=False))
        await ws.send_event(Message(data=text[half:]))
    else:
        await ws.send_event(Message(data=text))


async def _websocket(messages: list[bytes], hows: list[str]) -> None:
    """Send ``messages`` over one WebSocket, then a ping; read every answer."""
    limits = WebSocketLimits(max_message_size=MAX_MESSAGE)
    with trio.fail_after(EXAMPLE_BOUND):
        async with (
            running_ws(build_server(trio.sleep), limits=limits) as port,
            await RawWebSocket.connect(port) as ws,
        ):
            for data, how in zip(messages, itertools.cycle(hows), strict=False):
                await _send(ws, data, how)
            await _send(ws, PING, "whole")
            while True:
                event = await ws.next_event()
                if isinstance(event, TextMessage):
                    check_message(event.data.encode("utf-8"))
                    answer = json.loads(event.data)
                    if isinstance(answer, dict) and answer.get("id") == PING_ID:
                        return
                    continue
                assert isinstance(event, CloseConnection), event
                assert event.code in BY_DESIGN, event
                return


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=_sequences,
    hows=st.lists(st.sampled_from(["whole", "whole", "split", "ping"]), min_size=1, max_size=3),
)
def test_the_websocket_server_answers_well_and_goes_on(
    messages: list[bytes], hows: list[str]
) -> None:
    trio.run(_websocket, messages, hows)


@pytest.mark.parametrize("payload", [b"\xff", b'{"a":"\xc3"}'])
def test_a_text_frame_that_is_not_utf8_is_closed_with_1007(payload: bytes) -> None:
    async def main() -> None:
        async with (
            running_ws(build_server(trio.sleep)) as port,
            await RawWebSocket.connect(port) as ws,
        ):
            await _send(ws, payload, "split")
            assert (await ws.expect_close()).code == 1007

    trio.run(main)
