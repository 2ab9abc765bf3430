"""`Server`: an MCP server's features, in both eras, with no IO.

A `Server` holds the registries (tools, resources, templates, prompts, completions) and
answers requests by awaiting the user's handlers. It never starts a task, sleeps or
touches IO: a driver (the trio transports, or any event loop) gives it each request,
together with an `Outbound` for what must be written before the answer, and writes the
answer it returns. What the core must not draw or read itself (a secret key, a clock)
is passed in.

    server = Server("weather", "1.0", secret=key, clock=time.time)

    @server.tool()
    async def forecast(city: str) -> str:
        return f"Sunny in {city}"

    connection = server.connection()      # one per stdio process, WebSocket, session
    server.attach(connection, outbound)   # where its notifications go
    reply = await server.handle_request(connection, event, outbound)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, NamedTuple, TypeVar

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc, types
from mcpcore._capabilities import has_capability
from mcpcore._connection import Connection
from mcpcore._state import Side
from mcpcore.errors import LocalProtocolError, McpError
from mcpcore.events import NotificationReceived, RequestReceived
from mcpcore.server._context import Context
from mcpcore.server._errors import MissingCapabilityError, ResourceNotFoundError
from mcpcore.server._fastcalls import FastCalls, Ran
from mcpcore.server._hub import MemoryHub, NotificationHub
from mcpcore.server._input import InputRequired, Rounds, StateCodec, request_digest
from mcpcore.server._outbound import Outbound
from mcpcore.server._pagination import DEFAULT_PAGE_SIZE, Paginator
from mcpcore.server._prompts import CompletionRegistry, PromptRegistry
from mcpcore.server._resources import ResourceRegistry, not_found, uri_problem
from mcpcore.server._sealing import Sealer, TamperedError
from mcpcore.server._tasks import LEGACY_CAPABILITY, TaskRunner, Tasks, TaskStore
from mcpcore.server._tools import ToolRegistry
from mcpcore.versions import ALL_VERSIONS, Era, era_of

__all__ = ["Server"]

_F = TypeVar("_F", bound=Callable[..., Any])
#: Handler failures are reported here (a driver logs them); the peer never sees them.
ErrorReporter = Callable[[BaseException, Context], None]
AccessCheck = Callable[[Context, str], "bool | Awaitable[bool]"]
_INPUT_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
#: What the embedder is told when a handler asks for input that can't be sealed.
_NO_KEY_FOR_INPUT: Final = (
    "a 2026-07-28 handler asked the client for input, which needs Server(secret=..., "
    "clock=...) to seal the requestState"
)


class Server:
    """An MCP server: what it offers, and how it answers.

    Args:
        name: The server's name (``serverInfo.name``).
        version: Its version.
        title: A display name.
        instructions: Guidance for the model about this server.
        secret: The key (32+ bytes) that seals pagination cursors and 2026-07-28
            requestState. The trio transports supply a random one when it is None;
            without one, lists come in one page and multi round-trip requests fail.
        clock: Seconds since some fixed point (``time.time``), for requestState expiry.
        page_size: Items per page of every list.
        supported_versions: The revisions served.
        cache_ttl_ms: ``ttlMs`` of 2026-07-28 list, discover and read results.
        cache_scope: Their ``cacheScope`` ("private" unless the lists are the same for
            every user).
        on_error: Called with every exception a handler raised that became a generic
            error, so the embedder can log it.
        hub: Where change notifications go (`MemoryHub` unless workers share one).
        task_store: Where the tasks of tools registered with ``task=...`` live
            (2026-07-28 tasks extension); a bounded `MemoryTaskStore` by default.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        secret: bytes | None = None,
        clock: Callable[[], float] | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        supported_versions: tuple[str, ...] = ALL_VERSIONS,
        cache_ttl_ms: int = 0,
        cache_scope: types.CacheScope = "private",
        on_error: ErrorReporter | None = None,
        hub: NotificationHub | None = None,
        task_store: TaskStore | None = None,
    ) -> None:
        self.info = types.Implementation(name=name, version=version, title=title or UNSET)
        self.instructions = instructions
        self.supported_versions = supported_versions
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: types.CacheScope = cache_scope
        self.on_error = on_error
        self.hub: NotificationHub = hub or MemoryHub()
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self.completions = CompletionRegistry()
        self.tasks = Tasks(self.tools, task_store, report=self._report)
        self._access_check: AccessCheck | None = None
        self._page_size = page_size
        self._sealer: Sealer | None = None
        self._clock: Callable[[], float] | None = None
        self._states: StateCodec | None = None
        self._paginator = Paginator(None, page_size)
        self.configure(secret=secret, clock=clock)
        self._handlers: dict[str, Callable[[Context], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "server/discover": self._discover,
            "ping": self._empty,
            "logging/setLevel": self._empty,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
            "tasks/get": self._get_task,
            "tasks/update": self._update_task,
            "tasks/cancel": self._cancel_task,
            "tasks/result": self._task_result,
            "tasks/list": self._list_tasks,
        }

    def configure(
        self,
        *,
        secret: bytes | None = None,
        clock: Callable[[], float] | None = None,
        task_runner: TaskRunner | None = None,
        new_task_id: Callable[[], str] | None = None,
    ) -> None:
        """Give the server what it must not make itself.

        Drivers call this: a key and a clock (kept from the first call that gives
        them), and for tools that run as tasks a `TaskRunner` (the latest: it belongs
        to the driver's run) and a source of task ids (unguessable: "task ids MUST be
        cryptographically random" without an authorization context, 2025-11-25 tasks).
        Without a runner, task tools answer synchronously (SEP-2663 allows it).
        """
        self.tasks.configure(clock=clock, runner=task_runner, new_id=new_task_id)
        if secret is not None and self._sealer is None:
            self._sealer = Sealer(secret)
            self._paginator = Paginator(self._sealer, self._page_size)
        if clock is not None and self._clock is None:
            self._clock = clock
        if self._sealer is not None and self._clock is not None and self._states is None:
            self._states = StateCodec(self._sealer, self._clock)

    # ---------------------------------------------------------------- what we offer

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """What the server advertises, derived from what is registered.

        Everything registered can change at run time and the hub delivers the change
        notifications, so ``listChanged`` and ``subscribe`` are advertised with them.
        """
        has_resources = not self.resources.empty
        return types.ServerCapabilities(
            tools=types.ServerToolsCapability(list_changed=True) if len(self.tools) else UNSET,
            resources=(
                types.ServerResourcesCapability(subscribe=True, list_changed=True)
                if has_resources
                else UNSET
            ),
            prompts=types.ServerPromptsCapability(list_changed=True)
            if len(self.prompts)
            else UNSET,
            completions={} if len(self.prompts) or has_resources else UNSET,
            logging={},
            # "advertise it under capabilities.extensions" (SEP-2663), when a tool may
            # run as a task. (Legacy clients ignore extensions they don't know.)
            extensions={types.TASKS_EXTENSION: {}} if self.tools.has_tasks else UNSET,
            # The 2025-11-25 core tasks, when the driver can run them (not in 2026-07-28's
            # server/discover, whose ServerCapabilities has no `tasks`).
            tasks=LEGACY_CAPABILITY if self._runs_legacy_tasks else UNSET,
        )

    @property
    def _runs_legacy_tasks(self) -> bool:
        return self.tools.has_tasks and self.tasks.ready

    def tool(self, name: str | None = None, **options: Any) -> Callable[[_F], _F]:
        """Register the decorated function as a tool.

        Its parameters are the tool's arguments (the input schema is derived from their
        annotations) unless ``input_schema`` is given, in which case the function takes
        one parameter, ``arguments``. Options: ``title``, ``description`` (default: the
        docstring), ``input_schema``, ``output_schema`` (default: from the return
        annotation), ``annotations``, ``icons``, ``meta``.

        ``task="optional"`` or ``task="required"`` lets the tool run as a task of the
        2026-07-28 tasks extension: a client that declared the extension gets a task
        at once and polls it; ``gather_input_first=True`` asks the handler's questions
        within the request and starts the task at `Context.start_task`. In a
        2025-11-25 session the same tools run as the core tasks of that revision when
        the client augments the call (``task: {ttl?}``), and a ``"required"`` one is
        refused to a plain call (-32601).
        """

        def register(handler: _F) -> _F:
            self.tools.add(handler, name=name, **options)
            return handler

        return register

    def resource(self, uri: str, *, name: str | None = None, **fields: Any) -> Callable[[_F], _F]:
        """Register the decorated function as the resource at ``uri``.

        It returns ``str`` (text), ``bytes`` (binary), contents, or a list of these.
        ``fields``: the other `types.Resource` fields (``mime_type``, ``size``...).
        """

        def register(handler: _F) -> _F:
            definition = types.Resource(uri=uri, name=name or handler.__name__, **fields)
            self.resources.add_resource(handler, definition)
            return handler

        return register

    def resource_template(
        self, uri_template: str, *, name: str | None = None, **fields: Any
    ) -> Callable[[_F], _F]:
        """Register the decorated function for every URI the RFC 6570 template matches.

        Its parameters are the template's variables (annotated ``str``, or a type the
        variable's text converts to, such as ``int``).
        """

        def register(handler: _F) -> _F:
            definition = types.ResourceTemplate(
                uri_template=uri_template, name=name or handler.__name__, **fields
            )
            self.resources.add_template(handler, definition)
            return handler

        return register

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[_F], _F]:
        """Register the decorated function as a prompt; its parameters are the arguments.

        Options: ``title``, ``description`` (default: the docstring), ``icons``, ``meta``.
        """

        def register(handler: _F) -> _F:
            self.prompts.add(handler, name=name, **options)
            return handler

        return register

    def completion(
        self, *, prompt: str | None = None, resource_template: str | None = None
    ) -> Callable[[_F], _F]:
        """Register the decorated function to complete arguments or template variables.

        It completes the arguments of ``prompt`` or the variables of
        ``resource_template``; it declares any of ``argument``, ``value`` and
        ``context_arguments``, and returns the candidate values (or a `types.Completion`).
        """
        if prompt is not None and resource_template is None:
            kind, target = "ref/prompt", prompt
        elif resource_template is not None and prompt is None:
            kind, target = "ref/resource", resource_template
        else:
            raise ValueError("complete either a prompt or a resource template")

        def register(handler: _F) -> _F:
            self.completions.add(handler, kind=kind, target=target)
            return handler

        return register

    def access_check(self, check: AccessCheck) -> AccessCheck:
        """Register the hook run before every resource list entry and every read.

        ``check(context, uri_or_template)`` returns (or awaits to) whether the requester
        may see it; a refused resource is reported as one that does not exist.
        """
        self._access_check = check
        return check

    # ---------------------------------------------------------------- connections

    def connection(self) -> Connection:
        """A new server `Connection` speaking what this server speaks."""
        return Connection(
            Side.SERVER,
            supported_versions=self.supported_versions,
            capabilities=self.capabilities,
            implementation=self.info,
        )

    def fast_calls(self) -> FastCalls:
        """A `FastCalls` answering this server's 2026-07-28 ``tools/call`` in one pass.

        A driver keeps one, feeds it the requests its general path admitted, and tries
        it on each 2026-07-28 request first (`FastCalls`).
        """
        return FastCalls(self.tools, self.info, self._with_cache_hints)

    def never_waits(self, event: RequestReceived) -> bool:
        """Whether `handle_request` answers ``event`` without ever waiting.

        True for a ``tools/call`` of a synchronous tool that takes no `Context` and
        never runs as a task (`ToolRegistry.standalone`): its handler runs from start
        to end in one step, so nothing can cancel it midway. A driver may then await
        the request in the task that read it rather than hand it to a worker: the
        answer is the same, and the hand-off is two task switches fewer.
        """
        if event.method != "tools/call":
            return False
        tool = self.tools.standalone(event.params.name)
        return tool is not None and not tool.awaits

    def attach(self, connection: Connection, outbound: Outbound) -> None:
        """Deliver ``connection``'s change notifications (legacy era) to ``outbound``."""
        self.hub.attach(connection, outbound)

    def detach(self, connection: Connection) -> None:
        """Forget a connection that is gone (its subscriptions and listen streams)."""
        self.hub.detach(connection)
        self.tasks.streams.detach(connection)

    async def handle_request(
        self,
        connection: Connection,
        event: RequestReceived,
        outbound: Outbound,
        *,
        principal: str | None = None,
        ran: Ran | None = None,
    ) -> bytes | None:
        """Answer one request; returns the response to write (None: nothing to write).

        Nothing is returned for a request the client cancelled meanwhile, or for a
        ``subscriptions/listen`` stream, which stays open: its acknowledgement goes out
        through ``outbound`` and it ends with `request_cancelled` or `close_streams`.
        ``principal`` identifies the authenticated user (it binds 2026-07-28
        requestState to them). ``ran``: the handler's outcome, when `FastCalls` ran
        the tool already (the handler is not called again).
        """
        rounds: Rounds | None = None
        modern = event.protocol_version is not None and era_of(event.protocol_version) is Era.MODERN
        if modern and event.method in _INPUT_METHODS:
            opened = self._open_rounds(connection, event, principal)
            if isinstance(opened, bytes):
                return opened  # the state was refused
            rounds = opened
        context = Context(connection, outbound, event, principal=principal, rounds=rounds)
        if event.method == "subscriptions/listen":
            return await self._listen(context, outbound)
        handler = self._handlers.get(event.method)
        if handler is None:
            return connection.send_error(
                event.request_id, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {event.method}"
            )
        try:
            result = await handler(context) if ran is None else ran.outcome()
        except Exception as exc:  # the handler's answer by exception, or its failure
            result = self._answer_failure(exc, context, connection, event, rounds)
            if isinstance(result, _Replied):
                return result.data
        if modern:
            result = self._with_cache_hints(result)
        try:
            return connection.send_result(event.request_id, result)
        except LocalProtocolError as exc:  # the handler built an answer the protocol refuses
            self._report(exc, context)
            return connection.send_error(event.request_id, jsonrpc.INTERNAL_ERROR, "Internal error")

    def _answer_failure(
        self,
        exc: Exception,
        context: Context,
        connection: Connection,
        event: RequestReceived,
        rounds: Rounds | None,
    ) -> Any:
        """What answers a handler that raised: a result after all, or an error (`_Replied`)."""
        request_id = event.request_id
        if isinstance(exc, InputRequired):
            if rounds is not None and self._states is not None:
                return self._input_required(context, exc, rounds, self._states)
            # (rounds: see Context.request_input)
            self._report(RuntimeError(_NO_KEY_FOR_INPUT), context)
            data = connection.send_error(request_id, jsonrpc.INTERNAL_ERROR, "Internal error")
        elif isinstance(exc, MissingCapabilityError):
            data = connection.send_missing_capabilities(request_id, exc.required)
        elif isinstance(exc, McpError):
            extra = UNSET if exc.data is None else exc.data
            data = connection.send_error(request_id, exc.code, exc.message, extra)
        else:
            self._report(exc, context)
            if event.method == "tools/call":
                return _tool_failure(event.params.name)
            data = connection.send_error(request_id, jsonrpc.INTERNAL_ERROR, "Internal error")
        return _Replied(data)

    async def handle_notification(
        self, connection: Connection, event: NotificationReceived
    ) -> None:
        """Take a client notification (nothing to answer: JSON-RPC never answers one)."""
        # initialized and roots/list_changed change nothing here; cancellation arrives as
        # CancelRequested, which the driver turns into request_cancelled().

    def request_cancelled(self, connection: Connection, request_id: types.RequestId) -> None:
        """The client cancelled ``request_id``: end its listen stream, if it was one."""
        self.hub.remove_stream(connection, request_id)
        self.tasks.streams.remove(connection, request_id)

    # ---------------------------------------------------------------- changes

    async def tools_changed(self) -> None:
        """Tell the clients that asked that the tool list changed."""
        await self.hub.list_changed("tools")

    async def prompts_changed(self) -> None:
        """Tell the clients that asked that the prompt list changed."""
        await self.hub.list_changed("prompts")

    async def resources_changed(self) -> None:
        """Tell the clients that asked that the resource list changed."""
        await self.hub.list_changed("resources")

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` (or to a URI it lies under) that it changed."""
        await self.hub.resource_updated(uri)

    async def close_streams(self) -> None:
        """End every listen stream gracefully, with its result (server shutdown)."""
        self.tasks.streams.clear()
        await self.hub.close_streams()

    # ---------------------------------------------------------------- the methods

    async def _empty(self, context: Context) -> types.EmptyResult:
        # ping, and logging/setLevel (the Connection already recorded the level): the
        # result is exactly {} (2024-11-05).
        return types.EmptyResult()

    async def _initialize(self, context: Context) -> types.InitializeResult:
        version = context.protocol_version
        if version is None:  # (the Connection negotiated one before the handler runs)
            raise McpError(jsonrpc.INTERNAL_ERROR, "Internal error: no negotiated version")
        return types.InitializeResult(
            protocol_version=version,
            capabilities=self.capabilities,
            server_info=self.info,
            instructions=self.instructions or UNSET,
        )

    async def _discover(self, context: Context) -> types.DiscoverResult:
        modern = [v for v in self.supported_versions if era_of(v) is Era.MODERN]
        return types.DiscoverResult(
            supported_versions=modern,
            capabilities=msgspec.structs.replace(self.capabilities, tasks=UNSET),
            instructions=self.instructions or UNSET,
        )

    async def _list_tools(self, context: Context) -> types.ListToolsResult:
        tools = self.tools.definitions(
            modern=context.era is Era.MODERN, tasks=self._runs_legacy_tasks
        )
        page, cursor = self._paginator.page("tools", tools, context.params.cursor)
        return types.ListToolsResult(tools=page, next_cursor=cursor)

    def _call_tool(self, context: Context) -> Awaitable[Any]:
        if self.tools.has_tasks:
            if context.era is Era.MODERN:
                support, _ = self.tools.task_support(context.params.name)
                if support is not None:
                    return self.tasks.call_tool(context)
            elif self.tasks.ready:
                return self.tasks.call_tool_legacy(context)
        # The registry's coroutine itself, not one more coroutine awaiting it.
        return self.tools.call(context, context.params)

    def _tasks_of(self, context: Context) -> Tasks:
        # In 2025-11-25 only a server that advertises `tasks` answers tasks/* (else
        # -32601, as a server without them). In 2026-07-28, only the extension's server.
        if not (self._runs_legacy_tasks if context.era is Era.LEGACY else self.tools.has_tasks):
            raise McpError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {context.method}")
        return self.tasks

    async def _get_task(self, context: Context) -> types.DetailedTaskResult | types.GetTaskResult:
        tasks = self._tasks_of(context)
        if context.era is Era.LEGACY:
            return await tasks.get_legacy(context)
        return await tasks.get(context)

    async def _task_result(self, context: Context) -> dict[str, Any]:
        return await self._tasks_of(context).result(context)

    async def _list_tasks(self, context: Context) -> types.ListTasksResult:
        tasks = await self._tasks_of(context).list_legacy(context)
        # "Invalid cursor → -32602" (2025-11-25 tasks), as every paginated list.
        page, cursor = self._paginator.page("tasks", tasks, context.params.cursor)
        return types.ListTasksResult(tasks=page, next_cursor=cursor)

    async def _update_task(self, context: Context) -> types.EmptyResult:
        return await self._tasks_of(context).update(context)

    async def _cancel_task(self, context: Context) -> types.EmptyResult | types.CancelTaskResult:
        tasks = self._tasks_of(context)
        if context.era is Era.LEGACY:
            return await tasks.cancel_legacy(context)
        return await tasks.cancel(context)

    async def _list_resources(self, context: Context) -> types.ListResourcesResult:
        resources = [r for r in self.resources.resources() if await self._allowed(context, r.uri)]
        page, cursor = self._paginator.page("resources", resources, context.params.cursor)
        return types.ListResourcesResult(resources=page, next_cursor=cursor)

    async def _list_templates(self, context: Context) -> types.ListResourceTemplatesResult:
        templates = [
            t for t in self.resources.templates() if await self._allowed(context, t.uri_template)
        ]
        page, cursor = self._paginator.page("templates", templates, context.params.cursor)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=cursor)

    async def _read_resource(self, context: Context) -> types.ReadResourceResult:
        uri = context.params.uri
        problem = uri_problem(uri)
        if problem is not None:
            raise McpError(jsonrpc.INVALID_PARAMS, f"Invalid URI: {problem}", {"uri": uri})
        if not await self._allowed(context, uri):
            raise not_found(uri, context.era)
        try:
            return await self.resources.read(context, uri)
        except ResourceNotFoundError:
            raise not_found(uri, context.era) from None

    async def _subscribe(self, context: Context) -> types.EmptyResult:
        uri = context.params.uri
        problem = uri_problem(uri)
        if problem is not None:
            raise McpError(jsonrpc.INVALID_PARAMS, f"Invalid URI: {problem}", {"uri": uri})
        if not self.hub.subscribe(context._connection, uri):
            raise McpError(jsonrpc.INVALID_REQUEST, "Too many resource subscriptions")
        return types.EmptyResult()

    async def _unsubscribe(self, context: Context) -> types.EmptyResult:
        self.hub.unsubscribe(context._connection, context.params.uri)
        return types.EmptyResult()

    async def _list_prompts(self, context: Context) -> types.ListPromptsResult:
        prompts = self.prompts.definitions()
        page, cursor = self._paginator.page("prompts", prompts, context.params.cursor)
        return types.ListPromptsResult(prompts=page, next_cursor=cursor)

    def _get_prompt(
        self, context: Context
    ) -> Awaitable[types.GetPromptResult | types.InputRequiredResult]:
        # As in _call_tool: the registry's coroutine itself.
        return self.prompts.get(context, context.params)

    async def _complete(self, context: Context) -> types.CompleteResult:
        params: types.CompleteRequestParams = context.params
        ref = params.ref
        known = (
            ref.name in self.prompts
            if isinstance(ref, types.PromptReference)
            else self.resources.template(ref.uri) is not None
        )
        if not known:
            # "-32602 for an invalid name" (2024-11-05 server/utilities/completion).
            raise McpError(jsonrpc.INVALID_PARAMS, "Unknown prompt or resource template")
        return await self.completions.complete(context, params)

    async def _listen(self, context: Context, outbound: Outbound) -> bytes | None:
        """Acknowledge a 2026-07-28 listen stream with what we honour, and register it.

        Returns the error refusing it, if it is refused (nothing otherwise: the stream
        stays open).
        """
        requested: types.SubscriptionFilter = context.params.notifications
        connection = context._connection
        task_ids: list[str] = []
        if requested.task_ids:
            try:
                task_ids = await self.tasks.followable(context, requested.task_ids)
            except MissingCapabilityError as exc:
                return connection.send_missing_capabilities(context.request_id, exc.required)
        capabilities = self.capabilities
        wanted_uris = [
            uri for uri in (requested.resource_subscriptions or ()) if uri_problem(uri) is None
        ]
        honoured = types.SubscriptionFilter(
            tools_list_changed=_honour(requested.tools_list_changed, capabilities, "tools"),
            prompts_list_changed=_honour(requested.prompts_list_changed, capabilities, "prompts"),
            resources_list_changed=_honour(
                requested.resources_list_changed, capabilities, "resources"
            ),
            resource_subscriptions=(
                wanted_uris
                if wanted_uris and has_capability(capabilities, "resources.subscribe")
                else UNSET
            ),
            # The tasks extension's filter: the ids echoed are those honoured (SEP-2663).
            task_ids=task_ids or UNSET,
        )
        data = connection.acknowledge_subscription(context.request_id, honoured)
        if data is None:
            return None  # cancelled already
        self.hub.add_stream(connection, context.request_id, outbound, honoured)
        if task_ids:
            self.tasks.streams.add(
                connection, context.request_id, outbound, context.principal, task_ids
            )
        # "Flush the ack immediately" (the acknowledgement is the stream's first message).
        await outbound.send(data)
        return None

    # ---------------------------------------------------------------- helpers

    async def _allowed(self, context: Context, uri: str) -> bool:
        check = self._access_check
        if check is None:
            return True
        allowed = check(context, uri)
        if inspect.isawaitable(allowed):
            allowed = await allowed
        return bool(allowed)

    def _open_rounds(
        self, connection: Connection, event: RequestReceived, principal: str | None
    ) -> Rounds | bytes | None:
        """The answers a 2026-07-28 retry brings, or the error refusing its state."""
        params = event.params
        responses = {} if params.input_responses is UNSET else params.input_responses
        if params.request_state is UNSET:
            return Rounds({}, responses, {}, 0)
        states = self._states
        digest = request_digest(event.method, params)
        try:
            if states is None:
                # Without a key we never issued a state: this one is not ours.
                raise TamperedError
            rounds = states.open(params.request_state, event.method, digest, principal)
        except TamperedError:
            # "MUST reject state that fails verification" (2026-07-28 mrtr).
            return connection.send_error(
                event.request_id, jsonrpc.INVALID_PARAMS, "Invalid or expired requestState"
            )
        rounds.responses = responses
        return rounds

    def _input_required(
        self, context: Context, need: InputRequired, rounds: Rounds, states: StateCodec
    ) -> types.InputRequiredResult:
        digest = request_digest(context.method, context.params)
        state = states.seal(context.method, digest, context.principal, rounds)
        return types.InputRequiredResult(input_requests=need.requests, request_state=state)

    def _with_cache_hints(self, result: Any) -> Any:
        """A 2026-07-28 result, with our cache hints where its author gave none."""
        if hasattr(result, "ttl_ms") and result.ttl_ms is UNSET:
            result.ttl_ms = self.cache_ttl_ms
            result.cache_scope = self.cache_scope
        return result

    def _report(self, error: BaseException, context: Context | None) -> None:
        if self.on_error is not None and context is not None:
            self.on_error(error, context)


def _honour(flag: bool | Any, capabilities: types.ServerCapabilities, name: str) -> bool | Any:
    return True if flag is True and has_capability(capabilities, f"{name}.list_changed") else UNSET


def _tool_failure(name: str) -> types.CallToolResult:
    # "a handler exception → isError: true with a message that leaks no internals"
    text = f"The tool {name} failed."
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


class _Replied(NamedTuple):
    """A request answered with an error instead of a result (None: it was cancelled)."""

    data: bytes | None
