"""The stdio and WebSocket clients against a server answering a call with anything.

"Hostile input of any shape gets a protocol error, never a crash", on the client's side
too, and on every transport (``test_http_client_hostile.py`` does HTTP). A server may
answer a ``tools/call`` with any messages, valid and broken
(`tests.transports.hostile_answers`), a message past the client's size limit, bytes that
are not UTF-8, and end the connection after them, at once or the orderly way. Hypothesis
draws such answers for a scripted server (`tests.transports.stream_script_server`) that
otherwise speaks its era correctly: a subprocess for `open_stdio_client`, a hand-made
WebSocket server (`tests.transports.ws_raw`) for `open_websocket_client`.

Each call returns a result or raises one of the client's documented errors
(`tests.transports.hostile_answers.DOCUMENTED`), never anything else; and the client
goes on: once the server answers properly again, a call succeeds, unless the connection
ended. It ends only where it must: the server ended it, or, over WebSocket, sent a
message past the limit (1009) or a binary one (1003), which close it by design
(`transports._websocket.channel`). Over stdio such messages are dropped and the client
goes on.
"""

from __future__ import annotations

import base64
import contextlib
import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wsproto.events import BytesMessage, CloseConnection, Message, TextMessage

from mcpcore.client import ConnectMode
from mcpcore.types import CallToolResult
from tests.transports.hostile_answers import DOCUMENTED, messages
from tests.transports.stream_script_server import StreamScript
from tests.transports.trio_helpers import PYTHON, REPOSITORY
from tests.transports.ws_raw import RawWebSocket, is_utf8, raw_ws_server
from transports import (
    Client,
    ConnectionClosedError,
    WebSocketLimits,
    open_stdio_client,
    open_websocket_client,
)

SERVER: Final = str(REPOSITORY / "tests" / "transports" / "stream_script_server.py")
#: The longest message the clients take here, and the size of a message past it.
MAX_MESSAGE: Final = 4096
OVERSIZED: Final = MAX_MESSAGE + 1024
#: Seconds a call waits for its answer: for some answers none ever comes.
CALL_TIMEOUT: Final = 0.2
#: Seconds the connection's opening and the last, proper call may take, and an example.
GOOD_TIMEOUT: Final = 10.0
EXAMPLE_BOUND: Final = 60.0
#: The Close code a WebSocket server ending the orderly way sends ("internal error").
CLOSE_CODE: Final = 1011
ERAS: Final[list[ConnectMode]] = ["modern", "legacy"]
TRANSPORTS: Final = ["stdio", "websocket"]


@dataclass
class Example:
    """An era, a transport, and the server's answers to the calls (as `StreamScript`'s)."""

    era: ConnectMode
    transport: str
    answers: list[dict[str, Any]]

    def may_end(self) -> bool:
        """Whether what the server sends may end the connection (module docstring)."""
        for answer in self.answers:
            if answer["end"] is not None:
                return True
            if self.transport == "websocket" and any(
                "oversized" in piece or not is_utf8(_raw(piece)) for piece in answer["pieces"]
            ):
                return True
        return False


def _raw(piece: dict[str, Any]) -> bytes:
    return base64.b64decode(piece["raw"]) if "raw" in piece else b""


@st.composite
def _pieces(draw: st.DrawFn, era: str) -> dict[str, Any]:
    """One message of an answer, as `StreamScript` reads it."""
    if draw(st.sampled_from([False] * 15 + [True])):  # (integers() would favour the bounds)
        return {"oversized": OVERSIZED}
    message = draw(messages(era))
    if isinstance(message, bytes):
        return {"raw": base64.b64encode(message).decode("ascii")}
    return {"json": message}


@st.composite
def _answers(draw: st.DrawFn, era: str) -> dict[str, Any]:
    return {
        "pieces": draw(st.lists(_pieces(era), max_size=3)),
        "end": draw(st.sampled_from([None] * 6 + ["cut", "close"])),
    }


@st.composite
def _answered(draw: st.DrawFn) -> tuple[ConnectMode, list[dict[str, Any]]]:
    """An era, and the server's answers to the calls."""
    era = draw(st.sampled_from(ERAS))
    return era, draw(st.lists(_answers(era), min_size=1, max_size=3))


@asynccontextmanager
async def _stdio_client(example: Example) -> AsyncIterator[Client]:
    script = json.dumps({"era": example.era, "answers": example.answers})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.json"
        path.write_text(script)
        async with open_stdio_client(
            PYTHON,
            [SERVER, str(path)],
            mode=example.era,
            timeout=GOOD_TIMEOUT,
            max_message_size=MAX_MESSAGE,
            stderr="capture",
        ) as client:
            yield client


async def _serve_script(script: StreamScript, ws: RawWebSocket) -> None:
    """Answer one WebSocket's messages as ``script`` says, until either side ends."""
    while True:
        event = await ws.next_event()
        if not isinstance(event, TextMessage):
            return  # (the client's Close, or the connection's end)
        pieces, end = script.respond(event.data.encode())
        for piece in pieces:
            frame = Message(data=piece.decode()) if is_utf8(piece) else BytesMessage(piece)
            await ws.send_event(frame)
        if end == "close":
            await ws.send_event(CloseConnection(code=CLOSE_CODE))
        if end is not None:
            return  # ("cut": the connection is closed at once, without a Close)


@asynccontextmanager
async def _websocket_client(example: Example) -> AsyncIterator[Client]:
    script = StreamScript(example.era, example.answers)

    async def handler(ws: RawWebSocket) -> None:
        with contextlib.suppress(trio.BrokenResourceError):  # (the client left first)
            await _serve_script(script, ws)

    async with (
        raw_ws_server(handler) as port,
        open_websocket_client(
            f"ws://127.0.0.1:{port}/ws",
            mode=example.era,
            timeout=GOOD_TIMEOUT,
            limits=WebSocketLimits(max_message_size=MAX_MESSAGE),
        ) as client,
    ):
        yield client


async def _calls(example: Example) -> None:
    """Call a tool once per scripted answer, then once more when the server answers well."""
    opened = _stdio_client if example.transport == "stdio" else _websocket_client
    ended = False  # (a call failed with ConnectionClosedError)
    with trio.fail_after(EXAMPLE_BOUND):
        async with opened(example) as client:
            for _ in example.answers:
                try:
                    outcome = await client.call_tool("echo", {"a": 1}, timeout=CALL_TIMEOUT)
                except DOCUMENTED as error:
                    ended = ended or isinstance(error, ConnectionClosedError)
                else:
                    assert isinstance(outcome, CallToolResult)
            assert not ended or example.may_end(), client.closed_reason
            try:
                answered = await client.call_tool("echo", {"a": 1}, timeout=GOOD_TIMEOUT)
            except ConnectionClosedError:
                assert example.may_end(), client.closed_reason
            else:
                assert answered.content[0].text == "echo: {'a': 1}"  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answered=_answered())
def test_any_answer_is_a_result_or_a_documented_error_and_the_client_goes_on(
    transport: str, answered: tuple[ConnectMode, list[dict[str, Any]]]
) -> None:
    era, answers = answered
    trio.run(_calls, Example(era, transport, answers))
