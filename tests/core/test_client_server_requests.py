"""A legacy server's own requests, answered through the client's callbacks (CHECKLIST §12)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import ErrorReceived, ResponseReceived, jsonrpc, types
from mcpcore.client import ClientCallbacks, ClientSession, McpError
from tests.core.client_harness import MemoryRequester, every_message_checked, make_session


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


SAMPLE = types.CreateMessageRequestParams(
    messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
    max_tokens=10,
)
FORM = types.ElicitRequestFormParams(
    message="Name?", requested_schema={"type": "object", "properties": {}}
)


async def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="hello"), model="m"
    )


async def elicit(params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def roots() -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///home", name="home")])


def legacy(callbacks: ClientCallbacks) -> tuple[ClientSession, MemoryRequester]:
    session, requester = make_session(callbacks=callbacks)
    run(session.connect("legacy"))
    return session, requester


def test_each_callback_answers_its_request() -> None:
    session, requester = legacy(ClientCallbacks(sampling=sample, elicitation=elicit, roots=roots))
    answers = [
        run(requester.server_asks(session, "sampling/createMessage", SAMPLE)),
        run(requester.server_asks(session, "elicitation/create", FORM)),
        run(requester.server_asks(session, "roots/list")),
        run(requester.server_asks(session, "ping")),
    ]
    assert all(isinstance(answer, ResponseReceived) for answer in answers)
    sampled, elicited, listed, pinged = (answer.result for answer in answers)
    assert sampled.model == "m"
    assert elicited.content == {"name": "Ada"}
    assert listed.roots[0].uri == "file:///home"
    assert pinged == types.Result()


def test_a_raising_callback_leaks_nothing() -> None:
    failures: list[tuple[str, Exception]] = []

    async def broken(params: Any) -> types.CreateMessageResult:
        raise RuntimeError("secret path /home/ada/.keys")

    session, requester = legacy(
        ClientCallbacks(sampling=broken, on_callback_error=lambda m, e: failures.append((m, e)))
    )
    answer = run(requester.server_asks(session, "sampling/createMessage", SAMPLE))
    assert isinstance(answer, ErrorReceived)
    assert (answer.error.code, answer.error.message) == (jsonrpc.INTERNAL_ERROR, "Internal error")
    assert answer.error.data is types.UNSET
    assert "secret" not in requester.sent[-1].data.decode()
    [(method, exc)] = failures
    assert method == "sampling/createMessage"
    assert "secret" in str(exc)


def test_a_callback_may_answer_with_a_chosen_error() -> None:
    async def refuse(params: Any) -> types.CreateMessageResult:
        raise McpError(-1, "User rejected sampling request")

    session, requester = legacy(ClientCallbacks(sampling=refuse))
    answer = run(requester.server_asks(session, "sampling/createMessage", SAMPLE))
    assert isinstance(answer, ErrorReceived)
    assert (answer.error.code, answer.error.message) == (-1, "User rejected sampling request")


def test_a_callback_returning_the_wrong_type_is_a_bare_internal_error() -> None:
    failures: list[Any] = []

    async def wrong() -> Any:
        return ["file:///"]

    session, requester = legacy(
        ClientCallbacks(roots=wrong, on_callback_error=lambda m, e: failures.append(e))
    )
    answer = run(requester.server_asks(session, "roots/list"))
    assert isinstance(answer, ErrorReceived)
    assert answer.error.code == jsonrpc.INTERNAL_ERROR
    assert isinstance(failures[0], TypeError)


def test_an_undeclared_kind_is_refused_by_the_connection() -> None:
    session, requester = legacy(ClientCallbacks(sampling=sample))
    data = jsonrpc.encode_request(99, "roots/list", types.RequestParams())
    reply = json.loads(run(requester.raw_server_request(session, data, "roots/list")))
    # "A client without roots support → -32601" (2024-11-05 client/roots).
    assert reply["error"]["code"] == jsonrpc.METHOD_NOT_FOUND


def test_an_undeclared_elicitation_mode_or_sampling_tools_is_invalid_params() -> None:
    session, requester = legacy(ClientCallbacks(sampling=sample, elicitation=elicit))
    url = types.ElicitRequestURLParams(
        message="Sign in", url="https://example.com", elicitation_id="e1"
    )
    data = jsonrpc.encode_request(98, "elicitation/create", url)
    reply = json.loads(run(requester.raw_server_request(session, data, "elicitation/create")))
    assert reply["error"]["code"] == jsonrpc.INVALID_PARAMS
    tools = types.CreateMessageRequestParams(
        messages=[], max_tokens=5, tools=[types.Tool(name="t", input_schema={"type": "object"})]
    )
    data = jsonrpc.encode_request(97, "sampling/createMessage", tools)
    reply = json.loads(run(requester.raw_server_request(session, data, "sampling/createMessage")))
    assert reply["error"]["code"] == jsonrpc.INVALID_PARAMS


def test_roots_list_changed_is_declared_and_sent() -> None:
    session, requester = legacy(ClientCallbacks(roots=roots, roots_list_changed=True))
    assert requester.requests[0]["params"]["capabilities"] == {"roots": {"listChanged": True}}
    run(session.notify_roots_changed())
    assert requester.notifications[-1]["method"] == "notifications/roots/list_changed"


def test_callback_flags_need_their_callback() -> None:
    for flag in ("url_elicitation", "sampling_tools", "roots_list_changed"):
        with pytest.raises(ValueError, match="needs"):
            ClientCallbacks(**{flag: True})  # type: ignore[arg-type]
    assert ClientCallbacks(
        elicitation=elicit, url_elicitation=True, sampling=sample, sampling_tools=True
    ).capabilities() == types.ClientCapabilities(
        elicitation=types.ElicitationCapability(form={}, url={}),
        sampling=types.SamplingCapability(tools={}),
    )
    assert ClientCallbacks().capabilities() == types.ClientCapabilities()
