"""Each client→server method, in both eras; errors; the 2026-07-28 log level."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import LocalProtocolError, RequestReceived, jsonrpc, types
from mcpcore.client import ClientError, InvalidServerResponseError, McpError
from mcpcore.types import LOG_LEVEL_META_KEY
from tests.core.client_harness import (
    ErrorReply,
    RawResult,
    every_message_checked,
    make_session,
    scripted,
)


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def echo(event: RequestReceived) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=str(event.params.arguments))], is_error=False
    )


ANSWERS: dict[str, Any] = {
    "tools/call": echo,
    "resources/read": lambda e: types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=e.params.uri, text="body")]
    ),
    "prompts/get": lambda e: types.GetPromptResult(
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(text=e.params.arguments["topic"])
            )
        ]
    ),
    "completion/complete": lambda e: types.CompleteResult(
        completion=types.Completion(values=[e.params.argument.value + "thon"])
    ),
}


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_the_feature_methods_in_both_eras(mode: str) -> None:
    session, requester = make_session(scripted(ANSWERS))
    run(session.connect(mode))  # type: ignore[arg-type]

    async def calls() -> None:
        result = await session.call_tool("echo", {"x": 1}, meta={"progressToken": 7})
        assert result.content == [types.TextContent(text="{'x': 1}")]
        read = await session.read_resource("file:///a")
        assert read.contents == [types.TextResourceContents(uri="file:///a", text="body")]
        prompt = await session.get_prompt("p", {"topic": "tea"})
        assert prompt.messages[0].content.text == "tea"  # type: ignore[union-attr]
        done = await session.complete(
            types.PromptReference(name="p"), "language", "py", {"topic": "tea"}
        )
        assert done.completion.values == ["python"]
        done = await session.complete(
            types.ResourceTemplateReference(uri="file:///{path}"), "path", "py"
        )

    run(calls())
    call = requester.requests[1]
    assert call["params"]["_meta"]["progressToken"] == 7
    complete = requester.requests[4]
    assert complete["params"]["context"] == {"arguments": {"topic": "tea"}}
    assert "context" not in requester.requests[5]["params"]


def test_legacy_only_methods() -> None:
    session, requester = make_session(scripted(ANSWERS))
    run(session.connect("legacy"))

    async def calls() -> None:
        await session.ping()
        await session.subscribe("file:///a")
        await session.unsubscribe("file:///a")
        await session.set_logging_level("warning")

    run(calls())
    assert requester.methods[1:] == [
        "ping",
        "resources/subscribe",
        "resources/unsubscribe",
        "logging/setLevel",
    ]
    assert session.log_level == "warning"
    assert requester.server.log_level == "warning"
    # Legacy requests carry no _meta log level: the session-wide setting governs.
    run(session.call_tool("echo"))
    assert "_meta" not in requester.requests[-1]["params"]


def test_legacy_methods_do_not_exist_in_2026() -> None:
    session, requester = make_session()
    run(session.connect())
    for call in (session.ping(), session.subscribe("file:///a")):
        with pytest.raises(LocalProtocolError):
            run(call)
    assert requester.methods == ["server/discover"]


def test_discover_does_not_exist_before_2026() -> None:
    session, _ = make_session()
    run(session.connect("legacy"))
    with pytest.raises(LocalProtocolError):
        run(session.discover())


def test_nothing_is_sent_before_connect() -> None:
    session, requester = make_session()
    with pytest.raises(LocalProtocolError):
        run(session.list_tools())
    with pytest.raises(LocalProtocolError):
        run(session.set_logging_level("info"))
    assert requester.sent == []


def test_the_2026_log_level_is_stamped_on_every_later_request() -> None:
    seen: list[RequestReceived] = []

    def listing(event: RequestReceived) -> types.ListToolsResult:
        seen.append(event)
        return types.ListToolsResult(tools=[])

    session, requester = make_session(scripted({"tools/list": listing, **ANSWERS}))
    run(session.connect())
    run(session.list_tools())
    run(session.set_logging_level("notice"))
    assert requester.methods == ["server/discover", "tools/list"]  # no request for it
    run(session.list_tools())
    # Absent at first ("if absent, the server MUST NOT send" logs), then on every request.
    assert [event.log_level for event in seen] == [None, "notice"]
    run(session.call_tool("echo", meta={LOG_LEVEL_META_KEY: "error"}))
    assert requester.requests[-1]["params"]["_meta"][LOG_LEVEL_META_KEY] == "error"  # caller wins
    run(session.read_resource("file:///a"))
    assert requester.requests[-1]["params"]["_meta"][LOG_LEVEL_META_KEY] == "notice"
    with pytest.raises(ValueError, match="log level"):
        run(session.set_logging_level("loud"))  # type: ignore[arg-type]


def test_a_server_error_is_an_mcp_error() -> None:
    session, _ = make_session(
        scripted({"tools/call": ErrorReply(jsonrpc.INVALID_PARAMS, "Unknown tool", {"name": "x"})})
    )
    run(session.connect())
    with pytest.raises(McpError) as caught:
        run(session.call_tool("x"))
    error = caught.value
    assert (error.code, error.message, error.data, error.method) == (
        jsonrpc.INVALID_PARAMS,
        "Unknown tool",
        {"name": "x"},
        "tools/call",
    )
    assert not isinstance(error, ClientError)


@pytest.mark.parametrize(
    "result",
    [
        {"tools": 5},  # the wrong shape
        {"resultType": "task", "tools": []},  # "MUST treat an unrecognized resultType as invalid"
        {"resultType": "input_required", "requestState": "s"},  # not for tools/list
    ],
)
def test_an_unusable_answer_is_a_local_judgement_never_an_mcp_error(result: Any) -> None:
    session, _ = make_session(intercepts={"tools/list": lambda _: RawResult(result)})
    run(session.connect())
    with pytest.raises(InvalidServerResponseError) as caught:
        run(session.list_tools())
    assert caught.value.method == "tools/list"
    assert McpError not in type(caught.value).__mro__


def test_legacy_results_without_result_type_are_complete() -> None:
    session, _ = make_session(
        intercepts={
            "tools/call": lambda _: RawResult({"content": [{"type": "text", "text": "ok"}]})
        }
    )
    run(session.connect("legacy"))
    assert run(session.call_tool("t")).content == [types.TextContent(text="ok")]


def test_timeouts_reach_the_driver() -> None:
    session, requester = make_session(scripted(ANSWERS))
    run(session.connect(probe_timeout=3.0))
    run(session.call_tool("echo", timeout=1.5))
    assert requester.timeouts == [3.0, 1.5]


def test_a_gated_method_the_server_did_not_advertise_is_refused_locally() -> None:
    def bare(event: RequestReceived) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=["2026-07-28"], capabilities=types.ServerCapabilities()
        )

    session, requester = make_session(scripted({"server/discover": bare}))
    run(session.connect())
    with pytest.raises(LocalProtocolError, match="tools"):
        run(session.list_tools())
    assert requester.methods == ["server/discover"]
