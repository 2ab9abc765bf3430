"""The 2026-07-28 tasks extension on the sans-IO `Server` (SEP-2663; CHECKLIST §13.2).

A `StepRunner` plays the driver's `TaskRunner`: it keeps each task's work until the
test runs it, so every state a client can observe between two steps is checked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from mcpcore import (
    ErrorReceived,
    InvalidMessage,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore.server import (
    MAX_TASKS,
    Context,
    McpError,
    MemoryTaskStore,
    Server,
    TaskRecord,
    ToolError,
)
from tests.core.server_harness import Harness
from tests.core.test_server_tools import asynchronous

KEY = b"t" * 32
TASKS: dict[str, dict[str, Any]] = {types.TASKS_EXTENSION: {}}
DECLARING = types.ClientCapabilities(extensions=TASKS, elicitation=types.ElicitationCapability())
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class StepRunner:
    """A `TaskRunner` that runs nothing until told."""

    def __init__(self) -> None:
        self.pending: dict[str, Callable[[], Awaitable[None]]] = {}
        self.cancelled: list[str] = []

    def start(self, task_id: str, work: Callable[[], Awaitable[None]]) -> None:
        self.pending[task_id] = work

    def cancel(self, task_id: str) -> None:
        self.pending.pop(task_id, None)
        self.cancelled.append(task_id)

    async def wait(self, task_id: str) -> bool:
        work = self.pending.pop(task_id, None)
        if work is None:
            return False
        await work()
        return True

    async def run(self) -> None:
        while self.pending:
            _, work = self.pending.popitem()
            await work()


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def task_server(
    runner: StepRunner, clock: Clock | None = None, **options: Any
) -> tuple[Server, list[BaseException]]:
    reported: list[BaseException] = []
    server = Server(
        "tasks",
        "1.0",
        secret=KEY,
        clock=clock or Clock(),
        on_error=lambda exc, ctx: reported.append(exc),
        **options,
    )
    ids = iter(f"task-{n}" for n in range(10_000))
    server.configure(task_runner=runner, new_task_id=lambda: next(ids))

    @server.tool()
    def plain() -> str:
        return "plain"

    @server.tool(task="optional")
    def compute(label: str = "x") -> str:
        return f"computed {label}"

    @server.tool(task="required")
    def must_be_a_task() -> str:
        return "done"

    @server.tool(task="optional")
    def tool_error() -> str:
        raise ToolError("it went wrong")

    @server.tool(task="optional")
    def protocol_error() -> str:
        raise McpError(jsonrpc.INTERNAL_ERROR, "the job broke")

    @server.tool(task="optional")
    def crash() -> str:
        raise RuntimeError("secret internals")

    @server.tool(task="optional")
    async def ask_two(ctx: Context) -> str:
        def question(text: str) -> types.ElicitRequest:
            params = types.ElicitRequestFormParams(message=text, requested_schema=FORM)
            return types.ElicitRequest(params=params)

        answers = await ctx.request_input({"a": question("A?"), "b": question("B?")})
        return ",".join(str(answers[k].content) for k in sorted(answers))

    @server.tool(task="required", gather_input_first=True)
    async def gather(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", FORM, key="name")
        await ctx.start_task()
        return f"task saw {answer.content} in_task={ctx.in_task}"

    return server, reported


def modern(server: Server, caps: types.ClientCapabilities | None = DECLARING) -> Harness:
    harness = Harness(server, client_caps=caps)
    harness.go_modern()
    return harness


async def call(harness: Harness, name: str, **arguments: Any) -> Any:
    params = types.CallToolRequestParams(name=name, arguments=arguments)
    return await harness.call("tools/call", params)


async def get(harness: Harness, task_id: str) -> Any:
    return await harness.call("tasks/get", types.GetTaskRequestParams(task_id=task_id))


async def detailed(harness: Harness, task_id: str) -> types.DetailedTaskResult:
    event = await get(harness, task_id)
    assert isinstance(event, ResponseReceived), event
    assert isinstance(event.result, types.DetailedTaskResult)
    return event.result


async def created(harness: Harness, name: str, **arguments: Any) -> str:
    event = await call(harness, name, **arguments)
    assert isinstance(event, ResponseReceived), event
    assert isinstance(event.result, types.CreateTaskExtensionResult), event.result
    return event.result.task_id


def wire(event: Any) -> dict[str, Any]:
    """The result as sent, without the ``_meta`` every 2026-07-28 result carries."""
    assert isinstance(event, ResponseReceived), event
    body: dict[str, Any] = msgspec.to_builtins(event.result)
    body.pop("_meta", None)
    return body


# -- advertising and negotiation ------------------------------------------------------


def test_the_extension_is_advertised_only_with_a_task_tool() -> None:
    server, _ = task_server(StepRunner())
    extensions = server.capabilities.extensions
    assert extensions == {types.TASKS_EXTENSION: {}}
    assert Server("none", "1").capabilities.extensions is msgspec.UNSET


@asynchronous
async def test_without_the_extension_an_optional_tool_answers_synchronously() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server, caps=types.ClientCapabilities())
    event = await call(harness, "compute", label="sync")
    assert isinstance(event, ResponseReceived)
    assert isinstance(event.result, types.CallToolResult)
    assert wire(event)["content"][0]["text"] == "computed sync"
    assert not runner.pending


@asynchronous
async def test_a_required_task_tool_refuses_a_client_without_the_extension() -> None:
    server, _ = task_server(StepRunner())
    harness = modern(server, caps=types.ClientCapabilities())
    event = await call(harness, "must_be_a_task")
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    data = msgspec.to_builtins(event.error.data)
    assert data["requiredCapabilities"]["extensions"] == {types.TASKS_EXTENSION: {}}


@asynchronous
@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_task_methods_need_the_extension_on_the_request(method: str) -> None:
    server, _ = task_server(StepRunner())
    harness = modern(server, caps=types.ClientCapabilities())
    params: Any = (
        types.UpdateTaskRequestParams(task_id="x", input_responses={})
        if method == "tasks/update"
        else types.GetTaskRequestParams(task_id="x")
    )
    event = await harness.call(method, params)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY


@asynchronous
async def test_a_server_without_task_tools_does_not_know_the_methods() -> None:
    server = Server("plain", "1", secret=KEY, clock=Clock())
    server.tools.add(lambda: "ok", name="plain")
    event = await get(modern(server), "x")
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.METHOD_NOT_FOUND


@asynchronous
@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_tasks_result_and_tasks_list_are_gone_in_2026(method: str) -> None:
    server, _ = task_server(StepRunner())
    harness = modern(server)
    envelope = harness.client._request_envelope("2026-07-28")
    data = jsonrpc.encode_request(99, method, {"taskId": "x", "_meta": envelope})
    replies: list[bytes | None] = []
    for event in harness.connection.receive(data):  # (raw: no client waits for id 99)
        if isinstance(event, RequestReceived):
            replies.append(await server.handle_request(harness.connection, event, harness))
        else:
            assert isinstance(event, InvalidMessage), event
            replies.append(event.reply)
    [reply] = replies
    assert reply is not None
    assert msgspec.json.decode(reply)["error"]["code"] == jsonrpc.METHOD_NOT_FOUND


@asynchronous
async def test_a_legacy_session_gets_the_core_tasks_not_the_extension() -> None:
    # (2025-11-25 core tasks: tests/core/test_server_legacy_tasks.py.)
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = Harness(server, client_caps=DECLARING)
    init = await harness.handshake()
    assert init.capabilities.tasks is not types.UNSET
    event = await harness.call("tools/call", types.CallToolRequestParams(name="must_be_a_task"))
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.METHOD_NOT_FOUND  # "required": augment, or -32601


# -- the lifecycle -------------------------------------------------------------------


@asynchronous
async def test_a_task_is_created_flat_then_completes_with_its_result_inlined() -> None:
    runner = StepRunner()
    clock = Clock()
    server, _ = task_server(runner, clock)
    harness = modern(server)
    event = await call(harness, "compute", label="later")
    body = wire(event)
    assert body["resultType"] == "task"
    assert body["taskId"] == "task-0"
    assert body["status"] == "working"
    assert body["createdAt"] == body["lastUpdatedAt"] == "2027-01-15T08:00:00.000Z"
    assert isinstance(body["ttlMs"], int)
    assert isinstance(body["pollIntervalMs"], int)
    assert not {"task", "result", "error", "inputRequests", "requestState", "ttl"} & set(body)
    # Durable before the answer: tasks/get resolves at once.
    working = await detailed(harness, "task-0")
    assert working.status == "working"
    assert working.result is msgspec.UNSET
    clock.now += 2
    await runner.run()
    done = await detailed(harness, "task-0")
    assert done.status == "completed"
    assert done.result == {"content": [{"type": "text", "text": "computed later"}]}
    assert done.last_updated_at == "2027-01-15T08:00:02.000Z"
    assert wire(await get(harness, "task-0"))["resultType"] == "complete"


@asynchronous
async def test_a_tool_error_completes_and_a_protocol_error_fails() -> None:
    runner = StepRunner()
    server, reported = task_server(runner)
    harness = modern(server)
    tool = await created(harness, "tool_error")
    protocol = await created(harness, "protocol_error")
    crashed = await created(harness, "crash")
    await runner.run()
    completed = await detailed(harness, tool)
    assert completed.status == "completed"
    assert completed.result["isError"] is True  # type: ignore[index]
    failed = await detailed(harness, protocol)
    assert failed.status == "failed"
    assert failed.result is msgspec.UNSET
    assert failed.error == types.Error(code=jsonrpc.INTERNAL_ERROR, message="the job broke")
    broken = await detailed(harness, crashed)
    assert broken.status == "failed"
    assert broken.error == types.Error(code=jsonrpc.INTERNAL_ERROR, message="Internal error")
    assert [str(exc) for exc in reported] == ["secret internals"]


@asynchronous
async def test_cancel_is_an_empty_ack_that_settles_cancelled_and_stays_so() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server)
    task_id = await created(harness, "compute")
    event = await harness.call("tasks/cancel", types.CancelTaskRequestParams(task_id=task_id))
    assert wire(event) == {"resultType": "complete"}
    assert runner.cancelled == [task_id]
    assert not runner.pending
    assert (await detailed(harness, task_id)).status == "cancelled"
    again = await harness.call("tasks/cancel", types.CancelTaskRequestParams(task_id=task_id))
    assert wire(again) == {"resultType": "complete"}  # idempotent on a terminal task
    assert runner.cancelled == [task_id]


@asynchronous
async def test_a_run_that_ends_after_cancel_leaves_the_task_cancelled() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server)
    task_id = await created(harness, "compute")
    work = runner.pending[task_id]
    await harness.call("tasks/cancel", types.CancelTaskRequestParams(task_id=task_id))
    await work()  # the run got as far as finishing anyway
    assert (await detailed(harness, task_id)).status == "cancelled"


@asynchronous
@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_an_unknown_task_is_invalid_params(method: str) -> None:
    server, _ = task_server(StepRunner())
    params: Any = (
        types.UpdateTaskRequestParams(task_id="nope", input_responses={})
        if method == "tasks/update"
        else types.GetTaskRequestParams(task_id="nope")
    )
    event = await modern(server).call(method, params)
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.INVALID_PARAMS


@asynchronous
async def test_a_task_is_bound_to_the_principal_that_created_it() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server)
    _, data = harness.client.send_request("tools/call", types.CallToolRequestParams(name="compute"))
    [event] = harness.pair.to_server(data)
    assert isinstance(event, RequestReceived)
    reply = await server.handle_request(harness.connection, event, harness, principal="alice")
    assert reply is not None
    [answer] = harness.pair.to_client(reply)
    assert isinstance(answer, ResponseReceived)
    task_id = answer.result.task_id
    stranger = await get(harness, task_id)  # no principal: not alice
    assert isinstance(stranger, ErrorReceived)
    assert stranger.error.code == jsonrpc.INVALID_PARAMS


# -- input inside a task ----------------------------------------------------------------


@asynchronous
async def test_input_inside_a_task_is_asked_answered_in_parts_and_resumed() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server)
    task_id = await created(harness, "ask_two")
    await runner.run()
    waiting = await detailed(harness, task_id)
    assert waiting.status == "input_required"
    assert sorted(waiting.input_requests or {}) == ["a", "b"]
    accept = {"action": "accept", "content": {"ok": True}}

    async def update(responses: dict[str, Any]) -> Any:
        params = types.UpdateTaskRequestParams(task_id=task_id, input_responses=responses)
        return await harness.call("tasks/update", params)

    ack = await update({"a": accept, "unknown": {"ignored": True}})
    assert wire(ack) == {"resultType": "complete"}
    partial = await detailed(harness, task_id)
    assert partial.status == "input_required"
    assert list(partial.input_requests or {}) == ["b"]
    assert not runner.pending  # nothing runs until every question is answered
    await update({"b": {"action": "accept", "content": {"ok": False}}})
    assert (await detailed(harness, task_id)).status == "working"
    await runner.run()
    done = await detailed(harness, task_id)
    assert done.status == "completed"
    assert done.result["content"][0]["text"] == "{'ok': True},{'ok': False}"  # type: ignore[index]


class SharedStore:
    """A store whose reads are copies, as a store shared by workers (Redis) gives them.

    ``overtake`` runs once, inside the first save made over a revision, before it
    lands: another worker's save, coming first.
    """

    def __init__(self, clock: Clock) -> None:
        self.inner = MemoryTaskStore(clock)
        self.overtake: Callable[[], Awaitable[None]] | None = None

    async def create(self, record: TaskRecord) -> bool:
        return await self.inner.create(copy(record))

    async def get(self, task_id: str) -> TaskRecord | None:
        record = await self.inner.get(task_id)
        return None if record is None else copy(record)

    async def save(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        overtake, self.overtake = self.overtake, None
        if expected is not None and overtake is not None:
            await overtake()
        saved = copy(record)
        done = await self.inner.save(saved, expected=expected)
        record.revision = saved.revision
        return done

    async def owned_by(self, principal: str | None) -> list[TaskRecord]:
        return [copy(record) for record in await self.inner.owned_by(principal)]


def copy(record: TaskRecord) -> TaskRecord:
    return msgspec.convert(msgspec.to_builtins(record), TaskRecord)


@asynchronous
async def test_answers_saved_at_once_elsewhere_are_merged_and_the_run_starts_once() -> None:
    runner, clock = StepRunner(), Clock()
    store = SharedStore(clock)
    server, _ = task_server(runner, clock, task_store=store)
    harness = modern(server)
    task_id = await created(harness, "ask_two")
    await runner.run()
    accept = {"action": "accept", "content": {"ok": True}}

    async def other_worker_answers_b() -> None:
        record = await store.get(task_id)
        assert record is not None
        del record.input_requests["b"]
        record.answers["b"] = {"action": "accept", "content": {"ok": False}}
        assert await store.save(record, expected=record.revision)

    store.overtake = other_worker_answers_b
    params = types.UpdateTaskRequestParams(task_id=task_id, input_responses={"a": accept})
    await harness.call("tasks/update", params)
    # The update's first save lost to the other's; it read the task again, added its
    # answer to the other's, and, the last question answered, started the run: once.
    assert list(runner.pending) == [task_id]
    await runner.run()
    done = await detailed(harness, task_id)
    assert done.status == "completed"
    assert done.result["content"][0]["text"] == "{'ok': True},{'ok': False}"  # type: ignore[index]
    # The same answer arriving again (a retried update) is not outstanding: ignored.
    await harness.call("tasks/update", params)
    assert not runner.pending


@asynchronous
async def test_a_tool_gathers_input_within_the_request_then_becomes_a_task() -> None:
    runner = StepRunner()
    server, _ = task_server(runner)
    harness = modern(server)
    first = await call(harness, "gather")
    assert isinstance(first.result, types.InputRequiredResult)
    assert list(first.result.input_requests or {}) == ["name"]
    retry = types.CallToolRequestParams(
        name="gather",
        arguments={},
        input_responses={"name": {"action": "accept", "content": {"ok": True}}},
        request_state=first.result.request_state,
    )
    second = await harness.call("tools/call", retry)
    body = wire(second)
    assert body["resultType"] == "task"
    assert "requestState" not in body
    assert not runner.cancelled
    await runner.run()
    done = await detailed(harness, body["taskId"])
    assert done.result["content"][0]["text"] == "task saw {'ok': True} in_task=True"  # type: ignore[index]


@asynchronous
async def test_without_a_runner_task_tools_answer_synchronously() -> None:
    server = Server("norunner", "1", secret=KEY, clock=Clock())

    @server.tool(task="required")
    def job() -> str:
        return "ran inline"

    event = await call(modern(server), "job")
    assert isinstance(event.result, types.CallToolResult)


def test_task_options_are_checked_at_registration() -> None:
    server = Server("bad", "1")
    with pytest.raises(ValueError, match="task must be"):
        server.tools.add(lambda: "x", name="a", task="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="gather_input_first needs"):
        server.tools.add(lambda: "x", name="b", gather_input_first=True)
    server.tools.add(lambda: "x", name="c", task="optional")
    assert server.tools.has_tasks
    server.tools.remove("c")
    assert not server.tools.has_tasks


# -- the store ---------------------------------------------------------------------------


def record(task_id: str, clock: Clock, *, status: Any = "working", ttl_ms: int = 1000) -> Any:
    return TaskRecord(
        task_id=task_id,
        principal=None,
        params=types.CallToolRequestParams(name="t"),
        protocol_version="2026-07-28",
        client_capabilities=types.ClientCapabilities(),
        status=status,
        created_at=clock(),
        last_updated_at=clock(),
        ttl_ms=ttl_ms,
    )


@asynchronous
async def test_the_memory_store_forgets_a_task_after_its_ttl() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock)
    await store.create(record("a", clock, ttl_ms=1000))
    clock.now += 1.0
    assert await store.get("a") is not None  # "MUST NOT expire it earlier"
    clock.now += 0.001
    assert await store.get("a") is None
    assert len(store) == 0


@asynchronous
async def test_a_full_memory_store_drops_the_oldest_finished_task_or_refuses() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock, max_tasks=2)
    assert await store.create(record("done", clock, status="completed"))
    assert await store.create(record("running", clock))
    assert await store.create(record("new", clock))
    assert await store.get("done") is None
    assert len(store) == 2
    assert not await store.create(record("refused", clock))
    assert MAX_TASKS >= 1


@asynchronous
async def test_a_full_store_answers_the_call_with_an_internal_error() -> None:
    runner = StepRunner()
    server, _ = task_server(runner, task_store=MemoryTaskStore(Clock(), max_tasks=1))
    harness = modern(server)
    await created(harness, "compute")
    event = await call(harness, "compute")
    assert isinstance(event, ErrorReceived)
    assert event.error.code == jsonrpc.INTERNAL_ERROR
