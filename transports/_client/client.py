"""`Client`: the awaitable MCP client, the same over every transport.

A `Client` wraps a `mcpcore.client.ClientSession` (all the protocol logic: era
detection, pagination, 2026-07-28 multi round-trips, the result cache) and a transport
driver (`ClientTransport`: the bytes, the waiting, the reader task). You normally get
one from an ``open_*`` function, already connected:

    async with open_stdio_client("python", ["server.py"]) as client:
        async for tool in client.iter_tools():
            print(tool.name)
        result = await client.call_tool("add", {"a": 1, "b": 2}, timeout=5)

Every request has a timeout (`DEFAULT_TIMEOUT` unless the client or the call says
otherwise; ``math.inf`` waits for ever). A call that times out, or whose task is
cancelled, is cancelled on the wire and raises `TimeoutError` (or trio's
`~trio.Cancelled`); the connection stays usable. When the connection is lost, every
pending and later call raises the transport's `ConnectionClosedError`, which says why.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from types import TracebackType
from typing import Any, Final, cast

import trio

import mcpcore
from mcpcore import LocalProtocolError
from mcpcore.client import DEFAULT_PROBE_TIMEOUT, ClientSession, ConnectMode
from mcpcore.types import (
    TASKS_EXTENSION,
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingLevel,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    ServerCapabilities,
    SubscriptionFilter,
    Tool,
)
from mcpcore.versions import Era
from transports._client.calls import (
    DEFAULT_TIMEOUT,
    MAX_TOTAL_TIMEOUT,
    CallOptions,
    CallTimeout,
    ProgressCallback,
)
from transports._client.notifications import NotificationDispatcher, Subscription
from transports._client.tasks import TaskStatusCallback, wait_for_legacy_task, wait_for_task
from transports._client.transport import ClientTransport

__all__ = [
    "CLIENT_INFO",
    "DEFAULT_TIMEOUT",
    "MAX_TOTAL_TIMEOUT",
    "Client",
    "ProgressCallback",
    "Subscription",
]

#: How every transport's client names itself by default (``clientInfo``).
CLIENT_INFO: Final = Implementation(name="mcpcore", version=mcpcore.__version__)

_PROGRESS_TOKEN: Final = "progressToken"


class Client:
    """An MCP client on one connection: every request, awaitable, with its timeout.

    Args:
        session: The protocol logic, built with ``transport`` as its requester.
        transport: The driver that carries the session's bytes.
        timeout: Seconds each request waits by default (`DEFAULT_TIMEOUT`).
        max_total_timeout: The hard limit of a call whose timeout progress resets
            (`MAX_TOTAL_TIMEOUT`).
        notifications: The dispatcher the transport feeds ``on_notification``
            through, if any (for `notifications_dropped`).
    """

    def __init__(
        self,
        session: ClientSession,
        transport: ClientTransport,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_total_timeout: float = MAX_TOTAL_TIMEOUT,
        notifications: NotificationDispatcher | None = None,
    ) -> None:
        self._session = session
        self._transport = transport
        self._timeout = timeout
        self._max_total_timeout = max_total_timeout
        self._notifications = notifications
        self._era: Era | None = None  # what connect chose, still known once closed
        # Progress tokens: unique among our requests in flight, as "the progress token
        # MUST be unique across all active requests" (2024-11-05 utilities/progress).
        self._tokens = itertools.count(1)
        # The context of every session call (it holds no state of its own).
        self._calling_context = _Calling(transport)
        # Whether tools/call may come back as a task (the tasks extension declared).
        extensions = session.client_capabilities.extensions
        self._takes_tasks = bool(extensions) and TASKS_EXTENSION in extensions  # type: ignore[operator]

    # ------------------------------------------------------------ what we know

    @property
    def session(self) -> ClientSession:
        """The `ClientSession` underneath (its `Connection`, its cache...)."""
        return self._session

    @property
    def era(self) -> Era | None:
        """The era spoken: `Era.LEGACY` (a handshake) or `Era.MODERN` (2026-07-28)."""
        return self._session.era or self._era

    @property
    def protocol_version(self) -> str | None:
        """The protocol revision spoken, e.g. ``"2025-11-25"`` or ``"2026-07-28"``."""
        return self._session.protocol_version

    @property
    def server_info(self) -> Implementation | None:
        """The server's self-reported name and version, when it sent them."""
        return self._session.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities | None:
        """What the server advertised (``initialize`` or ``server/discover``)."""
        return self._session.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, when it sent some."""
        return self._session.instructions

    @property
    def closed_reason(self) -> ConnectionError | None:
        """Why the connection is gone, once it is (None while it works)."""
        return self._transport.failure

    @property
    def notifications_dropped(self) -> int:
        """Notifications dropped because ``on_notification`` fell behind.

        See `MAX_QUEUED_NOTIFICATIONS`: the oldest waiting ones go first. Re-read what
        you track (list the tools again...) when this grows.
        """
        return 0 if self._notifications is None else self._notifications.dropped

    # ------------------------------------------------------------ life cycle

    async def connect(
        self,
        mode: ConnectMode = "auto",
        *,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        timeout: float | None = None,
    ) -> Era:
        """Choose the era, and get ready to speak it (``open_*`` functions do this).

        ``auto`` probes ``server/discover`` and falls back to the ``initialize``
        handshake (CHECKLIST §6.1); ``legacy`` only does the handshake; ``modern`` only
        speaks 2026-07-28. If ``initialize`` times out, the connection is closed: it
        can't be cancelled ("the client MUST NOT attempt to cancel its initialize
        request", 2024-11-05 basic/lifecycle).

        Args:
            mode: ``"auto"``, ``"legacy"`` or ``"modern"``.
            probe_timeout: Seconds to wait for the ``server/discover`` probe.
            timeout: Seconds to wait for ``initialize``.

        Returns:
            The era chosen.
        """
        with self._calling():
            self._era = await self._session.connect(
                mode, probe_timeout=probe_timeout, timeout=self._wait(timeout)
            )
        return self._era

    async def aclose(self) -> None:
        """Close the connection. Pending calls fail with `ConnectionClosedError`.

        Always closes, even when cancelled; closing twice is harmless.
        """
        await self._transport.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ----------------------------------------------------------------- lists

    async def list_tools(
        self, cursor: str | None = None, *, timeout: float | None = None, fresh: bool = False
    ) -> ListToolsResult:
        """One page of ``tools/list``.

        Args:
            cursor: The previous page's ``nextCursor``; None for the first page.
            timeout: Seconds to wait (the client's default when None).
            fresh: Ask the server even when a cached page is fresh (2026-07-28 ``ttlMs``).
        """
        with self._calling():
            return await self._session.list_tools(cursor, fresh=fresh, timeout=self._wait(timeout))

    async def list_resources(
        self, cursor: str | None = None, *, timeout: float | None = None, fresh: bool = False
    ) -> ListResourcesResult:
        """One page of ``resources/list``; arguments as `list_tools`."""
        with self._calling():
            return await self._session.list_resources(
                cursor, fresh=fresh, timeout=self._wait(timeout)
            )

    async def list_resource_templates(
        self, cursor: str | None = None, *, timeout: float | None = None, fresh: bool = False
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``; arguments as `list_tools`."""
        with self._calling():
            return await self._session.list_resource_templates(
                cursor, fresh=fresh, timeout=self._wait(timeout)
            )

    async def list_prompts(
        self, cursor: str | None = None, *, timeout: float | None = None, fresh: bool = False
    ) -> ListPromptsResult:
        """One page of ``prompts/list``; arguments as `list_tools`."""
        with self._calling():
            return await self._session.list_prompts(
                cursor, fresh=fresh, timeout=self._wait(timeout)
            )

    async def iter_tools(
        self, *, timeout: float | None = None, fresh: bool = False
    ) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` page after page.

        ``timeout`` applies to each page. Close the iterator if you stop early
        (``contextlib.aclosing``).
        """
        async for page in self._pages("tools/list", timeout, fresh):
            for tool in cast(ListToolsResult, page).tools:
                yield tool

    async def iter_resources(
        self, *, timeout: float | None = None, fresh: bool = False
    ) -> AsyncIterator[Resource]:
        """Every resource, page after page (as `iter_tools`)."""
        async for page in self._pages("resources/list", timeout, fresh):
            for resource in cast(ListResourcesResult, page).resources:
                yield resource

    async def iter_resource_templates(
        self, *, timeout: float | None = None, fresh: bool = False
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page after page (as `iter_tools`)."""
        async for page in self._pages("resources/templates/list", timeout, fresh):
            for template in cast(ListResourceTemplatesResult, page).resource_templates:
                yield template

    async def iter_prompts(
        self, *, timeout: float | None = None, fresh: bool = False
    ) -> AsyncIterator[Prompt]:
        """Every prompt, page after page (as `iter_tools`)."""
        async for page in self._pages("prompts/list", timeout, fresh):
            for prompt in cast(ListPromptsResult, page).prompts:
                yield prompt

    async def _pages(self, method: str, timeout: float | None, fresh: bool) -> AsyncIterator[Any]:
        pages = cast(
            AsyncGenerator[Any, None],
            self._session.iter_pages(method, fresh=fresh, timeout=self._wait(timeout)),
        )
        async with aclosing(pages):
            while True:
                with self._calling():
                    try:
                        page = await anext(pages)
                    except StopAsyncIteration:
                        return
                yield page

    # ------------------------------------------------ tools, resources, prompts

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool = False,
        meta: Mapping[str, Any] | None = None,
        task_status: TaskStatusCallback | None = None,
        task: bool | None = None,
    ) -> CallToolResult:
        """Call a tool. A tool's own failure is a result with ``is_error``, not an exception.

        In 2026-07-28 the server may ask for input on the way (elicitation, sampling,
        roots): the `ClientCallbacks` answer and the call is retried, each round with
        ``timeout``.

        With ``ClientCallbacks(tasks=True)`` a 2026-07-28 server may run the tool as a
        task (the tasks extension): the call then polls it until it ends, answering
        its questions through the same callbacks, and reports each new status to
        ``task_status``. ``timeout`` bounds each request, not the task: bound the wait
        with a cancel scope, whose cancellation cancels the task on the server too.

        A 2025-11-25 server that takes task-augmented calls (``capabilities.tasks``)
        gets one for a tool whose ``execution.taskSupport`` is "required" (read from
        ``tools/list``, which is fetched once if the tool was not listed yet), or
        "optional" with ``task=True``; the call then waits on the blocking
        ``tasks/result``, whose questions the callbacks answer, polls ``tasks/get`` for
        ``task_status`` only, and cancels the task as above.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            timeout: Seconds to wait (the client's default when None).
            progress: Called as ``progress(value, total, message)`` while the tool
                runs, in the calling task (sync or async). A slow callback sees only
                the latest value; the last one arrives before the call returns.
            reset_timeout_on_progress: Progress restarts the timeout, up to the
                client's ``max_total_timeout``.
            meta: Extra ``_meta`` keys (trace context...).
            task_status: Called with each new status of the task, if it runs as one.
            task: 2025-11-25 only: True asks for a task wherever the tool allows one,
                False never does (a "required" tool then refuses the call); None (the
                default) asks only where the tool requires it. In 2026-07-28 the server
                decides (``ClientCallbacks(tasks=True)`` lets it).

        Raises:
            TimeoutError: No answer in time; the request was cancelled on the wire.
            McpError: The server answered with an error (or the task failed with one).
            TaskCancelledError: The task was cancelled (by someone else).
            ConnectionClosedError: The connection is gone.
        """
        meta = self._with_token(meta, progress, reset_timeout_on_progress)
        wait = self._wait(timeout, progress, reset_timeout_on_progress)
        with self._calling():
            if self._session.era is Era.LEGACY and task is not False:
                support = await self._session.tool_task_support(name, timeout=self._wait(timeout))
                if support == "required" or (support == "optional" and task):
                    return await self._call_legacy_task(name, arguments, meta, timeout, task_status)
            if not self._takes_tasks:
                return await self._session.call_tool(name, arguments, meta=meta, timeout=wait)
            first = await self._session.start_tool(name, arguments, meta=meta, timeout=wait)
            if isinstance(first, CallToolResult):
                return first
            poll_timeout = self._timeout if timeout is None else timeout
            return await wait_for_task(
                self._session, first, timeout=poll_timeout, on_status=task_status
            )

    async def _call_legacy_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None,
        timeout: float | None,
        task_status: TaskStatusCallback | None,
    ) -> CallToolResult:
        """A task-augmented 2025-11-25 ``tools/call``, waited for (`wait_for_legacy_task`)."""
        wait = self._wait(timeout)
        created = await self._session.start_tool_task(name, arguments, meta=meta, timeout=wait)
        if isinstance(created, CallToolResult):
            return created  # the server answered at once after all
        return await wait_for_legacy_task(
            self._session, created.task, timeout=wait, on_status=task_status
        )

    async def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool = False,
        meta: Mapping[str, Any] | None = None,
        fresh: bool = False,
    ) -> ReadResourceResult:
        """Read a resource (text or blob contents); arguments as `call_tool`.

        Args:
            uri: The resource's URI.
            timeout: Seconds to wait.
            progress: See `call_tool`.
            reset_timeout_on_progress: See `call_tool`.
            meta: Extra ``_meta`` keys.
            fresh: Ask the server even when a cached result is fresh.
        """
        meta = self._with_token(meta, progress, reset_timeout_on_progress)
        wait = self._wait(timeout, progress, reset_timeout_on_progress)
        with self._calling():
            return await self._session.read_resource(uri, fresh=fresh, meta=meta, timeout=wait)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> GetPromptResult:
        """Get a prompt, with its arguments (strings); arguments as `call_tool`."""
        meta = self._with_token(meta, progress, reset_timeout_on_progress)
        wait = self._wait(timeout, progress, reset_timeout_on_progress)
        with self._calling():
            return await self._session.get_prompt(name, arguments, meta=meta, timeout=wait)

    # -------------------------------------------------------------- utilities

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> CompleteResult:
        """Ask for completions of a prompt's or resource template's argument.

        Args:
            ref: The prompt or resource template.
            argument: The name of the argument being completed.
            value: What the user typed so far.
            context_arguments: Arguments already resolved (2025-06-18 ``context``).
            timeout: Seconds to wait.
            meta: Extra ``_meta`` keys.
        """
        with self._calling():
            return await self._session.complete(
                ref, argument, value, context_arguments, meta=meta, timeout=self._wait(timeout)
            )

    async def set_logging_level(self, level: LoggingLevel, *, timeout: float | None = None) -> None:
        """Ask for the server's log messages at ``level`` and above.

        They arrive as ``notifications/message`` through ``on_notification``. Legacy:
        ``logging/setLevel``; 2026-07-28: stamped on every later request.
        """
        with self._calling():
            await self._session.set_logging_level(level, timeout=self._wait(timeout))

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that a legacy server answers (2026-07-28 has no ``ping``)."""
        with self._calling():
            await self._session.ping(timeout=self._wait(timeout))

    async def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Legacy: ask for ``notifications/resources/updated`` about ``uri``.

        The updates arrive through ``on_notification``. In 2026-07-28, use `listen`.
        """
        with self._calling():
            await self._session.subscribe(uri, timeout=self._wait(timeout))

    async def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Legacy: stop the updates `subscribe` asked for."""
        with self._calling():
            await self._session.unsubscribe(uri, timeout=self._wait(timeout))

    async def notify_roots_changed(self) -> None:
        """Legacy: tell the server the roots changed (needs ``roots_list_changed``)."""
        with self._calling():
            await self._session.notify_roots_changed()

    @asynccontextmanager
    async def listen(
        self,
        notifications: SubscriptionFilter,
        *,
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[Subscription]:
        """Open a 2026-07-28 ``subscriptions/listen`` stream.

            filter = SubscriptionFilter(tools_list_changed=True)
            async with client.listen(filter) as stream:
                async for notification in stream:
                    ...

        Entering waits (within ``timeout``) for the server's acknowledgement, so the
        stream is live once the block starts; `Subscription.acknowledged` says what the
        server agreed to send. Iteration ends when the server ends the stream. Leaving
        the block cancels the stream on the wire. Legacy servers send their change
        notifications to ``on_notification`` instead.

        Raises:
            TimeoutError: No acknowledgement in time (the request is cancelled).
            McpError: The server refused the stream.
            LocalProtocolError: The connection speaks a legacy revision.
        """
        with self._calling():
            if self._session.era is not Era.MODERN:
                raise LocalProtocolError(
                    "subscriptions/listen is 2026-07-28 only; a legacy server's "
                    "notifications go to on_notification"
                )
            request_id, data = self._session.listen_request(notifications, meta=meta)
        subscription = Subscription(request_id, notifications)
        try:
            with self._calling():
                await self._transport.open_listen(subscription, request_id, data)
                wait = self._wait(timeout)
                with trio.move_on_after(wait) as waiting:
                    await subscription.wait_acknowledged()  # raises if the stream ended
                if waiting.cancelled_caught and not subscription.is_acknowledged:
                    raise TimeoutError(
                        f"subscriptions/listen: no acknowledgement within {wait:g} s"
                    )
            yield subscription
        finally:
            await self._transport.close_listen(request_id)

    # ---------------------------------------------------------------- helpers

    def _wait(
        self,
        timeout: float | None,
        progress: ProgressCallback | None = None,
        reset: bool = False,
    ) -> float:
        """The timeout handed to the session: seconds, and how progress bears on them.

        With a progress callback or resets it is a `CallTimeout`, which the session
        passes to the transport untouched (see `transports._client.calls`).
        """
        seconds = self._timeout if timeout is None else timeout
        if progress is None and not reset:
            return seconds
        return CallTimeout(seconds, CallOptions(progress, reset, self._max_total_timeout))

    def _with_token(
        self, meta: Mapping[str, Any] | None, progress: ProgressCallback | None, reset: bool
    ) -> Mapping[str, Any] | None:
        """``meta`` with a progress token when the call wants progress.

        To report it, or to restart its timeout on it: a server sends no progress for a
        request without a token.
        """
        if progress is None and not reset:
            return meta
        return {**(meta or {}), _PROGRESS_TOKEN: f"mcpcore-{next(self._tokens)}"}

    def _calling(self) -> _Calling:
        """Run one session call, a lost connection reported as such."""
        failure = self._transport.failure
        if failure is not None:
            raise failure
        return self._calling_context


class _Calling:
    """The context of session calls (a class, not a generator: it wraps every call).

    A closed `Connection` refuses to build requests (an MRTR retry after the server
    died, say) with `LocalProtocolError`: the reason worth reporting is the transport's.
    """

    __slots__ = ("_transport",)

    def __init__(self, transport: ClientTransport) -> None:
        self._transport = transport

    def __enter__(self) -> None:
        pass

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc_value, LocalProtocolError):
            failure = self._transport.failure
            if failure is not None:
                raise failure from None
