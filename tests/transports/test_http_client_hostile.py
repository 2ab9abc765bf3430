"""`open_http_client` against a server answering a call with anything: a result or our error.

"Hostile input of any shape gets a protocol error, never a crash", on the client's side
too: a server may answer a ``tools/call`` with any status, any media type, any body,
an event stream of any events, or cut the connection anywhere. Hypothesis draws such
answers, valid and broken, from a scripted server (`tests.transports.http_mcp_script`)
that otherwise speaks its era correctly, and calls a tool once per answer; a legacy
session's GET streams get such answers too.

Each call returns a result or raises one of the client's documented errors
(`mcpcore.client.McpError` for the server's, `mcpcore.client.ClientError` for what we
judge of its answers, `transports.HttpStatusError`, `ConnectionError`, `TimeoutError`),
never anything else; and the client goes on: once the server answers properly again, a
call succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpcore.client import ConnectMode
from mcpcore.types import CallToolResult
from tests.transports.hostile_answers import DOCUMENTED, messages, with_id
from tests.transports.http_mcp_script import McpScript
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from transports import ConnectionClosedError, open_http_client

#: Seconds a call waits for its answer: an answer never comes for some streams (they end
#: without one, or only with notifications), and the client's timeout ends the call.
CALL_TIMEOUT: Final = 0.5
#: Seconds the last, proper call may take, and a whole example.
GOOD_TIMEOUT: Final = 10.0
EXAMPLE_BOUND: Final = 60.0
ERAS: Final[list[ConnectMode]] = ["modern", "legacy"]


@dataclass
class Answer:
    """How the server answers one ``tools/call``.

    Attributes:
        status: The HTTP status.
        kind: ``"json"`` (a body), ``"sse"`` (an event stream), ``"raw"`` (a body of
            ``content_type``).
        content_type: For ``"raw"``.
        messages: What the body or the events carry, each a JSON value or raw bytes; the
            placeholder `tests.transports.hostile_answers.ID` is the request's id.
        event_ids: The stream's events carry ids.
        cut: The connection is cut after this many events (None: the answer ends).
    """

    status: int
    kind: str
    content_type: str
    messages: list[Any]
    event_ids: bool
    cut: int | None


@st.composite
def answers(draw: st.DrawFn, era: str) -> Answer:
    """How the server answers one call (see `Answer`)."""
    return Answer(
        status=draw(st.sampled_from([200] * 6 + [202, 204, 400, 404, 500, 503])),
        kind=draw(st.sampled_from(["json", "json", "sse", "sse", "raw"])),
        content_type=draw(
            st.sampled_from(["text/plain", "application/json; charset=utf-8", "", "text/html"])
        ),
        messages=draw(st.lists(messages(era), min_size=0, max_size=3)),
        event_ids=draw(st.booleans()),
        cut=draw(st.none() | st.integers(0, 3)),
    )


async def _answer(answer: Answer, request: Received, reply: Reply) -> None:
    """Send ``answer`` to the call ``request``."""
    message = request.message  # (a GET has none: its stream answers nothing)
    request_id = message.get("id") if isinstance(message, dict) else None
    bodies = [with_id(message, request_id) for message in answer.messages]
    if answer.kind != "sse":
        body = bodies[0] if bodies else b""
        if answer.cut == 0:
            await reply.abort()
            return
        content_type = "application/json" if answer.kind == "json" else answer.content_type
        await reply.body(answer.status, b"" if answer.status == 204 else body, content_type)
        return
    await reply.sse()
    for number, body in enumerate(bodies):
        if answer.cut == number:
            await reply.abort()
            return
        event_id = f"e{number}" if answer.event_ids else None
        await reply.event(body.decode("utf-8", "replace"), id=event_id)
    if answer.cut is not None:
        await reply.abort()
    else:
        await reply.end()


async def _calls(era: ConnectMode, drawn: list[Answer], streams: list[Answer]) -> None:
    """Call a tool once per ``drawn`` answer (the legacy GET streams get ``streams``)."""
    script = McpScript(era)
    pending = list(drawn)

    async def hostile(request: Received, reply: Reply) -> None:
        if pending:
            await _answer(pending.pop(0), request, reply)
        else:
            await script.answer(request, reply)

    async def stream(request: Received, reply: Reply) -> None:
        if streams:
            await _answer(streams.pop(0), request, reply)
        else:
            await reply.status(405)

    script.hooks["tools/call"] = hostile
    script.hooks["GET"] = stream
    closed = False  # (a call failed with ConnectionClosedError)
    with trio.fail_after(EXAMPLE_BOUND):
        async with (
            scripted_server(script) as server,
            open_http_client(server.url, mode=era, timeout=CALL_TIMEOUT) as client,
        ):
            while pending:
                before = len(pending)
                try:
                    outcome = await client.call_tool("echo", {"a": 1})
                except DOCUMENTED as error:
                    closed = closed or isinstance(error, ConnectionClosedError)
                else:
                    assert isinstance(outcome, CallToolResult)
                if len(pending) == before:  # (the call never reached the server)
                    pending.pop(0)
            # The client goes on, unless its connection was closed.
            try:
                answered = await client.call_tool("echo", {"a": 1}, timeout=GOOD_TIMEOUT)
            except ConnectionClosedError:
                assert closed
            else:
                assert answered.content[0].text == "echo: {'a': 1}"  # type: ignore[union-attr]


@st.composite
def _examples(draw: st.DrawFn) -> tuple[ConnectMode, list[Answer], list[Answer]]:
    """An era, the answers to its calls, and (legacy) to its GET streams."""
    era = draw(st.sampled_from(ERAS))
    calls = draw(st.lists(answers(era), min_size=1, max_size=3))
    streams = draw(st.lists(answers(era), max_size=2)) if era == "legacy" else []
    return era, calls, streams


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_examples())
def test_any_answer_is_a_result_or_a_documented_error_and_the_client_goes_on(
    drawn: tuple[ConnectMode, list[Answer], list[Answer]],
) -> None:
    trio.run(_calls, *drawn)
