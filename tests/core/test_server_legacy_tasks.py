"""The 2025-11-25 core tasks on the sans-IO `Server` (CHECKLIST §13.1).

The same tools, store and runner as the 2026-07-28 extension (test_server_tasks.py);
here a 2025-11-25 session augments ``tools/call`` with ``task`` and reads the task with
``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from mcpcore import ErrorReceived, RequestReceived, ResponseReceived, jsonrpc, types
from mcpcore.server import Server
from tests.core.server_harness import Harness
from tests.core.test_server_tasks import Clock, StepRunner, task_server
from tests.core.test_server_tools import asynchronous

LEGACY_CAPS = types.ClientCapabilities()
ASKING_CAPS = types.ClientCapabilities(elicitation=types.ElicitationCapability())


async def legacy(
    runner: Any, *, caps: types.ClientCapabilities = LEGACY_CAPS, **options: Any
) -> tuple[Harness, Server, types.InitializeResult]:
    server, _ = task_server(runner, **options)
    harness = Harness(server, client_caps=caps)
    init = await harness.handshake("2025-11-25")
    return harness, server, init


async def start(harness: Harness, name: str, ttl: int | None = None, **arguments: Any) -> Any:
    task = types.TaskMetadata() if ttl is None else types.TaskMetadata(ttl=ttl)
    params = types.CallToolRequestParams(name=name, arguments=arguments, task=task)
    return await harness.call("tools/call", params)


def body(event: Any) -> dict[str, Any]:
    assert isinstance(event, ResponseReceived), event
    result: dict[str, Any] = msgspec.to_builtins(event.result)
    return result


async def method(harness: Harness, name: str, task_id: str) -> Any:
    params = types.GetTaskRequestParams(task_id=task_id)
    return await harness.call(name, params)


@asynchronous
async def test_the_server_advertises_tasks_and_each_tool_its_task_support() -> None:
    harness, _, init = await legacy(StepRunner())
    caps = msgspec.to_builtins(init.capabilities)
    assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    listed = await harness.result("tools/list", types.PaginatedRequestParams())
    support = {t.name: t.execution for t in listed.tools}
    assert support["plain"] is types.UNSET
    assert support["compute"] == types.ToolExecution(task_support="optional")
    assert support["must_be_a_task"] == types.ToolExecution(task_support="required")


@asynchronous
async def test_no_runner_no_tasks_capability_and_tools_answer_synchronously() -> None:
    server = Server("plain", "1.0", secret=b"k" * 32, clock=Clock())

    @server.tool(task="required")
    def job() -> str:
        return "done"

    harness = Harness(server, client_caps=LEGACY_CAPS)
    init = await harness.handshake("2025-11-25")
    assert init.capabilities.tasks is types.UNSET
    listed = await harness.result("tools/list", types.PaginatedRequestParams())
    assert listed.tools[0].execution is types.UNSET
    result = await harness.result("tools/call", types.CallToolRequestParams(name="job"))
    assert isinstance(result, types.CallToolResult)
    assert isinstance(await method(harness, "tasks/get", "x"), ErrorReceived)


@asynchronous
async def test_a_task_augmented_call_answers_a_task_then_tasks_result_the_call() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner)
    created = body(await start(harness, "compute", label="later"))
    task = created["task"]
    assert task["status"] == "working"
    assert task["ttl"] == 3_600_000
    assert task["pollInterval"] == 500
    assert task["createdAt"] == task["lastUpdatedAt"]
    task_id = task["taskId"]
    got = body(await method(harness, "tasks/get", task_id))
    assert got["taskId"] == task_id
    assert got["status"] == "working"
    # tasks/result blocks until the run ends (the StepRunner runs it on wait).
    result = body(await method(harness, "tasks/result", task_id))
    assert result["content"] == [{"type": "text", "text": "computed later"}]
    assert result["_meta"] == {types.RELATED_TASK_META_KEY: {"taskId": task_id}}
    assert body(await method(harness, "tasks/get", task_id))["status"] == "completed"
    # Once terminal it answers again, at once.
    assert body(await method(harness, "tasks/result", task_id))["content"] == result["content"]


@asynchronous
async def test_the_requested_ttl_is_honoured_up_to_ours() -> None:
    harness, _, _ = await legacy(StepRunner())
    assert body(await start(harness, "compute", ttl=5_000))["task"]["ttl"] == 5_000
    assert body(await start(harness, "compute", ttl=10**12))["task"]["ttl"] == 3_600_000


@asynchronous
async def test_a_tool_error_completes_and_a_protocol_error_fails_with_that_error() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner)
    tool_error = body(await start(harness, "tool_error"))["task"]["taskId"]
    assert body(await method(harness, "tasks/result", tool_error))["isError"] is True
    failed = body(await start(harness, "protocol_error"))["task"]["taskId"]
    event = await method(harness, "tasks/result", failed)
    assert isinstance(event, ErrorReceived)
    assert (event.error.code, event.error.message) == (jsonrpc.INTERNAL_ERROR, "the job broke")
    assert body(await method(harness, "tasks/get", failed))["status"] == "failed"


@asynchronous
async def test_a_client_without_elicitation_fails_the_task_as_the_call_would_fail() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    event = await method(harness, "tasks/result", task_id)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert event.error.data == {"requiredCapabilities": {"elicitation": {}}}
    assert body(await method(harness, "tasks/get", task_id))["status"] == "failed"
    assert harness.asked == []


def accept(asked: RequestReceived) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": asked.params.message == "A?"})


@asynchronous
async def test_tasks_result_puts_the_questions_to_the_client_then_answers_the_call() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    harness.answer = accept
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await runner.run()  # the tool asks: the task waits for input
    assert body(await method(harness, "tasks/get", task_id))["status"] == "input_required"
    assert harness.asked == []  # nobody asked yet: a tasks/result does
    result = body(await method(harness, "tasks/result", task_id))
    assert result["content"] == [{"type": "text", "text": "{'ok': True},{'ok': False}"}]
    assert result["_meta"] == {types.RELATED_TASK_META_KEY: {"taskId": task_id}}
    assert [asked.method for asked in harness.asked] == ["elicitation/create"] * 2
    for asked in harness.asked:
        # "Nested requests MUST carry related-task" (2025-11-25 basic/utilities/tasks).
        assert asked.params.meta == {types.RELATED_TASK_META_KEY: {"taskId": task_id}}
    assert body(await method(harness, "tasks/get", task_id))["status"] == "completed"


@asynchronous
async def test_a_client_error_to_a_question_fails_the_task_with_that_error() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    harness.answer = lambda asked: types.Error(code=-32000, message="no user here")
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    event = await method(harness, "tasks/result", task_id)
    assert isinstance(event, ErrorReceived)
    assert (event.error.code, event.error.message) == (-32000, "no user here")
    assert len(harness.asked) == 1
    assert body(await method(harness, "tasks/get", task_id))["status"] == "failed"


@asynchronous
async def test_a_session_that_cannot_answer_is_refused_and_the_question_stays() -> None:
    # The task was created by a session with elicitation; the tasks/result comes from
    # one without (the same principal): -32021, and the task still waits for input.
    runner = StepRunner()
    harness, server, _ = await legacy(runner, caps=ASKING_CAPS)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await runner.run()
    other = Harness(server, client_caps=LEGACY_CAPS)
    await other.handshake("2025-11-25")
    event = await method(other, "tasks/result", task_id)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert body(await method(harness, "tasks/get", task_id))["status"] == "input_required"


class LoopRunner:
    """A `TaskRunner` on asyncio tasks, as the trio driver runs them in a task group."""

    def __init__(self) -> None:
        self.runs: dict[str, asyncio.Task[None]] = {}
        self.ended: dict[str, asyncio.Event] = {}

    def start(self, task_id: str, work: Callable[[], Awaitable[None]]) -> None:
        async def run() -> None:
            try:
                await work()
            finally:
                if self.runs.get(task_id) is current:
                    del self.runs[task_id]
                ended = self.ended.pop(task_id, None)
                if ended is not None:
                    ended.set()

        current = asyncio.ensure_future(run())
        self.runs[task_id] = current

    def cancel(self, task_id: str) -> None:
        run = self.runs.pop(task_id, None)
        if run is not None:
            run.cancel()

    async def wait(self, task_id: str) -> bool:
        if task_id not in self.runs:
            return False
        await self.ended.setdefault(task_id, asyncio.Event()).wait()
        return True


class GatedClient:
    """An `Outbound` whose client answers each question only when the test lets it."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.asked: list[RequestReceived] = []
        self.gate = asyncio.Event()

    async def send(self, data: bytes) -> None:
        self.harness.pair.to_client(data)

    async def request(self, request_id: types.RequestId, data: bytes) -> Any:
        [asked] = self.harness.pair.to_client(data)
        assert isinstance(asked, RequestReceived), asked
        self.asked.append(asked)
        await self.gate.wait()
        reply = self.harness.client.send_result(asked.request_id, accept(asked))
        [event] = self.harness.pair.to_server(reply)
        return event

    async def result(self, task_id: str) -> Any:
        harness = self.harness
        params = types.GetTaskRequestParams(task_id=task_id)
        _, data = harness.client.send_request("tasks/result", params)
        [event] = harness.pair.to_server(data)
        assert isinstance(event, RequestReceived), event
        reply = await harness.server.handle_request(harness.connection, event, self)
        assert reply is not None
        *_, final = harness.pair.to_client(reply)
        return final


async def settle() -> None:
    for _ in range(50):  # a count of loop turns, never a clock
        await asyncio.sleep(0)


@asynchronous
async def test_two_waiting_callers_one_asks_and_both_get_the_result() -> None:
    runner = LoopRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await settle()
    first, second = GatedClient(harness), GatedClient(harness)
    waiting = [asyncio.ensure_future(c.result(task_id)) for c in (first, second)]
    await settle()
    assert (len(first.asked), len(second.asked)) == (1, 0)  # one asks, one waits
    assert body(await method(harness, "tasks/get", task_id))["status"] == "input_required"
    first.gate.set()
    results = [body(event) for event in await asyncio.gather(*waiting)]
    assert results[0] == results[1]
    assert results[0]["content"][0]["text"] == "{'ok': True},{'ok': False}"
    assert (len(first.asked), len(second.asked)) == (2, 0)


@asynchronous
async def test_a_caller_cancelled_mid_question_leaves_it_to_the_next_caller() -> None:
    runner = LoopRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await settle()
    first, second = GatedClient(harness), GatedClient(harness)
    gone = asyncio.ensure_future(first.result(task_id))
    await settle()
    assert len(first.asked) == 1
    gone.cancel()  # the caller went away mid-question
    await settle()
    assert gone.cancelled()
    assert body(await method(harness, "tasks/get", task_id))["status"] == "input_required"
    second.gate.set()
    result = body(await second.result(task_id))
    assert result["content"][0]["text"] == "{'ok': True},{'ok': False}"
    # The question the first caller never got answered is put again.
    assert [a.params.message for a in second.asked] == ["A?", "B?"]


class BrokenClient(GatedClient):
    """A caller whose stream breaks when the server asks on it."""

    async def request(self, request_id: types.RequestId, data: bytes) -> Any:
        raise ConnectionError("the stream broke")


@asynchronous
async def test_a_broken_stream_ends_the_caller_and_leaves_the_questions() -> None:
    runner = LoopRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await settle()
    event = await BrokenClient(harness).result(task_id)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.INTERNAL_ERROR
    got = body(await method(harness, "tasks/get", task_id))
    assert got["status"] == "input_required"
    later = GatedClient(harness)
    later.gate.set()
    assert body(await later.result(task_id))["content"][0]["text"] == "{'ok': True},{'ok': False}"


@asynchronous
async def test_cancelling_the_task_mid_question_ends_the_waiting_caller() -> None:
    runner = LoopRunner()
    harness, _, _ = await legacy(runner, caps=ASKING_CAPS)
    task_id = body(await start(harness, "ask_two"))["task"]["taskId"]
    await settle()
    caller = GatedClient(harness)
    waiting = asyncio.ensure_future(caller.result(task_id))
    await settle()
    cancelled = body(await method(harness, "tasks/cancel", task_id))
    assert cancelled["status"] == "cancelled"
    event = await waiting
    assert isinstance(event, ErrorReceived)
    assert body(await method(harness, "tasks/get", task_id))["status"] == "cancelled"


@asynchronous
async def test_task_support_rules() -> None:
    harness, _, _ = await legacy(StepRunner())
    # "required" called plainly, and a tool without task support augmented: -32601.
    plain = await harness.call("tools/call", types.CallToolRequestParams(name="must_be_a_task"))
    assert isinstance(plain, ErrorReceived)
    assert plain.error.code == jsonrpc.METHOD_NOT_FOUND
    augmented = await start(harness, "plain")
    assert isinstance(augmented, ErrorReceived)
    assert augmented.error.code == jsonrpc.METHOD_NOT_FOUND
    # "optional" called plainly runs synchronously.
    result = await harness.result("tools/call", types.CallToolRequestParams(name="compute"))
    assert isinstance(result, types.CallToolResult)


@asynchronous
async def test_cancel_answers_the_cancelled_task_and_refuses_a_terminal_one() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner)
    task_id = body(await start(harness, "compute"))["task"]["taskId"]
    cancelled = body(await method(harness, "tasks/cancel", task_id))
    assert (cancelled["taskId"], cancelled["status"]) == (task_id, "cancelled")
    assert runner.cancelled == [task_id]
    again = await method(harness, "tasks/cancel", task_id)
    assert isinstance(again, ErrorReceived)
    assert again.error.code == jsonrpc.INVALID_PARAMS
    result = await method(harness, "tasks/result", task_id)
    assert isinstance(result, ErrorReceived)
    assert body(await method(harness, "tasks/get", task_id))["status"] == "cancelled"


@asynchronous
async def test_unknown_tasks_and_a_result_no_run_will_bring() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner)
    for name in ("tasks/get", "tasks/result", "tasks/cancel"):
        event = await method(harness, name, "nope")
        assert isinstance(event, ErrorReceived)
        assert event.error.code == jsonrpc.INVALID_PARAMS
    task_id = body(await start(harness, "compute"))["task"]["taskId"]
    runner.pending.clear()  # the run is lost (another runner's)
    lost = await method(harness, "tasks/result", task_id)
    assert isinstance(lost, ErrorReceived)
    assert lost.error.code == jsonrpc.INTERNAL_ERROR


@asynchronous
async def test_tasks_list_pages_the_principals_tasks_and_shows_anonymous_callers_none() -> None:
    runner = StepRunner()
    harness, _, _ = await legacy(runner, page_size=2)
    await start(harness, "compute")
    listed = await harness.result("tasks/list", types.PaginatedRequestParams())
    assert listed.tasks == []  # no authorization context: ids are the only secret
    ids: list[str] = []
    harness.principal = "alice"
    for _ in range(3):
        ids.append(body(await start(harness, "compute"))["task"]["taskId"])
    seen: list[str] = []
    cursor: Any = types.UNSET
    while True:
        page = await harness.result("tasks/list", types.PaginatedRequestParams(cursor=cursor))
        seen += [task.task_id for task in page.tasks]
        cursor = page.next_cursor
        if cursor is types.UNSET:
            break
    assert seen == ids
    bad = await harness.call("tasks/list", types.PaginatedRequestParams(cursor="garbage"))
    assert isinstance(bad, ErrorReceived)
    assert bad.error.code == jsonrpc.INVALID_PARAMS


@asynchronous
async def test_2026_discover_carries_no_core_tasks_capability() -> None:
    server, _ = task_server(StepRunner())
    harness = Harness(server)
    harness.go_modern()
    discovered = await harness.result("server/discover", types.RequestParams())
    assert discovered.capabilities.tasks is types.UNSET
    assert types.TASKS_EXTENSION in discovered.capabilities.extensions
