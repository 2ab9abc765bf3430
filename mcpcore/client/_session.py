"""`ClientSession`: the client's protocol logic, in both eras, with no IO.

A session builds every request with its client `Connection`, lets a driver's
`Requester` carry it, and decides what the answer means: era detection, the
2026-07-28 multi round-trip loop, pagination, the result cache, the legacy server's
own requests. The awaitable client a user holds (timeouts, progress callbacks, listen
streams, a reader task) lives in the transports and wraps one of these.

    session = ClientSession(requester, client_info=info, callbacks=callbacks, clock=now)
    await session.connect()                         # auto: probe, else handshake
    async for tool in session.iter_tools():
        ...
    result = await session.call_tool("echo", {"text": "hi"})

The driver's side: every event ``session.connection.receive`` returns goes to the
request waiting for it (`ResponseReceived`, `ErrorReceived`, `InvalidResponse`), to
`handle_server_request` (a legacy `RequestReceived`; write the bytes it returns), or to
`handle_notification` (a `NotificationReceived`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Final, TypeVar, cast, get_args

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc
from mcpcore._capabilities import has_capability
from mcpcore._state import Phase
from mcpcore.client._connect import Connecting
from mcpcore.client._errors import InvalidServerResponseError, McpError, TooManyInputRoundsError
from mcpcore.client._mrtr import MAX_INPUT_ROUNDS, answer_input_requests, retry_params
from mcpcore.client._pagination import CursorTrail
from mcpcore.client._server_requests import answer_server_request
from mcpcore.errors import LocalProtocolError
from mcpcore.events import NotificationReceived, RequestReceived
from mcpcore.types import (
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequestParams,
    CancelTaskResult,
    ClientCapabilities,
    CompleteRequestParams,
    CompleteResult,
    CompletionArgument,
    CompletionContext,
    CreateTaskExtensionResult,
    CreateTaskResult,
    DetailedTaskResult,
    DiscoverResult,
    GetPromptRequestParams,
    GetPromptResult,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    GetTaskResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingLevel,
    PaginatedRequestParams,
    Prompt,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    RequestId,
    RequestParams,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    ResourceUpdatedNotificationParams,
    Result,
    SetLevelRequestParams,
    SubscribeRequestParams,
    SubscriptionFilter,
    SubscriptionsListenRequestParams,
    Task,
    TaskMetadata,
    Tool,
    UnsubscribeRequestParams,
    UpdateTaskRequestParams,
)
from mcpcore.versions import Era

__all__ = ["MAX_TOOLS_KNOWN", "ClientSession"]

#: Tools whose 2025-11-25 ``taskSupport`` a session remembers. A server listing more
#: is unusual; past it a tool counts as unknown, so a call to it is made plainly (pass
#: ``task=True`` to `transports.Client.call_tool` to augment it anyway).
MAX_TOOLS_KNOWN: Final = 4096

_LOG_LEVELS: Final = frozenset(get_args(LoggingLevel))
_Page = TypeVar(
    "_Page", ListToolsResult, ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult
)
_Final = TypeVar("_Final", CallToolResult, ReadResourceResult, GetPromptResult)
_Params = TypeVar(
    "_Params", CallToolRequestParams, ReadResourceRequestParams, GetPromptRequestParams
)


class ClientSession(Connecting):
    """One MCP client conversation's logic: the object a transport-level client wraps.

    Args:
        requester: The driver: it writes requests and returns the events that end them.
        client_info: Our name and version (``clientInfo``).
        callbacks: Elicitation, sampling and roots; the capabilities declared follow
            from which are set.
        clock: Seconds, monotonic, for the 2026-07-28 result cache; without a clock
            nothing is cached.
        connection: A client `Connection` to use (one with custom methods, say). It must
            be fresh and built with ``capabilities=callbacks.capabilities()`` and
            ``implementation=client_info``. By default the session makes its own.
        supported_versions: The revisions to speak (all known ones by default).
    """

    # ------------------------------------------------------------ discovery

    async def discover(
        self, *, fresh: bool = False, timeout: float | None = None
    ) -> DiscoverResult:
        """Call ``server/discover`` (2026-07-28), and take in what it says.

        Args:
            fresh: Ask the server even when a cached result is fresh.
            timeout: Seconds to wait.
        """
        cached = self._cached("server/discover", None, fresh)
        if isinstance(cached, DiscoverResult):
            return cached
        result = await self._call(
            "server/discover", RequestParams(meta=self._meta(None)), DiscoverResult, timeout
        )
        self._adopt_discovery(result)
        self._remember("server/discover", None, result)
        return result

    # --------------------------------------------------------------- lists

    async def list_tools(
        self,
        cursor: str | None = None,
        *,
        fresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ListToolsResult:
        """One page of ``tools/list``.

        Args:
            cursor: The ``nextCursor`` of the previous page; None for the first page
                (``""`` is a cursor like any other).
            fresh: Ask the server even when a cached page is fresh.
            meta: Extra ``_meta`` keys (a progress token, trace context).
            timeout: Seconds to wait.
        """
        return await self._page(
            "tools/list", cursor, ListToolsResult, fresh=fresh, meta=meta, timeout=timeout
        )

    async def list_resources(
        self,
        cursor: str | None = None,
        *,
        fresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ListResourcesResult:
        """One page of ``resources/list``; arguments as `list_tools`."""
        return await self._page(
            "resources/list", cursor, ListResourcesResult, fresh=fresh, meta=meta, timeout=timeout
        )

    async def list_resource_templates(
        self,
        cursor: str | None = None,
        *,
        fresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``; arguments as `list_tools`."""
        return await self._page(
            "resources/templates/list",
            cursor,
            ListResourceTemplatesResult,
            fresh=fresh,
            meta=meta,
            timeout=timeout,
        )

    async def list_prompts(
        self,
        cursor: str | None = None,
        *,
        fresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ListPromptsResult:
        """One page of ``prompts/list``; arguments as `list_tools`."""
        return await self._page(
            "prompts/list", cursor, ListPromptsResult, fresh=fresh, meta=meta, timeout=timeout
        )

    async def iter_tools(
        self, *, fresh: bool = False, timeout: float | None = None
    ) -> AsyncIterator[Tool]:
        """Every tool, page after page (see `iter_pages`)."""
        async for page in self.iter_pages("tools/list", fresh=fresh, timeout=timeout):
            for tool in page.tools:
                yield tool

    async def iter_resources(
        self, *, fresh: bool = False, timeout: float | None = None
    ) -> AsyncIterator[Resource]:
        """Every resource, page after page (see `iter_pages`)."""
        async for page in self.iter_pages("resources/list", fresh=fresh, timeout=timeout):
            for resource in page.resources:
                yield resource

    async def iter_resource_templates(
        self, *, fresh: bool = False, timeout: float | None = None
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page after page (see `iter_pages`)."""
        async for page in self.iter_pages("resources/templates/list", fresh=fresh, timeout=timeout):
            for template in page.resource_templates:
                yield template

    async def iter_prompts(
        self, *, fresh: bool = False, timeout: float | None = None
    ) -> AsyncIterator[Prompt]:
        """Every prompt, page after page (see `iter_pages`)."""
        async for page in self.iter_pages("prompts/list", fresh=fresh, timeout=timeout):
            for prompt in page.prompts:
                yield prompt

    async def iter_pages(
        self, method: str, *, fresh: bool = False, timeout: float | None = None
    ) -> AsyncIterator[Any]:
        """Every page of a list method, following ``nextCursor`` to the end.

        Each page is the method's result type (`ListToolsResult` for ``tools/list``...),
        checked as it arrives. A missing ``nextCursor`` ends the walk; ``""`` does not
        (2024-11-05 pagination). Each page is cached on its own. When the server calls a cursor
        invalid (-32602), the cached pages of the list are dropped ("(C) SHOULD discard
        its cached pages and restart", 2026-07-28) and the error is raised: start again.

        Args:
            method: ``tools/list``, ``resources/list``, ``resources/templates/list`` or
                ``prompts/list``.
            fresh: Ask the server for every page, even when a cached one is fresh.
            timeout: Seconds to wait for each page.

        Raises:
            PaginationError: A cursor came back a second time, or `MAX_PAGES` was reached.
        """
        result_type = _PAGE_TYPES.get(method)
        if result_type is None:
            raise ValueError(f"{method} is not a paginated list method")
        trail = CursorTrail(method)
        cursor: str | None = None
        while True:
            try:
                page = await self._page(method, cursor, result_type, fresh=fresh, timeout=timeout)
            except McpError as error:
                if cursor is not None and error.code == jsonrpc.INVALID_PARAMS and self._cache:
                    self._cache.invalidate_method(method)
                raise
            yield page
            cursor = trail.follow(page.next_cursor)
            if cursor is None:
                return

    async def _page(
        self,
        method: str,
        cursor: str | None,
        result_type: type[_Page],
        *,
        fresh: bool,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None,
    ) -> _Page:
        cached = self._cached(method, cursor, fresh)
        if isinstance(cached, result_type):
            return cached
        params = PaginatedRequestParams(
            cursor=UNSET if cursor is None else cursor, meta=self._meta(meta)
        )
        result = await self._call(method, params, result_type, timeout)
        self._remember(method, cursor, result)
        if isinstance(result, ListToolsResult):
            self._note_task_support(result.tools)
        return result

    def _note_task_support(self, tools: list[Tool]) -> None:
        known = self._task_support
        for tool in tools:
            execution = tool.execution
            support = UNSET if execution is UNSET else execution.task_support
            if support in ("optional", "required") and len(known) < MAX_TOOLS_KNOWN:
                known[tool.name] = support
            else:
                known.pop(tool.name, None)

    # ------------------------------------------ tools, resources, prompts

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> CallToolResult:
        """Call a tool; in 2026-07-28, answer what it asks for along the way (MRTR).

        A tool's own failure is a result with ``is_error`` set, not an exception.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            meta: Extra ``_meta`` keys (a progress token, trace context).
            timeout: Seconds to wait for each round.

        Raises:
            UnsupportedInputRequestError: The server asked for input we did not declare.
            TooManyInputRoundsError: It kept asking past `MAX_INPUT_ROUNDS`.
            InvalidServerResponseError: Among others, a task, when the client declared
                the tasks extension (`start_tool` takes tasks).
        """
        params = CallToolRequestParams(
            name=name,
            arguments=UNSET if arguments is None else dict(arguments),
            meta=self._meta(meta),
        )
        # The first try here, not in `_with_input`: most calls end with it (one coroutine
        # less per call).
        first = await self._exchange("tools/call", params, timeout)
        if type(first) is CallToolResult:
            return first
        result, _ = await self._with_input("tools/call", params, CallToolResult, timeout, first)
        return result

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> CallToolResult | CreateTaskExtensionResult:
        """Call a tool that may run as a task (2026-07-28 tasks extension).

        As `call_tool`, but a server may answer a client that declared the extension
        (``ClientCallbacks(tasks=True)``) with a task, "the server alone decides"
        (SEP-2663): then follow it with `get_task`, `update_task` and `cancel_task`.
        """
        params = CallToolRequestParams(
            name=name,
            arguments=UNSET if arguments is None else dict(arguments),
            meta=self._meta(meta),
        )
        # (typed as the complete result: with accept_task, a task may come back instead)
        result: Any
        result, _ = await self._with_input(
            "tools/call", params, CallToolResult, timeout, accept_task=True
        )
        return result  # type: ignore[no-any-return]

    async def tool_task_support(self, name: str, *, timeout: float | None = None) -> str | None:
        """A 2025-11-25 tool's ``execution.taskSupport``: "optional", "required" or None.

        None also when the server does not take task-augmented calls at all (no
        ``capabilities.tasks.requests.tools.call``: "the client MUST NOT augment",
        2025-11-25 basic/utilities/tasks). What ``tools/list`` said is remembered per
        tool; a tool not seen yet has the whole list read once (each page with
        ``timeout``), and again only after ``notifications/tools/list_changed``.
        """
        if self.era is not Era.LEGACY or not has_capability(
            self._server_capabilities, "tasks.requests.tools.call"
        ):
            return None
        if name not in self._task_support and not self._tools_listed:
            async for _ in self.iter_pages("tools/list", timeout=timeout):
                pass
            self._tools_listed = True
        return self._task_support.get(name)

    async def start_tool_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> CreateTaskResult | CallToolResult:
        """A task-augmented ``tools/call`` (2025-11-25 core tasks): the task, at once.

        Follow it with `task_result` (blocks until the task ends), `get_legacy_task`
        and `cancel_task`. ``ttl_ms`` is the lifetime asked for ("receivers MAY
        override the requested ttl"). A server that answers the call at once instead
        returns its result.
        """
        params = CallToolRequestParams(
            name=name,
            arguments=UNSET if arguments is None else dict(arguments),
            meta=self._meta(meta),
            task=TaskMetadata() if ttl_ms is None else TaskMetadata(ttl=ttl_ms),
        )
        result = await self._exchange("tools/call", params, timeout)
        if not isinstance(result, CreateTaskResult | CallToolResult):
            raise InvalidServerResponseError("tools/call", "not a CreateTaskResult")
        return result

    async def task_result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """What a 2025-11-25 task's call answers, once it ends (``tasks/result``).

        The server "MUST block until a terminal status": ``timeout`` must allow for
        the whole task. Questions the task asks meanwhile arrive as requests of their
        own, answered by the callbacks like a plain call's.

        Raises:
            McpError: The task failed (its call's JSON-RPC error) or was cancelled.
        """
        params = GetTaskPayloadRequestParams(task_id=task_id)
        payload = await self._call("tasks/result", params, dict, timeout)
        try:
            return msgspec.convert(payload, CallToolResult)
        except msgspec.ValidationError as exc:
            raise InvalidServerResponseError("tasks/result", str(exc)) from None

    async def get_legacy_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """A 2025-11-25 task's status (``tasks/get``, "Result & Task")."""
        params = GetTaskRequestParams(task_id=task_id)
        return await self._call("tasks/get", params, GetTaskResult, timeout)

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> DetailedTaskResult:
        """The task's status, and its result, error or questions (``tasks/get``)."""
        params = GetTaskRequestParams(task_id=task_id)
        return await self._call("tasks/get", params, DetailedTaskResult, timeout)

    async def update_task(
        self, task_id: str, input_responses: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        """Answer a task's questions (``tasks/update``; the answers keyed as asked)."""
        params = UpdateTaskRequestParams(task_id=task_id, input_responses=dict(input_responses))
        await self._call("tasks/update", params, Result, timeout)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> None:
        """Ask the server to cancel a task (``tasks/cancel``: cooperative, idempotent).

        Never ``notifications/cancelled``: it "MUST NOT be used for tasks" (SEP-2663).
        """
        params = CancelTaskRequestParams(task_id=task_id)
        # An empty ack in 2026-07-28 (SEP-2663); the cancelled task in 2025-11-25.
        await self._call("tasks/cancel", params, Result | CancelTaskResult, timeout)  # type: ignore[arg-type]

    async def answer_task_input(self, task: DetailedTaskResult) -> dict[str, Any]:
        """The callbacks' answers to a task's outstanding ``inputRequests``, by key.

        Raises:
            UnsupportedInputRequestError: The task asks what the client did not declare.
        """
        if task.input_requests is UNSET or not task.input_requests:
            return {}
        capabilities = self._connection.capabilities
        declared = capabilities if isinstance(capabilities, ClientCapabilities) else None
        return await answer_input_requests(task.input_requests, self._callbacks, declared)

    async def read_resource(
        self,
        uri: str,
        *,
        fresh: bool = False,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> ReadResourceResult:
        """Read a resource (cached while its ``ttlMs`` lasts; MRTR as `call_tool`).

        Args:
            uri: The resource's URI.
            fresh: Ask the server even when a cached result is fresh.
            meta: Extra ``_meta`` keys.
            timeout: Seconds to wait for each round.
        """
        cached = self._cached("resources/read", uri, fresh)
        if isinstance(cached, ReadResourceResult):
            return cached
        params = ReadResourceRequestParams(uri=uri, meta=self._meta(meta))
        result, retried = await self._with_input(
            "resources/read", params, ReadResourceResult, timeout
        )
        if not retried:
            # "Results of MRTR retries MUST NOT be cached" (2026-07-28 caching).
            self._remember("resources/read", uri, result)
        return result

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> GetPromptResult:
        """Get a prompt (MRTR as `call_tool`).

        Args:
            name: The prompt's name.
            arguments: Its arguments (strings).
            meta: Extra ``_meta`` keys.
            timeout: Seconds to wait for each round.
        """
        params = GetPromptRequestParams(
            name=name,
            arguments=UNSET if arguments is None else dict(arguments),
            meta=self._meta(meta),
        )
        result, _ = await self._with_input("prompts/get", params, GetPromptResult, timeout)
        return result

    async def _with_input(
        self,
        method: str,
        params: _Params,
        result_type: type[_Final],
        timeout: float | None,
        first: Any = None,
        *,
        accept_task: bool = False,
    ) -> tuple[_Final, bool]:
        """Send a request, and retry it while a 2026-07-28 server asks for input.

        ``first`` is the result of the first try, when the caller sent it itself;
        ``accept_task``: a task (tasks extension) is an answer too, on any round ("MRTR
        → Tasks composition", SEP-2663).

        Returns:
            The complete result, and whether it took retries.
        """
        result = await self._exchange(method, params, timeout) if first is None else first
        rounds = 0
        while isinstance(result, InputRequiredResult):
            if rounds == MAX_INPUT_ROUNDS:
                raise TooManyInputRoundsError(method, rounds)
            rounds += 1
            responses: Any = UNSET
            if result.input_requests is not UNSET:
                # "If inputRequests is present, (C) MUST construct the responses before
                # retrying"; if absent, retry at once with the state.
                capabilities = self._connection.capabilities
                declared = capabilities if isinstance(capabilities, ClientCapabilities) else None
                responses = await answer_input_requests(
                    result.input_requests, self._callbacks, declared
                )
            # A new request, so a new id from the Connection ("an MRTR retry MUST use a
            # new id"), with the original params plus this round's answers.
            result = await self._exchange(method, retry_params(params, result, responses), timeout)
        if not isinstance(result, result_type) and not (
            accept_task and isinstance(result, CreateTaskExtensionResult)
        ):
            raise InvalidServerResponseError(method, f"not a {result_type.__name__}")
        return cast(_Final, result), rounds > 0

    # ----------------------------------------------------------- utilities

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> CompleteResult:
        """Ask for completions of a prompt's or resource template's argument.

        Args:
            ref: The prompt or resource template.
            argument_name: The argument being completed.
            value: What the user typed so far.
            context_arguments: Arguments already resolved (2025-06-18 ``context``).
            meta: Extra ``_meta`` keys.
            timeout: Seconds to wait.
        """
        params = CompleteRequestParams(
            ref=ref,
            argument=CompletionArgument(name=argument_name, value=value),
            context=(
                UNSET
                if context_arguments is None
                else CompletionContext(arguments=dict(context_arguments))
            ),
            meta=self._meta(meta),
        )
        return await self._call("completion/complete", params, CompleteResult, timeout)

    async def set_logging_level(self, level: LoggingLevel, *, timeout: float | None = None) -> None:
        """Ask for the server's log messages at ``level`` and above.

        Legacy: the ``logging/setLevel`` request. 2026-07-28: remembered and stamped as
        ``_meta["io.modelcontextprotocol/logLevel"]`` on every later request ("if absent,
        the server MUST NOT send notifications/message for that request").
        """
        if level not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        phase = self._connection.phase
        if phase is Phase.MODERN:
            self._log_level = level
            return
        if self._connection.era is None:
            raise LocalProtocolError("connect first")
        params = SetLevelRequestParams(level=level)
        await self._call("logging/setLevel", params, Result, timeout)
        self._log_level = level

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that a legacy server is alive (2026-07-28 removed ``ping``)."""
        await self._call("ping", RequestParams(), Result, timeout)

    async def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Legacy: ask for ``notifications/resources/updated`` about ``uri``.

        2026-07-28 subscribes with a ``subscriptions/listen`` stream (`listen_request`).
        """
        await self._call("resources/subscribe", SubscribeRequestParams(uri=uri), Result, timeout)

    async def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Legacy: stop the notifications `subscribe` asked for."""
        params = UnsubscribeRequestParams(uri=uri)
        await self._call("resources/unsubscribe", params, Result, timeout)

    async def notify_roots_changed(self) -> None:
        """Legacy: tell the server the roots changed (needs ``roots_list_changed``)."""
        data = self._connection.send_notification("notifications/roots/list_changed")
        await self._requester.send(data)

    def listen_request(
        self, notifications: SubscriptionFilter, *, meta: Mapping[str, Any] | None = None
    ) -> tuple[RequestId, bytes]:
        """Build a 2026-07-28 ``subscriptions/listen`` request for a driver to run.

        The driver writes it, keeps the stream open, passes each notification of it to
        `handle_notification`, checks the acknowledgement with `compare_acknowledgement`,
        and ends it with ``Connection.cancel`` (stdio) or by closing the stream (HTTP).

        Args:
            notifications: What to listen for ("each notification type is opt-in").
            meta: Extra ``_meta`` keys.

        Returns:
            The request's id (the subscription id) and its bytes.
        """
        extra = dict(meta) if meta else {}  # no log level: "MUST NOT appear on listen streams"
        params = SubscriptionsListenRequestParams(meta=extra, notifications=notifications)
        return self._connection.send_request("subscriptions/listen", params)

    # ------------------------------------------------ what the server sends

    async def handle_server_request(self, event: RequestReceived) -> bytes | None:
        """Answer a legacy server's request: ``ping``, sampling, elicitation, roots.

        Runs the callback (a driver runs this in a task of its own: it awaits user
        code). A callback's `McpError` is sent as it is; any other exception becomes a
        -32603 that leaks nothing. -32601 when no callback answers the method.

        Returns:
            The reply to write, or None when the server cancelled the request.
        """
        return await answer_server_request(self._connection, self._callbacks, event)

    def handle_notification(self, event: NotificationReceived) -> None:
        """Take in a server notification: list changes and updates invalidate the cache.

        ``tools/list_changed``, ``prompts/list_changed`` and ``resources/list_changed``
        drop the cached pages of their lists; ``resources/updated`` drops the cached
        read of its uri (2026-07-28 caching: "a relevant list_changed or updated
        notification invalidates the cache").
        """
        if event.method == "notifications/tools/list_changed":
            self._task_support.clear()
            self._tools_listed = False
        if self._cache is None:
            return
        params = event.params
        uri = params.uri if isinstance(params, ResourceUpdatedNotificationParams) else None
        self._cache.invalidate_for(event.method, uri)


_PAGE_TYPES: Final[dict[str, Any]] = {
    "tools/list": ListToolsResult,
    "resources/list": ListResourcesResult,
    "resources/templates/list": ListResourceTemplatesResult,
    "prompts/list": ListPromptsResult,
}
