"""Multi round-trip requests, the client's half (2026-07-28 basic/patterns/mrtr, CHECKLIST §9.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import RequestReceived, types
from mcpcore.client import (
    MAX_INPUT_ROUNDS,
    ClientCallbacks,
    ClientSession,
    TooManyInputRoundsError,
    UnsupportedInputRequestError,
)
from tests.core.client_harness import (
    MemoryRequester,
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


FORM = types.ElicitRequestFormParams(
    message="Your name?",
    requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
)
SAMPLE = types.CreateMessageRequestParams(
    messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
    max_tokens=10,
)
# requestState is opaque: quotes, backslashes, non-ASCII and a line separator must survive.
STATE = 'v1."st\\ate"/é\u2028{"x": [1]}'


class Asked:
    """Callbacks that answer and remember what they were asked."""

    def __init__(self) -> None:
        self.elicited: list[Any] = []
        self.sampled: list[Any] = []
        self.rooted = 0

    async def elicit(self, params: Any) -> types.ElicitResult:
        self.elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, params: Any) -> types.CreateMessageResult:
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hello"), model="m"
        )

    async def roots(self) -> types.ListRootsResult:
        self.rooted += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///work")])

    def callbacks(self, **options: Any) -> ClientCallbacks:
        return ClientCallbacks(
            elicitation=self.elicit, sampling=self.sample, roots=self.roots, **options
        )


def modern_session(
    handler: Any, asked: Asked | None = None, **options: Any
) -> tuple[ClientSession, MemoryRequester, Asked]:
    asked = asked or Asked()
    session, requester = make_session(handler, callbacks=asked.callbacks(), **options)
    run(session.connect())
    return session, requester, asked


def done(text: str = "done") -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def test_one_round_answers_the_input_and_retries_with_the_state() -> None:
    seen: list[RequestReceived] = []

    def call(event: RequestReceived) -> Any:
        seen.append(event)
        if event.params.input_responses is types.UNSET:
            return types.InputRequiredResult(
                input_requests={"who": types.ElicitRequest(params=FORM)}, request_state=STATE
            )
        return done(event.params.input_responses["who"]["content"]["name"])

    session, _requester, asked = modern_session(scripted({"tools/call": call}))
    result = run(session.call_tool("greet", {"formal": True}, meta={"progressToken": "p1"}))
    assert result.content == [types.TextContent(text="Ada")]
    assert asked.elicited == [FORM]
    first, retry = seen
    # The retry repeats the original params (G18), adds the answers and the state.
    assert retry.params.name == first.params.name == "greet"
    assert retry.params.arguments == first.params.arguments == {"formal": True}
    assert retry.params.meta["progressToken"] == "p1"
    assert retry.params.request_state == STATE
    assert set(retry.params.input_responses) == {"who"}
    # "An MRTR retry MUST use a new id."
    assert first.request_id != retry.request_id
    assert first.params.request_state is types.UNSET


def test_several_rounds_carry_each_rounds_answers_and_latest_state() -> None:
    seen: list[RequestReceived] = []

    def call(event: RequestReceived) -> Any:
        seen.append(event)
        state = event.params.request_state
        if state is types.UNSET:
            return types.InputRequiredResult(
                input_requests={"a": types.ElicitRequest(params=FORM)}, request_state="one"
            )
        if state == "one":
            return types.InputRequiredResult(
                input_requests={
                    "b": types.CreateMessageRequest(params=SAMPLE),
                    "c": types.ListRootsRequest(),
                },
                request_state="two",
            )
        return done()

    session, _requester, asked = modern_session(scripted({"tools/call": call}))
    run(session.call_tool("t"))
    assert [event.params.request_state for event in seen] == [types.UNSET, "one", "two"]
    assert seen[1].params.input_responses.keys() == {"a"}
    assert seen[2].params.input_responses.keys() == {"b", "c"}  # not round one's "a"
    assert seen[2].params.input_responses["c"] == {"roots": [{"uri": "file:///work"}]}
    assert len({event.request_id for event in seen}) == 3
    assert (len(asked.elicited), len(asked.sampled), asked.rooted) == (1, 1, 1)


def test_the_state_is_echoed_exactly_and_never_invented() -> None:
    retries: list[dict[str, Any]] = []

    def call(message: dict[str, Any]) -> Any:
        params = message["params"]
        if "inputResponses" not in params:
            # No requestState at all: the client must not add one.
            return RawResult(
                {
                    "resultType": "input_required",
                    "inputRequests": {"r": {"method": "roots/list"}},
                }
            )
        retries.append(params)
        if len(retries) == 1:
            return RawResult(
                {
                    "resultType": "input_required",
                    "requestState": STATE,
                    "inputRequests": {"r": {"method": "roots/list"}},
                }
            )
        return RawResult({"resultType": "complete", "content": []})

    session, _requester, _ = modern_session(scripted(), intercepts={"tools/call": call})
    run(session.call_tool("t"))
    first, second = retries
    assert "requestState" not in first
    assert second["requestState"] == STATE


def test_without_input_requests_the_retry_carries_the_state_alone() -> None:
    seen: list[RequestReceived] = []

    def read(event: RequestReceived) -> Any:
        seen.append(event)
        if event.params.request_state is types.UNSET:
            return types.InputRequiredResult(request_state="poll")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri="file:///a", text="a")], ttl_ms=60_000
        )

    session, requester, asked = modern_session(scripted({"resources/read": read}))
    result = run(session.read_resource("file:///a"))
    assert result.contents[0].text == "a"
    retry = seen[1].params
    assert retry.request_state == "poll"
    assert retry.input_responses is types.UNSET
    assert "inputResponses" not in requester.requests[-1]["params"]
    assert (asked.elicited, asked.sampled, asked.rooted) == ([], [], 0)


def test_get_prompt_retries_too() -> None:
    def get(event: RequestReceived) -> Any:
        if event.params.input_responses is types.UNSET:
            return types.InputRequiredResult(
                input_requests={"s": types.CreateMessageRequest(params=SAMPLE)}
            )
        return types.GetPromptResult(
            messages=[types.PromptMessage(role="user", content=types.TextContent(text="p"))]
        )

    session, _, asked = modern_session(scripted({"prompts/get": get}))
    result = run(session.get_prompt("p", {"x": "1"}))
    assert len(result.messages) == 1
    assert len(asked.sampled) == 1


def test_rounds_are_bounded() -> None:
    calls: list[RequestReceived] = []

    def call(event: RequestReceived) -> Any:
        calls.append(event)
        return types.InputRequiredResult(request_state="again")

    session, _, _ = modern_session(scripted({"tools/call": call}))
    with pytest.raises(TooManyInputRoundsError) as caught:
        run(session.call_tool("t"))
    assert caught.value.rounds == MAX_INPUT_ROUNDS
    assert len(calls) == 1 + MAX_INPUT_ROUNDS


@pytest.mark.parametrize(
    ("request_object", "callbacks"),
    [
        # A kind with no callback (sampling undeclared).
        ({"method": "sampling/createMessage", "params": SAMPLE}, {"sampling": False}),
        # URL-mode elicitation, declared only as form.
        (
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com"},
            },
            {},
        ),
        # Sampling with tools, without sampling.tools.
        (
            {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [],
                    "maxTokens": 5,
                    "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
                },
            },
            {},
        ),
    ],
    ids=["undeclared-kind", "undeclared-url-mode", "undeclared-sampling-tools"],
)
def test_an_undeclared_kind_is_an_error_and_nothing_is_answered(
    request_object: dict[str, Any], callbacks: dict[str, Any]
) -> None:
    import msgspec

    asked = Asked()
    use = asked.callbacks()
    if callbacks.get("sampling") is False:
        use = ClientCallbacks(elicitation=asked.elicit, roots=asked.roots)
    raw = {
        "resultType": "input_required",
        "inputRequests": {
            "ok": {"method": "elicitation/create", "params": msgspec.to_builtins(FORM)},
            "bad": msgspec.to_builtins(request_object),
        },
    }
    session, requester = make_session(
        callbacks=use, intercepts={"tools/call": lambda _: RawResult(raw)}
    )
    run(session.connect())
    with pytest.raises(UnsupportedInputRequestError) as caught:
        run(session.call_tool("t"))
    assert caught.value.key == "bad"
    # Checked before any callback ran: the user is not asked half the questions.
    assert asked.elicited == []
    assert requester.methods.count("tools/call") == 1  # and nothing was invented


def test_a_callback_exception_reaches_the_caller() -> None:
    async def broken(params: Any) -> types.ElicitResult:
        raise RuntimeError("the UI crashed")

    def call(event: RequestReceived) -> Any:
        return types.InputRequiredResult(input_requests={"q": types.ElicitRequest(params=FORM)})

    session, _requester = make_session(
        scripted({"tools/call": call}), callbacks=ClientCallbacks(elicitation=broken)
    )
    run(session.connect())
    with pytest.raises(RuntimeError, match="UI crashed"):
        run(session.call_tool("t"))


def test_a_callback_returning_the_wrong_type_is_a_type_error() -> None:
    async def wrong(params: Any) -> Any:
        return {"action": "accept"}

    def call(event: RequestReceived) -> Any:
        return types.InputRequiredResult(input_requests={"q": types.ElicitRequest(params=FORM)})

    session, _ = make_session(
        scripted({"tools/call": call}), callbacks=ClientCallbacks(elicitation=wrong)
    )
    run(session.connect())
    with pytest.raises(TypeError, match="ElicitResult"):
        run(session.call_tool("t"))


def test_a_declined_elicitation_is_an_answer_like_any_other() -> None:
    async def decline(params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    def call(event: RequestReceived) -> Any:
        if event.params.input_responses is types.UNSET:
            return types.InputRequiredResult(input_requests={"q": types.ElicitRequest(params=FORM)})
        assert event.params.input_responses == {"q": {"action": "decline"}}
        return done("declined")

    session, _ = make_session(
        scripted({"tools/call": call}), callbacks=ClientCallbacks(elicitation=decline)
    )
    run(session.connect())
    assert run(session.call_tool("t")).content == [types.TextContent(text="declined")]


def test_url_elicitation_when_declared() -> None:
    url = types.ElicitRequestURLParams(message="Sign in", url="https://example.com/auth")
    asked = Asked()

    def call(event: RequestReceived) -> Any:
        if event.params.input_responses is types.UNSET:
            return types.InputRequiredResult(
                input_requests={"u": types.ElicitRequest(params=url)}, request_state="s"
            )
        return done()

    session, requester = make_session(
        scripted({"tools/call": call}), callbacks=asked.callbacks(url_elicitation=True)
    )
    run(session.connect())
    run(session.call_tool("t"))
    assert asked.elicited == [url]
    meta = requester.requests[-1]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] == {
        "form": {},
        "url": {},
    }
