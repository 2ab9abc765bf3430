"""The trio `Client` against ``examples/everything.py --transport stdio``, a real subprocess.

Both eras: ``legacy`` runs the ``initialize`` handshake, ``auto`` probes
``server/discover`` and speaks 2026-07-28 with the everything server. Every wait is
bounded (`trio_test`, and the client's own timeouts).
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
import trio

from mcpcore import LocalProtocolError, NotificationReceived, types
from mcpcore.client import ClientCallbacks, ConnectMode, McpError
from mcpcore.versions import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, Era
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from transports import NotificationCallback, StdioClient, open_stdio_client

EVERYTHING = str(REPOSITORY / "examples" / "everything.py")
MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
SIMPLE_TEXT = "This is a simple text response for testing."


def everything(
    mode: ConnectMode,
    *,
    callbacks: ClientCallbacks | None = None,
    on_notification: NotificationCallback | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[StdioClient]:
    return open_stdio_client(
        PYTHON,
        [EVERYTHING, "--transport", "stdio"],
        mode=mode,
        callbacks=callbacks,
        on_notification=on_notification,
        timeout=10,
        **options,
    )


def text_of(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.GetPromptResult):
        [message] = result.messages
        block: Any = message.content
    else:
        [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def elicit(
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    names = list(params.requested_schema.get("properties", {}))
    return types.ElicitResult(action="accept", content=dict.fromkeys(names, "Ada"))


async def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="Paris"), model="test-model"
    )


async def roots() -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///a"), types.Root(uri="file:///b")])


CALLBACKS = ClientCallbacks(elicitation=elicit, sampling=sample, roots=roots)


# ------------------------------------------------------------ lists and pages


@MODES
@trio_test
async def test_connecting_then_lists_one_page_and_every_page(mode: ConnectMode) -> None:
    async with everything(mode) as client:
        if mode == "legacy":
            assert client.era is Era.LEGACY
            assert client.protocol_version == LATEST_LEGACY_VERSION
            await client.ping()
        else:
            assert client.era is Era.MODERN  # the probe found a 2026-07-28 server
            assert client.protocol_version == LATEST_MODERN_VERSION
        assert client.server_info is not None
        assert client.server_info.name == "mcpcore-everything"
        assert client.instructions == "The mcpcore conformance fixture server."
        assert client.server_capabilities is not None
        assert client.server_capabilities.tools is not types.UNSET

        page = await client.list_tools()
        everyone = [tool.name async for tool in client.iter_tools()]
        assert [tool.name for tool in page.tools] == everyone[: len(page.tools)]
        assert everyone[0] == "test_simple_text"
        assert "test_tool_with_progress" in everyone
        assert len(everyone) == len(set(everyone))
        uris = [resource.uri async for resource in client.iter_resources()]
        assert {"test://static-text", "test://static-binary"} <= set(uris)
        templates = [t.uri_template async for t in client.iter_resource_templates()]
        assert templates == ["test://template/{id}/data"]
        prompts = [prompt.name async for prompt in client.iter_prompts()]
        assert "test_prompt_with_arguments" in prompts
        assert (await client.list_prompts()).prompts[0].name == prompts[0]
        assert (await client.list_resources()).resources[0].uri == uris[0]
        templates_page = await client.list_resource_templates()
        assert templates_page.resource_templates[0].uri_template == templates[0]


# ------------------------------------------------- tools, resources, prompts


@MODES
@trio_test
async def test_tools_resources_prompts_and_completion(mode: ConnectMode) -> None:
    async with everything(mode) as client:
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        failed = await client.call_tool("test_error_handling")
        assert failed.is_error is True

        text = await client.read_resource("test://static-text")
        [contents] = text.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == "This is the content of the static text resource."
        binary = await client.read_resource("test://static-binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert blob.mime_type == "image/png"
        assert blob.blob.startswith("iVBORw0KGgo")  # base64 of the PNG signature
        templated = await client.read_resource("test://template/42/data")
        [data] = templated.contents
        assert isinstance(data, types.TextResourceContents)
        assert json.loads(data.text)["id"] == "42"

        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert text_of(prompt) == "Prompt with arguments: arg1='a', arg2='b'"

        reference = types.PromptReference(name="test_prompt_with_arguments")
        completed = await client.complete(reference, "arg1", "pa")
        assert completed.completion.values == ["paris", "park", "party"]
        narrowed = await client.complete(reference, "arg2", "b", {"arg1": "paris"})
        assert narrowed.completion.values == ["beta"]


@pytest.mark.parametrize(("mode", "code"), [("legacy", -32002), ("auto", -32602)])
@trio_test
async def test_a_server_error_is_an_mcp_error_and_the_connection_carries_on(
    mode: ConnectMode, code: int
) -> None:
    async with everything(mode) as client:
        with pytest.raises(McpError) as raised:
            await client.read_resource("test://nowhere")
        assert raised.value.code == code  # resource not found, per era (CHECKLIST G13)
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT


# ------------------------------------------------------------------- progress


@MODES
@trio_test
async def test_progress_arrives_in_order_with_its_values(mode: ConnectMode) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with everything(mode) as client:
        result = await client.call_tool("test_tool_with_progress", progress=progress)
        assert text_of(result) == "Progress test completed"
        assert seen == [
            (0, 100, "Progress 0%"),
            (50, 100, "Progress 50%"),
            (100, 100, "Progress 100%"),
        ]
        # A plain function works too, and each call has a token of its own.
        plain: list[float] = []
        again = await client.call_tool(
            "test_tool_with_progress", progress=lambda value, total, message: plain.append(value)
        )
        assert text_of(again) == "Progress test completed"
        assert plain == [0, 50, 100]


@MODES
@trio_test
async def test_a_slow_progress_callback_stalls_nothing_and_sees_the_latest(
    mode: ConnectMode,
) -> None:
    seen: list[float] = []
    entered = trio.Event()
    release = trio.Event()

    async def slow(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)
        entered.set()
        await release.wait()

    async with everything(mode) as client, trio.open_nursery() as nursery:
        outcome: dict[str, types.CallToolResult] = {}

        async def call_with_progress() -> None:
            outcome["progress"] = await client.call_tool("test_tool_with_progress", progress=slow)

        nursery.start_soon(call_with_progress)
        await entered.wait()
        # The callback is stuck on progress 0. The connection is not: other calls are
        # answered, and test_reconnection (0.2 s) outlasts the progress tool (0.15 s),
        # whose later progress and result arrive meanwhile.
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        await client.call_tool("test_reconnection")
        assert seen == [0]
        release.set()
    assert text_of(outcome["progress"]) == "Progress test completed"
    # 50 was overtaken by 100 while the callback was busy; the latest came before the end.
    assert seen == [0, 100]


# ------------------------------------------------------- timeouts and cancelling


@MODES
@trio_test
async def test_timed_out_and_cancelled_calls_leave_the_connection_usable(mode: ConnectMode) -> None:
    async with everything(mode) as client:
        with trio.fail_after(5):
            with pytest.raises(TimeoutError):
                await client.call_tool("test_reconnection", timeout=0.05)
        # The late answer (if any) is dropped quietly; the next calls go through.
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        with trio.move_on_after(0.05) as scope:
            await client.call_tool("test_reconnection")
        assert scope.cancelled_caught
        assert client.session.connection.pending_requests == ()
        result = await client.call_tool("test_reconnection")
        assert text_of(result) == "Reconnection test completed"
        assert client.closed_reason is None


@trio_test
async def test_the_server_cancels_its_sampling_request_when_the_tool_call_is_cancelled() -> None:
    asked = trio.Event()
    callback_cancelled = trio.Event()

    async def never_answers(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.set()
        try:
            await trio.sleep_forever()
        finally:
            callback_cancelled.set()
        raise AssertionError("unreachable")

    async with everything("legacy", callbacks=ClientCallbacks(sampling=never_answers)) as client:
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                await client.call_tool("test_sampling", {"prompt": "Capital of France?"})

            nursery.start_soon(call)
            await asked.wait()
            nursery.cancel_scope.cancel()  # our notifications/cancelled for tools/call...
        # ...makes the server give up its sampling request: its notifications/cancelled
        # cancels our callback.
        with trio.fail_after(5):
            await callback_cancelled.wait()
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT


# ------------------------------------------------------------------ callbacks


@trio_test
async def test_legacy_sampling_and_elicitation_go_through_the_callbacks() -> None:
    async with everything("legacy", callbacks=CALLBACKS) as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text_of(sampled) == "LLM response: Paris"
        elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert text_of(elicited) == (
            'User response: action=accept, content={"username":"Ada","email":"Ada"}'
        )


@trio_test
async def test_2026_multi_round_trips_go_through_the_callbacks() -> None:
    async with everything("auto", callbacks=CALLBACKS) as client:
        assert client.era is Era.MODERN
        elicited = await client.call_tool("test_input_required_result_elicitation")
        assert text_of(elicited) == "Hello, Ada!"
        sampled = await client.call_tool("test_input_required_result_sampling")
        assert text_of(sampled) == "The model said: Paris"
        listed = await client.call_tool("test_input_required_result_list_roots")
        assert text_of(listed) == "Found 2 root(s)"
        rounds = await client.call_tool("test_input_required_result_multi_round")
        assert text_of(rounds) == '{"name":"Ada"} likes {"color":"Ada"}'
        prompt = await client.get_prompt("test_input_required_result_prompt")
        assert text_of(prompt) == "Use this context: Ada"


# -------------------------------------------------------------- notifications


def collector() -> tuple[NotificationCallback, trio.MemoryReceiveChannel[NotificationReceived]]:
    send, receive = trio.open_memory_channel[NotificationReceived](100)

    async def on_notification(event: NotificationReceived) -> None:
        await send.send(event)

    return on_notification, receive


@MODES
@trio_test
async def test_log_messages_reach_on_notification(mode: ConnectMode) -> None:
    on_notification, received = collector()
    async with everything(mode, on_notification=on_notification) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("test_tool_with_logging")
        assert text_of(result) == "Logging test completed"
        messages = [await received.receive() for _ in range(3)]
    assert [event.method for event in messages] == ["notifications/message"] * 3
    assert [event.params.data for event in messages] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


@trio_test
async def test_legacy_list_changes_reach_on_notification() -> None:
    on_notification, received = collector()
    async with everything("legacy", on_notification=on_notification) as client:
        await client.call_tool("test_trigger_tool_change")
        event = await received.receive()
        assert event.method == "notifications/tools/list_changed"
        # Subscribing to a resource is accepted (no fixture updates one).
        await client.subscribe("test://watched-resource")
        await client.unsubscribe("test://watched-resource")
        # 2026-07-28 listen streams don't exist here.
        with pytest.raises(LocalProtocolError, match="2026-07-28 only"):
            async with client.listen(types.SubscriptionFilter(tools_list_changed=True)):
                pass  # pragma: no cover


@trio_test
async def test_a_failing_on_notification_goes_to_on_callback_error_else_ends_the_client() -> None:
    reported: list[tuple[str, Exception]] = []
    done = trio.Event()

    def explode(event: NotificationReceived) -> None:
        raise ValueError(event.method)

    def report(method: str, exc: Exception) -> None:
        reported.append((method, exc))
        done.set()

    callbacks = ClientCallbacks(on_callback_error=report)
    async with everything("legacy", callbacks=callbacks, on_notification=explode) as client:
        await client.call_tool("test_trigger_tool_change")
        await done.wait()
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
    [(method, exc)] = reported
    assert method == "notifications/tools/list_changed"
    assert isinstance(exc, ValueError)

    # Without a hook, the error is not hidden: it ends the client and comes out.
    async def unhooked() -> None:
        async with everything("legacy", on_notification=explode) as client:
            await client.call_tool("test_trigger_tool_change")
            await trio.sleep_forever()  # ended by the callback's error

    with pytest.raises(ValueError, match="list_changed"):
        await unhooked()


@trio_test
async def test_a_listen_stream_carries_list_changes_and_is_cancelled_on_exit() -> None:
    on_notification, received = collector()
    wanted = types.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True)
    async with everything("auto", on_notification=on_notification) as client:
        async with client.listen(wanted) as stream:
            listen_id = stream.subscription_id
            assert stream.acknowledged.tools_list_changed is True
            assert stream.comparison.is_valid
            await client.call_tool("test_trigger_tool_change")
            event = await anext(stream)
            assert event.method == "notifications/tools/list_changed"
            assert event.subscription_id == listen_id
            await client.call_tool("test_trigger_prompt_change")
            assert (await anext(stream)).method == "notifications/prompts/list_changed"
            assert listen_id in client.session.connection.pending_requests
        # Leaving the block cancelled the stream on the wire; the connection goes on.
        assert listen_id not in client.session.connection.pending_requests
        assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        # Stream notifications never went to on_notification.
        with pytest.raises(trio.WouldBlock):
            received.receive_nowait()


# -------------------------------------------------------------------- load


async def _many(client: StdioClient, count: int) -> dict[int, str]:
    answers: dict[int, str] = {}

    async def one(index: int) -> None:
        if index % 2:
            read = await client.read_resource(f"test://template/{index}/data")
            [contents] = read.contents
            assert isinstance(contents, types.TextResourceContents)
            answers[index] = json.loads(contents.text)["id"]
        else:
            called = await client.call_tool(
                "json_schema_2020_12_tool", {"name": str(index), "phone": "1"}
            )
            answers[index] = json.loads(text_of(called).removeprefix("Received: "))["name"]

    async with trio.open_nursery() as nursery:
        for index in range(count):
            nursery.start_soon(one, index)
    return answers


@MODES
@trio_test(timeout=30)
async def test_a_thousand_concurrent_calls_are_all_answered_correctly(mode: ConnectMode) -> None:
    async with everything(mode) as client:
        with trio.fail_after(20):
            answers = await _many(client, 1000)
        assert answers == {index: str(index) for index in range(1000)}
        assert client.session.connection.pending_requests == ()
