"""The 2026-07-28 tasks extension, server side (``io.modelcontextprotocol/tasks``, SEP-2663).

A tool registered with ``task="optional"`` or ``task="required"`` may run as a task: a
``tools/call`` from a client that declared the extension on that request is answered at
once with a `CreateTaskExtensionResult`, and the tool runs on in the background. The
client polls ``tasks/get`` (the status; the result, error or input requests inlined),
answers the tool's questions with ``tasks/update`` and gives up with ``tasks/cancel``.

The core still does no IO: the driver gives the server a `TaskRunner` (it starts and
cancels runs; trio's nursery in `transports.serve_http`) and a way to draw task ids;
the clock is the server's. Task state lives behind `TaskStore` (async, so that a store
shared by workers fits the same interface); `MemoryTaskStore` is the bounded in-memory
one. A deployment of several workers keeps them in Redis instead
(`transports.Deployment`), with a runner whose runs any worker cancels and awaits.

Input inside a task works like a 2026-07-28 multi round-trip request: the handler asks
(`Context.elicit`...), the task goes to ``input_required`` with the questions under the
handler's keys, ``tasks/update`` brings answers, and once every outstanding question is
answered the handler runs again from the start, its answers at hand.

The same tasks serve a 2025-11-25 session, whose core tasks (basic/utilities/tasks,
experimental) differ on the wire only: the call says ``task: {ttl?}`` and gets a
``CreateTaskResult`` with the task nested, ``tasks/result`` blocks until the task ends
and answers what the call would have (the driver's `TaskRunner.wait`), and there are
``tasks/list`` and a ``tasks/cancel`` answering with the task. The server advertises
``capabilities.tasks`` and each tool's ``execution.taskSupport`` there only when the
driver can run tasks.

A 2025-11-25 task asks for input on the same rounds: it goes to ``input_required`` with
its questions recorded, and a ``tasks/result`` waiting on it puts each question to the
client as a server-to-client request on its own response stream, with the related-task
``_meta`` ("The requestor SHOULD call tasks/result pre-emptively. Nested requests MUST
carry related-task", 2025-11-25 basic/utilities/tasks). The answers are recorded as
``tasks/update``'s would be and the run starts again. The asking is the task's run
while it lasts, so every other ``tasks/result`` waits on it through the driver's
`TaskRunner.wait`, and no question is put twice at once; if the asking caller goes away
(its request cancelled, its session closed) the unanswered questions stay outstanding
for the next ``tasks/result``.

Every new state of a task is saved through one place (`Tasks._save`), which also sends
it, as ``notifications/tasks`` with the full DetailedTask, to the 2026-07-28 listen
streams of the task's principal whose filter named it in ``taskIds`` (SEP-2663;
`mcpcore.server._task_streams`).
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from mcpcore import jsonrpc, types
from mcpcore.errors import LocalProtocolError, McpError
from mcpcore.events import ErrorReceived, RequestReceived, ResponseReceived
from mcpcore.server._context import Context, StartTask, TaskPhase
from mcpcore.server._errors import MissingCapabilityError
from mcpcore.server._input import InputRequired, Rounds
from mcpcore.server._task_streams import MAX_FOLLOWED_TASKS, TaskStreams
from mcpcore.server._tools import ToolRegistry
from mcpcore.versions import Era, era_of

__all__ = [
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_TASK_TTL_MS",
    "MAX_TASKS",
    "MAX_UPDATE_CONFLICTS",
    "MemoryTaskStore",
    "TaskRecord",
    "TaskRunner",
    "TaskStore",
    "Tasks",
]

#: How long a task stays readable after its creation, in milliseconds (``ttlMs``): an
#: hour covers a slow job and a client that polls lazily, and the store still empties
#: itself ("receivers MAY delete a task after its TTL", 2025-11-25 tasks; SEP-2663).
DEFAULT_TASK_TTL_MS: Final = 3_600_000
#: How often we suggest the client polls ``tasks/get`` (``pollIntervalMs``): twice a
#: second keeps a person waiting on a result under a second of lag at a cost of two
#: small requests a second per waiting client.
DEFAULT_POLL_INTERVAL_MS: Final = 500
#: Tasks one `MemoryTaskStore` keeps. Each holds its arguments and inlined result; past
#: this, finished tasks are dropped oldest first, and while every task is still running
#: new ones are refused (-32603) rather than let one client exhaust memory.
MAX_TASKS: Final = 1024
#: Times a ``tasks/update`` reads the task again after another save overtook its own
#: (answers arriving at once on several workers): each retry means another worker
#: saved meanwhile, so eight is far past any real race and still bounds the loop.
MAX_UPDATE_CONFLICTS: Final = 8
#: What a task's own Context answers if it ever reaches for a connection to ask on (it
#: never should: a task's questions become its input requests, `Context.request_input`).
_NO_CONNECTION: Final = "A task has no connection to ask the client on"
#: Why a ``tasks/result`` ends while the task still waits for input: its stream to the
#: client broke while it asked (the questions stay outstanding for the next caller).
_ASKING_FAILED: Final = "The task's questions could not be put to the client"
#: The server's ``capabilities.tasks`` in 2025-11-25 (2025-11-25 basic/utilities/tasks,
#: "Server Capabilities"): task-augmented tools/call, tasks/list and tasks/cancel.
LEGACY_CAPABILITY: Final = types.ServerTasksCapability(
    list={},
    cancel={},
    requests=types.ServerTaskRequestsCapability(tools=types.ServerTaskToolsCapability(call={})),
)
_REQUIRED_EXTENSION: Final = types.ClientCapabilities(extensions={types.TASKS_EXTENSION: {}})


class TaskRecord(msgspec.Struct, kw_only=True):
    """One task, as a store keeps it (a Struct: a shared store encodes it whole).

    Times are the server clock's seconds; ``answers`` are the raw input responses so
    far and ``input_requests`` the questions still outstanding; ``revision`` counts the
    saves (a ``tasks/update`` saves its answers only over the revision it read, so that
    two arriving on two workers at once don't lose one).
    """

    task_id: str
    principal: str | None
    params: types.CallToolRequestParams
    protocol_version: str
    client_capabilities: types.ClientCapabilities
    status: types.TaskStatus = "working"
    status_message: str | None = None
    created_at: float
    last_updated_at: float
    ttl_ms: int | None
    input_requests: dict[str, types.InputRequest] = msgspec.field(default_factory=dict)
    answers: dict[str, Any] = msgspec.field(default_factory=dict)
    handler_state: dict[str, Any] = msgspec.field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: types.Error | None = None
    revision: int = 0

    @property
    def terminal(self) -> bool:
        """Whether the task is over (completed, failed or cancelled)."""
        return self.status in types.TERMINAL_TASK_STATUSES


class TaskStore(Protocol):
    """Where tasks live: this process's memory, or Redis for a deployment's workers.

    A store shared by workers keeps a terminal status final against a concurrent
    save ("Terminal states are final", 2025-11-25 tasks): a cancel on one worker may
    race the run finishing on another; and it saves a record over a given revision only
    (compare-and-set), for answers that must not overwrite each other.
    """

    async def create(self, record: TaskRecord) -> bool:
        """Keep a new task durably; False when the store is full."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task ``task_id``, or None (unknown, or past its TTL)."""

    async def save(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        """Keep a task's new state, as revision ``record.revision + 1``.

        With ``expected``: only if the stored record is still at that revision; False
        (nothing saved, ``record`` as it was) if it moved on. True otherwise: saved, or
        the task is gone, or (a shared store) its stored terminal status was kept and
        ``record`` took the stored state.
        """

    async def owned_by(self, principal: str | None) -> list[TaskRecord]:
        """The live tasks of ``principal``, oldest first (2025-11-25 ``tasks/list``)."""


class MemoryTaskStore:
    """A `TaskStore` in this process's memory, bounded by `MAX_TASKS` and each task's TTL."""

    __slots__ = ("_clock", "_max_tasks", "_tasks")

    def __init__(self, clock: Callable[[], float], *, max_tasks: int = MAX_TASKS) -> None:
        self._clock = clock
        self._max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> bool:
        """Keep a new task; when full, drop expired then the oldest finished, or refuse."""
        if len(self._tasks) >= self._max_tasks and not self._make_room():
            return False
        self._tasks[record.task_id] = record
        return True

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task ``task_id``; one past its TTL is dropped and reads as unknown."""
        record = self._tasks.get(task_id)
        if record is not None and self._expired(record):
            del self._tasks[task_id]
            return None
        return record

    async def save(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        """Keep a task's new state (a task dropped meanwhile stays dropped).

        False when ``expected`` is given and the stored record's revision isn't it.
        """
        stored = self._tasks.get(record.task_id)
        if stored is None:
            return True
        if expected is not None and stored.revision != expected:
            return False
        record.revision = stored.revision + 1
        self._tasks[record.task_id] = record
        return True

    async def owned_by(self, principal: str | None) -> list[TaskRecord]:
        """The live tasks of ``principal``, in creation order."""
        return [
            r for r in self._tasks.values() if r.principal == principal and not self._expired(r)
        ]

    def _expired(self, record: TaskRecord) -> bool:
        ttl = record.ttl_ms
        return ttl is not None and self._clock() > record.created_at + ttl / 1000

    def _make_room(self) -> bool:
        for task_id in [t for t, r in self._tasks.items() if self._expired(r)]:
            del self._tasks[task_id]
        if len(self._tasks) < self._max_tasks:
            return True
        # The oldest finished task goes (insertion order is creation order).
        oldest = next((t for t, r in self._tasks.items() if r.terminal), None)
        if oldest is None:
            return False
        del self._tasks[oldest]
        return True


class TaskRunner(Protocol):
    """The driver's side of tasks: it runs the work in the background and cancels it."""

    def start(self, task_id: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` in the background, cancellable as ``task_id``."""

    def cancel(self, task_id: str) -> None:
        """Cancel the run of ``task_id``, if there is one (it may have ended)."""

    async def wait(self, task_id: str) -> bool:
        """Return once the run of ``task_id`` has ended; False at once if there is none.

        For 2025-11-25 ``tasks/result``, which "MUST block until a terminal status".
        """


def iso_8601(seconds: float) -> str:
    """``seconds`` since the epoch as an ISO 8601 UTC timestamp (``createdAt``)."""
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _status_fields(record: TaskRecord) -> dict[str, Any]:
    """A task's id, status and times, as both eras' tasks name them."""
    return {
        "task_id": record.task_id,
        "status": record.status,
        "status_message": UNSET if record.status_message is None else record.status_message,
        "created_at": iso_8601(record.created_at),
        "last_updated_at": iso_8601(record.last_updated_at),
    }


def declares_tasks(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether the client declared the tasks extension (on this request, in 2026-07-28)."""
    extensions = None if capabilities is None else capabilities.extensions
    return bool(extensions) and types.TASKS_EXTENSION in extensions  # type: ignore[operator]


class Tasks:
    """The tasks extension of one `Server`: creating, running and answering about tasks."""

    __slots__ = (
        "_asking",
        "_clock",
        "_new_id",
        "_report",
        "_runner",
        "_tools",
        "on_saved",
        "poll_interval_ms",
        "store",
        "streams",
        "ttl_ms",
    )

    def __init__(
        self,
        tools: ToolRegistry,
        store: TaskStore | None,
        *,
        ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        report: Callable[[BaseException, Context], None] | None = None,
    ) -> None:
        self._tools = tools
        self.store = store
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self._report = report
        self._runner: TaskRunner | None = None
        self._new_id: Callable[[], str] | None = None
        self._clock: Callable[[], float] | None = None
        # The 2025-11-25 tasks whose questions a tasks/result is putting to the client
        # now: at most one entry per task (so bounded by the store's MAX_TASKS).
        self._asking: dict[str, _Asking] = {}
        #: The listen streams that follow tasks (``notifications/tasks``).
        self.streams = TaskStreams()
        #: Told of every task state saved here, after this process's streams are: a
        #: deployment tells the other workers, whose streams may follow the task
        #: (`announce` there). None: this process's streams are all there are.
        self.on_saved: Callable[[TaskRecord], Awaitable[None]] | None = None

    def configure(
        self,
        *,
        clock: Callable[[], float] | None,
        runner: TaskRunner | None,
        new_id: Callable[[], str] | None,
    ) -> None:
        """Take the driver's clock (where there is none yet), runner and id source.

        A runner replaces the last one: it belongs to the driver's run (its task
        group), and a server served again gets a new one.
        """
        if clock is not None and self._clock is None:
            self._clock = clock
        if runner is not None:
            self._runner = runner
        if new_id is not None:
            self._new_id = new_id
        if self.store is None and self._clock is not None:
            self.store = MemoryTaskStore(self._clock)

    @property
    def ready(self) -> bool:
        """Whether tasks can run: the driver gave a runner, ids and a clock."""
        return None not in (self._runner, self._new_id, self._clock, self.store)

    # ------------------------------------------------------------------ tools/call

    async def call_tool(self, context: Context) -> Any:
        """A 2026-07-28 ``tools/call`` of a tool that may run as a task."""
        params: types.CallToolRequestParams = context.params
        support, gathers = self._tools.task_support(params.name)
        if not declares_tasks(context.client_capabilities):
            if support == "required":
                # "If (S) cannot serve without a task → -32021 with
                # requiredCapabilities.extensions" (SEP-2663 "Required Capabilities").
                raise MissingCapabilityError(_REQUIRED_EXTENSION)
            return await self._tools.call(context, params)  # "fall through to sync"
        if not self.ready:
            return await self._tools.call(context, params)  # no runner: sync (allowed)
        if gathers:
            context._task_phase = TaskPhase.GATHERING
            try:
                return await self._tools.call(context, params)
            except StartTask:
                pass
        return await self._create(context, params)

    async def _create(
        self, context: Context, params: types.CallToolRequestParams
    ) -> types.CreateTaskExtensionResult:
        record = await self._start(context, params, self.ttl_ms)
        return types.CreateTaskExtensionResult(
            task_id=record.task_id,
            status=record.status,
            created_at=iso_8601(record.created_at),
            last_updated_at=iso_8601(record.last_updated_at),
            ttl_ms=record.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
        )

    async def _start(
        self, context: Context, params: types.CallToolRequestParams, ttl_ms: int | None
    ) -> TaskRecord:
        """Create the task of a ``tools/call`` durably and start its run (both eras)."""
        store, new_id, clock, runner = self.store, self._new_id, self._clock, self._runner
        if store is None or new_id is None or clock is None or runner is None:
            raise RuntimeError("tasks are not configured")  # (callers checked `ready`)
        now = clock()
        rounds = context._rounds
        record = TaskRecord(
            task_id=new_id(),
            principal=context.principal,
            params=params,
            protocol_version=context.protocol_version or "",
            client_capabilities=context.client_capabilities,
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl_ms,
            answers={} if rounds is None else dict(rounds.answers),
            handler_state=dict(context.state),
        )
        # "MUST NOT be returned until the task is durably created" (SEP-2663).
        if not await store.create(record):
            raise McpError(jsonrpc.INTERNAL_ERROR, "Too many tasks")
        runner.start(record.task_id, lambda: self._run(record.task_id))
        return record

    # ------------------------------------------------------------------ the run

    async def _run(self, task_id: str) -> None:
        """Run (or run again, after input) the tool of ``task_id`` and record the outcome."""
        store = self.store
        record = None if store is None else await store.get(task_id)
        if store is None or record is None or record.terminal:
            return
        rounds = Rounds(record.answers, {}, record.handler_state, 0)
        context = _task_context(record, rounds)
        try:
            value = await self._tools.call(context, record.params)
        except InputRequired as need:
            self._ask(record, need.requests)
        except MissingCapabilityError as exc:
            # As the request would have been answered (-32021, requiredCapabilities).
            self._fail(record, _missing_error(exc.required))
        except McpError as exc:
            self._fail(record, types.Error(code=exc.code, message=exc.message))
        except Exception as exc:  # the tool crashed: a protocol-level failure
            if self._report is not None:
                self._report(exc, context)
            self._fail(record, types.Error(code=jsonrpc.INTERNAL_ERROR, message="Internal error"))
        else:
            self._finish(record, value)
        await self._save(record)

    def _ask(self, record: TaskRecord, requests: dict[str, types.InputRequest]) -> None:
        if record.terminal:
            return  # cancelled meanwhile: "the task stays cancelled"
        # "the receiver SHOULD move there when it needs input" (2025-11-25 tasks), and
        # the extension's input_required with inputRequests (SEP-2663).
        record.status = "input_required"
        record.input_requests = dict(requests)

    def _fail(self, record: TaskRecord, error: types.Error) -> None:
        if record.terminal:
            return
        # "failed with error (JSON-RPC error only)" (SEP-2663).
        record.status = "failed"
        record.error = error

    def _finish(self, record: TaskRecord, value: Any) -> None:
        if record.terminal:
            return
        if isinstance(value, types.InputRequiredResult):
            self._ask(record, dict(value.input_requests or {}))
            return
        # A tool's isError result is a completed task too (SEP-2663 "error semantics").
        record.status = "completed"
        record.result = msgspec.to_builtins(value)

    async def _save(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        """Keep a task's new state, and tell the listen streams that follow it.

        False, with nothing saved or told, when ``expected`` is given and the stored
        task's revision moved on meanwhile (`TaskStore.save`).
        """
        if self._clock is not None:
            record.last_updated_at = self._clock()
        if self.store is not None and not await self.store.save(record, expected=expected):
            return False
        if self.streams:
            # "notifications/tasks (full DetailedTask) arrive through
            # subscriptions/listen with filter taskIds" (SEP-2663).
            params = types.TaskNotificationParams(**self._detailed_fields(record))
            await self.streams.announce(record.principal, params)
        if self.on_saved is not None:
            await self.on_saved(record)
        return True

    def follows(self, task_id: str) -> bool:
        """Whether a listen stream here follows ``task_id``."""
        return self.streams.follows(task_id)

    async def announce(self, task_id: str) -> None:
        """Tell the streams here that follow ``task_id`` its state, as the store has it.

        For a change saved elsewhere (another worker of a deployment sharing the
        store); nothing is read unless a stream here follows the task.
        """
        if self.store is None or not self.follows(task_id):
            return
        record = await self.store.get(task_id)
        if record is not None:
            params = types.TaskNotificationParams(**self._detailed_fields(record))
            await self.streams.announce(record.principal, params)

    def _detailed_fields(self, record: TaskRecord) -> dict[str, Any]:
        """The fields of a DetailedTask (``tasks/get``, ``notifications/tasks``)."""
        return {
            **_status_fields(record),
            "ttl_ms": record.ttl_ms,
            "poll_interval_ms": self.poll_interval_ms,
            "input_requests": (
                dict(record.input_requests) if record.status == "input_required" else UNSET
            ),
            "result": UNSET if record.result is None else record.result,
            "error": UNSET if record.error is None else record.error,
        }

    async def followable(self, context: Context, task_ids: list[str]) -> list[str]:
        """The ids of a listen request's ``taskIds`` its stream may follow.

        Those of tasks the caller may read (as `get`: unknown ones and another
        principal's are left out of the acknowledgement), at most `MAX_FOLLOWED_TASKS`.
        Raises `MissingCapabilityError` when the request did not declare the extension:
        "Requesting this without the capability → -32021" (SEP-2663).
        """
        if not declares_tasks(context.client_capabilities):
            raise MissingCapabilityError(_REQUIRED_EXTENSION)
        store = self.store
        honoured: list[str] = []
        for task_id in dict.fromkeys(task_ids):  # (the order kept, duplicates dropped)
            if store is None or len(honoured) == MAX_FOLLOWED_TASKS:
                break
            record = await store.get(task_id)
            if record is not None and record.principal == context.principal:
                honoured.append(task_id)
        return honoured

    # ------------------------------------------------------------------ the methods

    async def get(self, context: Context) -> types.DetailedTaskResult:
        """``tasks/get``: the task, with what its status carries."""
        record = await self._record(context)
        return types.DetailedTaskResult(**self._detailed_fields(record))

    async def update(self, context: Context) -> types.EmptyResult:
        """``tasks/update``: answers to outstanding questions; an empty ack.

        "SHOULD ignore responses to keys that are not outstanding, and MAY accept
        partial sets" (SEP-2663): the task stays ``input_required`` until every question
        is answered, then runs again.
        """
        record = await self._record(context)
        params: types.UpdateTaskRequestParams = context.params
        if await self._take_answers(record, params.input_responses):
            self._restart(record.task_id)
        return types.EmptyResult()

    async def _take_answers(self, record: TaskRecord, responses: dict[str, Any]) -> bool:
        """Record answers to outstanding questions; True when the run must start again.

        Saved over the revision read: answers arriving at once on two workers of a
        deployment are merged (the one that lost reads the task again and adds its
        own), and only the save that answers the last question restarts the run.
        """
        for _ in range(MAX_UPDATE_CONFLICTS):
            read_at = record.revision
            for key, response in responses.items():
                if key in record.input_requests:
                    del record.input_requests[key]
                    record.answers[key] = response
            complete = record.status == "input_required" and not record.input_requests
            if complete:
                record.status = "working"
            if await self._save(record, expected=read_at):
                return complete
            fresh = None if self.store is None else await self.store.get(record.task_id)
            if fresh is None or fresh.terminal:
                return False  # (dropped, or ended, meanwhile: nothing to answer)
            record = fresh
        raise McpError(jsonrpc.INTERNAL_ERROR, "The task changed too often to take the answers")

    def _restart(self, task_id: str) -> None:
        if self._runner is not None:
            self._runner.start(task_id, lambda: self._run(task_id))

    async def cancel(self, context: Context) -> types.EmptyResult:
        """``tasks/cancel``: an empty ack, idempotent on a finished task.

        The task is cancelled before we answer and stays so (2025-11-25 tasks: "MUST
        set cancelled before responding"); its run is cancelled through the driver.
        """
        record = await self._record(context)
        if not record.terminal:
            record.status = "cancelled"
            record.input_requests = {}
            await self._save(record)
            if self._runner is not None:
                self._runner.cancel(record.task_id)
        return types.EmptyResult()

    # ------------------------------------------------------------------ 2025-11-25
    #
    # The experimental core tasks of 2025-11-25 (basic/utilities/tasks) on the same
    # records and runs: the request says ``task: {ttl?}``, the answer nests a ``Task``,
    # ``tasks/result`` blocks for what the call would have answered, and there are
    # ``tasks/list`` and a ``tasks/cancel`` answering with the task.

    async def call_tool_legacy(self, context: Context) -> Any:
        """A 2025-11-25 ``tools/call`` on a server that runs tasks (`ready`)."""
        params: types.CallToolRequestParams = context.params
        support, _ = self._tools.task_support(params.name)
        if params.task is UNSET:
            if support == "required":
                # taskSupport "required": "(S) MUST return -32601" to a plain call
                # (2025-11-25 basic/utilities/tasks, "Tool-Level Negotiation").
                raise McpError(jsonrpc.METHOD_NOT_FOUND, f"Tool {params.name} runs only as a task")
            return await self._tools.call(context, params)
        if support is None:
            # taskSupport absent or "forbidden": "(S) SHOULD return -32601" (ibid.).
            raise McpError(jsonrpc.METHOD_NOT_FOUND, f"Tool {params.name} can't run as a task")
        record = await self._start(context, params, self._legacy_ttl(params.task.ttl))
        # "MUST return CreateTaskResult ... as soon as possible" (2025-11-25 tasks).
        return types.CreateTaskResult(task=self._task(record))

    def _legacy_ttl(self, requested: int | UnsetType) -> int | None:
        # "Receivers MAY override the requested ttl" (2025-11-25 tasks): ours caps it.
        if requested is UNSET or requested < 0:
            return self.ttl_ms
        return requested if self.ttl_ms is None else min(requested, self.ttl_ms)

    def _task(self, record: TaskRecord) -> types.Task:
        return types.Task(**self._task_fields(record))

    def _task_fields(self, record: TaskRecord) -> dict[str, Any]:
        # (2025-11-25 names them ttl and pollInterval, the extension ttlMs and pollIntervalMs)
        return {
            **_status_fields(record),
            "ttl": record.ttl_ms,
            "poll_interval": self.poll_interval_ms,
        }

    async def get_legacy(self, context: Context) -> types.GetTaskResult:
        """2025-11-25 ``tasks/get``: the task ("Result & Task")."""
        return types.GetTaskResult(**self._task_fields(await self._record(context)))

    async def result(self, context: Context) -> dict[str, Any]:
        """2025-11-25 ``tasks/result``: what the call would have answered, once it has.

        "MUST block until a terminal status" and answer "exactly what the underlying
        request would have returned", the result or the JSON-RPC error, with the
        related-task ``_meta`` (2025-11-25 basic/utilities/tasks).
        """
        record = await self._record(context)
        while not record.terminal:
            asking = self._claim_questions(record, context)
            try:
                running = self._runner is not None and await self._runner.wait(record.task_id)
            finally:
                if asking is not None:
                    self._let_go(asking)
            if asking is not None and asking.failed:
                raise McpError(jsonrpc.INTERNAL_ERROR, _ASKING_FAILED)
            record = await self._record(context)
            if not running and not record.terminal:
                # No run will end it (a server served again, a task of another worker).
                raise McpError(jsonrpc.INTERNAL_ERROR, "The task is not running here")
        if record.result is not None:
            related = {types.RELATED_TASK_META_KEY: {"taskId": record.task_id}}
            return {**record.result, "_meta": {**record.result.get("_meta", {}), **related}}
        if record.error is not None:
            error = record.error
            raise McpError(error.code, error.message, None if error.data is UNSET else error.data)
        # Cancelled: a cancelled request has no answer of its own; this is ours.
        raise McpError(jsonrpc.INTERNAL_ERROR, "The task was cancelled")

    def _claim_questions(self, record: TaskRecord, context: Context) -> _Asking | None:
        """Start putting a 2025-11-25 task's questions to ``context``'s client, if nobody is.

        The asking runs as the task's run, so that every ``tasks/result`` (this one
        included) waits for it through `TaskRunner.wait` and only one caller asks.
        Raises `MissingCapabilityError` when this caller's session can't be asked.
        """
        runner = self._runner
        if (
            runner is None
            or record.status != "input_required"
            or era_of(record.protocol_version) is not Era.LEGACY
            or record.task_id in self._asking
        ):
            return None
        for request in record.input_requests.values():
            params = getattr(request, "params", None)
            # This session's capabilities, which may differ from the creating one's.
            required = context._connection.missing_capabilities(
                context.request_id, request.method, None if params is UNSET else params
            )
            if required is not None:
                raise MissingCapabilityError(required)
        asking = _Asking(record.task_id, context)
        self._asking[record.task_id] = asking
        runner.start(record.task_id, lambda: self._ask_client(asking))
        return asking

    def _let_go(self, asking: _Asking) -> None:
        """The caller that asks is done waiting: stop its questions if they still go on.

        Only a caller that stopped waiting early (cancelled, its session gone) finds its
        asking still on; what was not answered stays outstanding for the next caller.
        """
        if self._asking.get(asking.task_id) is asking:
            del self._asking[asking.task_id]
            if self._runner is not None:
                self._runner.cancel(asking.task_id)

    async def _ask_client(self, asking: _Asking) -> None:
        """The run of a task while a ``tasks/result`` puts its questions to the client."""
        try:
            complete = await self._put_questions(asking)
        except (ConnectionError, LocalProtocolError):
            # The caller's stream or session broke: the questions stay outstanding.
            asking.failed = True
            complete = False
        finally:
            if self._asking.get(asking.task_id) is asking:
                del self._asking[asking.task_id]
        if complete:
            self._restart(asking.task_id)

    async def _put_questions(self, asking: _Asking) -> bool:
        """Ask each outstanding question in turn; True once all are answered."""
        task_id, context = asking.task_id, asking.context
        while True:
            record = None if self.store is None else await self.store.get(task_id)
            if record is None or record.status != "input_required":
                return False  # cancelled, or expired, meanwhile
            if not record.input_requests:
                return await self._take_answers(record, {})
            key, request = next(iter(record.input_requests.items()))
            event = await _put_question(context, task_id, request)
            # Read again: the task may have been cancelled while the client answered.
            record = None if self.store is None else await self.store.get(task_id)
            if record is None or record.status != "input_required":
                return False
            if isinstance(event, ResponseReceived):
                if await self._take_answers(record, {key: msgspec.to_builtins(event.result)}):
                    return True
                continue
            # The client refused the question: the task fails as the tool's call
            # would have (the error ends the request that asked, 2025-11-25).
            self._fail(record, _client_error(event))
            await self._save(record)
            return False

    async def list_legacy(self, context: Context) -> list[types.Task]:
        """2025-11-25 ``tasks/list``: the caller's tasks (the server pages them).

        Without an authorization context the task id is the only secret ("such
        receivers SHOULD NOT declare tasks.list", 2025-11-25 tasks): an anonymous
        caller is shown none.
        """
        if self.store is None or context.principal is None:
            return []
        return [self._task(record) for record in await self.store.owned_by(context.principal)]

    async def cancel_legacy(self, context: Context) -> types.CancelTaskResult:
        """2025-11-25 ``tasks/cancel``: the task, cancelled before we answer."""
        record = await self._record(context)
        if record.terminal:
            # "Cancelling a task in a terminal status → -32602" (2025-11-25 tasks).
            raise McpError(jsonrpc.INVALID_PARAMS, f"Cannot cancel a {record.status} task")
        await self.cancel(context)
        return types.CancelTaskResult(**self._task_fields(await self._record(context)))

    async def _record(self, context: Context) -> TaskRecord:
        """The task a tasks/* request names, or the error answering it."""
        if context.era is Era.MODERN and not declares_tasks(context.client_capabilities):
            # "MUST reject tasks/get, tasks/update and tasks/cancel with
            # MissingRequiredClientCapability" when not negotiated (SEP-2663).
            raise MissingCapabilityError(_REQUIRED_EXTENSION)
        task_id: str = context.params.task_id
        record = None if self.store is None else await self.store.get(task_id)
        # Bound to who created it: another principal's task is as good as unknown
        # ("tasks MUST be bound to" the authorization context, 2025-11-25 tasks).
        if record is None or record.principal != context.principal:
            raise McpError(jsonrpc.INVALID_PARAMS, f"Unknown task: {task_id}")
        return record


class _Asking:
    """A ``tasks/result`` putting a 2025-11-25 task's questions to its client."""

    __slots__ = ("context", "failed", "task_id")

    def __init__(self, task_id: str, context: Context) -> None:
        self.task_id = task_id
        self.context = context
        self.failed = False


async def _put_question(
    context: Context, task_id: str, request: types.InputRequest
) -> ResponseReceived | ErrorReceived | Any:
    """Send one question on ``context``'s stream, with related-task, and await its answer."""
    params = getattr(request, "params", UNSET)
    if params is UNSET:
        params = types.RequestParams()
    meta = {} if params.meta is UNSET else dict(params.meta)
    # "Nested requests MUST carry related-task _meta" (2025-11-25 basic/utilities/tasks).
    meta[types.RELATED_TASK_META_KEY] = {"taskId": task_id}
    params = msgspec.structs.replace(params, meta=meta)
    request_id, data = context._connection.send_request(request.method, params)
    return await context._outbound.request(request_id, data)


def _client_error(event: Any) -> types.Error:
    if isinstance(event, ErrorReceived):
        error = event.error
        return types.Error(code=error.code, message=error.message, data=error.data)
    return types.Error(code=jsonrpc.INTERNAL_ERROR, message="The client's answer could not be used")


def _missing_error(required: types.ClientCapabilities) -> types.Error:
    # As `Connection.send_missing_capabilities` answers a request (2026-07-28 basic).
    message = "The request needs a client capability it did not declare"
    data = {"requiredCapabilities": msgspec.to_builtins(required)}
    return types.Error(code=jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, message=message, data=data)


class _NoOutbound:
    """A task's outbound: nothing goes to the client outside its requests."""

    async def send(self, data: bytes) -> None:
        return None

    async def request(self, request_id: types.RequestId, data: bytes) -> Any:
        raise McpError(jsonrpc.INTERNAL_ERROR, _NO_CONNECTION)


def _task_context(record: TaskRecord, rounds: Rounds) -> Context:
    event = RequestReceived(
        request_id=record.task_id,
        method="tools/call",
        params=record.params,
        protocol_version=record.protocol_version,
        client_capabilities=record.client_capabilities,
    )
    # No connection: the request that started the task is answered, and a running
    # task's Context never reaches for one (TaskPhase.RUNNING).
    context = Context(None, _NoOutbound(), event, principal=record.principal, rounds=rounds)  # type: ignore[arg-type]
    context._task_phase = TaskPhase.RUNNING
    return context
