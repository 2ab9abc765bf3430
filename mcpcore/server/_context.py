"""`Context`: what a handler knows about its request, and what it can do while answering.

A handler declares a parameter annotated `Context` to receive one. Through it the
handler reports progress, sends log messages, sees whether the client cancelled, and
asks the client for input (`elicit`, `sample`, `list_roots`) the same way in both
eras: a server-to-client request in the legacy era, an `InputRequiredResult` and a
retry in 2026-07-28 (see `mcpcore.server._input`). In 2026-07-28 the handler runs
again from the start on each retry, so it should ask its questions before doing
anything it must not repeat, and keep what it needs across rounds in `state`.

A tool that runs as a task (2026-07-28 tasks extension, 2025-11-25 core tasks) gets a
`Context` too, detached from the request that started it: its questions become the
task's ``inputRequests`` (answered with ``tasks/update``, or in 2025-11-25 asked by the
server on a ``tasks/result`` stream; after which it runs again from the start), and
progress and log messages are dropped ("not supported for tasks", SEP-2663).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

from mcpcore import jsonrpc
from mcpcore._capabilities import required_client_capabilities
from mcpcore._connection import Connection
from mcpcore.errors import McpError
from mcpcore.events import ErrorReceived, RequestReceived, ResponseReceived
from mcpcore.server._errors import MissingCapabilityError
from mcpcore.server._input import MAX_INPUT_REQUESTS, InputRequired, Rounds
from mcpcore.server._outbound import Outbound
from mcpcore.types import (
    UNSET,
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequest,
    ListRootsRequest,
    ListRootsResult,
    LoggingLevel,
    ProgressToken,
    RequestId,
    SamplingMessage,
)
from mcpcore.versions import Era, era_of

__all__ = ["Context", "StartTask", "TaskPhase"]

_METHOD_OF: Final = {
    ElicitRequest: "elicitation/create",
    CreateMessageRequest: "sampling/createMessage",
    ListRootsRequest: "roots/list",
}


class TaskPhase(enum.Enum):
    """Where a tool that may run as a task stands (2026-07-28 tasks extension)."""

    #: Not a task, and it won't become one: an ordinary request.
    NONE = "none"
    #: Answering the request while gathering input first: `Context.start_task` turns
    #: the request into a task.
    GATHERING = "gathering"
    #: Running as a task, after the request was answered with the task.
    RUNNING = "running"


class StartTask(Exception):  # noqa: N818 (a signal, not an error)
    """Raised by `Context.start_task` while gathering: the server answers with a task."""


class Context:
    """One request, as its handler sees it.

    Attributes:
        request_id: The JSON-RPC id of the request.
        method: Its method.
        params: Its params, decoded.
        protocol_version: The revision it is served under.
        client_capabilities: What the client declared (on this request, in 2026-07-28).
        principal: Who is asking, as the driver authenticated them (None when unknown).
        state: Handler data kept across the rounds of a 2026-07-28 multi round-trip
            request (sealed into the requestState, so keep it small and JSON-friendly;
            it is readable by the client, never secret).
    """

    __slots__ = (
        "_asked",
        "_connection",
        "_outbound",
        "_rounds",
        "_task_phase",
        "client_capabilities",
        "method",
        "params",
        "principal",
        "protocol_version",
        "request_id",
        "state",
    )

    def __init__(
        self,
        connection: Connection,
        outbound: Outbound,
        event: RequestReceived,
        *,
        principal: str | None = None,
        rounds: Rounds | None = None,
    ) -> None:
        self._connection = connection
        self._outbound = outbound
        self._rounds = rounds
        self._task_phase = TaskPhase.NONE
        self._asked = 0
        self.request_id: RequestId = event.request_id
        self.method = event.method
        self.params = event.params
        self.protocol_version = event.protocol_version
        self.client_capabilities = event.client_capabilities or ClientCapabilities()
        self.principal = principal
        self.state: dict[str, Any] = {} if rounds is None else rounds.handler_state

    @property
    def era(self) -> Era:
        """The era the request is served in."""
        version = self.protocol_version
        return Era.MODERN if version is not None and era_of(version) is Era.MODERN else Era.LEGACY

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled this request (anything sent now is dropped).

        A task is cancelled by cancelling its run (``tasks/cancel``), never seen here.
        """
        if self._task_phase is TaskPhase.RUNNING:
            return False
        return self._connection.is_cancelled(self.request_id)

    @property
    def in_task(self) -> bool:
        """Whether the handler runs as a task (2026-07-28 tasks extension)."""
        return self._task_phase is TaskPhase.RUNNING

    async def start_task(self) -> None:
        """Mark where a tool that gathers input first becomes a task.

        For a tool registered with ``task=...`` and ``gather_input_first=True``: what
        the handler asks before this call is asked within the request (2026-07-28
        multi round-trip); here the request is answered with a task, and the handler
        runs again from the start as the task, its earlier answers at hand ("MRTR →
        Tasks composition", SEP-2663). Elsewhere it does nothing.
        """
        if self._task_phase is TaskPhase.GATHERING:
            raise StartTask

    @property
    def progress_token(self) -> ProgressToken | None:
        """The progress token the client sent, if it asked for progress."""
        meta = getattr(self.params, "meta", UNSET)
        token = None if meta is UNSET else meta.get("progressToken")
        return token if isinstance(token, (int, str)) and not isinstance(token, bool) else None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it; each value must exceed the last."""
        if self._task_phase is TaskPhase.RUNNING:
            return  # "Progress ... not supported for tasks" (SEP-2663)
        data = self._connection.send_progress(self.request_id, progress, total, message)
        if data is not None:
            await self._outbound.send(data)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send a log message, if the client asked for messages of this level."""
        if self._task_phase is TaskPhase.RUNNING:
            return  # "log messages are not supported for tasks" (SEP-2663)
        message = self._connection.send_log_message(
            level, data, logger=logger, request_id=self.request_id
        )
        if message is not None:
            await self._outbound.send(message)

    async def close_stream(self) -> bool:
        """End this request's response stream now, while the request goes on.

        2025-11-25 Streamable HTTP (SSE polling, SEP-1699): "(S) MAY then close the
        connection without ending the stream"; the client resumes it with a GET and
        ``Last-Event-ID``, and gets what the handler sent meanwhile, its answer
        included, from the transport's event store. False (and nothing happens) where
        the transport has no resumable stream for the request: stdio, 2026-07-28, or a
        session before 2025-11-25.
        """
        if self._task_phase is TaskPhase.RUNNING:
            return False
        close = getattr(self._outbound, "close_stream", None)
        if close is None:
            return False
        return bool(await close())

    def client_supports(self, method: str, params: Any = None) -> bool:
        """Whether the client declared what ``method`` (an input request) needs."""
        return self._missing(method, params) is None

    def _missing(self, method: str, params: Any) -> ClientCapabilities | None:
        if self._task_phase is TaskPhase.RUNNING:
            # The request that started the task is answered: its own capabilities.
            return required_client_capabilities(method, params, self.client_capabilities)
        return self._connection.missing_capabilities(self.request_id, method, params)

    async def request_input(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Ask the client for several things at once; returns the answers by key.

        In 2026-07-28 every unanswered key goes into one `InputRequiredResult`, so the
        client sees all the questions together. Raises `MissingCapabilityError` (answered
        -32021) when the client did not declare what a request needs.
        """
        if len(requests) > MAX_INPUT_REQUESTS:
            raise ValueError(f"at most {MAX_INPUT_REQUESTS} input requests at once")
        for request in requests.values():
            method = _METHOD_OF[type(request)]
            required = self._missing(method, getattr(request, "params", None))
            if required is not None:
                raise MissingCapabilityError(required)
        if self.era is Era.LEGACY and self._task_phase is not TaskPhase.RUNNING:
            return {key: await self._ask_legacy(request) for key, request in requests.items()}
        # A task (either era) asks as a 2026-07-28 round does: its questions become the
        # task's input requests; a 2025-11-25 one is asked on a tasks/result stream.
        rounds = self._rounds
        if rounds is None:
            # "ONLY tools/call, resources/read and prompts/get" may answer
            # InputRequiredResult (2026-07-28 basic/patterns/mrtr).
            raise RuntimeError(
                f"{self.method} can't ask the client for input in 2026-07-28: only "
                "tools/call, resources/read and prompts/get can"
            )
        answers: dict[str, Any] = {}
        missing: dict[str, InputRequest] = {}
        for key, request in requests.items():
            answer = rounds.answer(key, _METHOD_OF[type(request)])
            if answer is None:
                missing[key] = request
            else:
                answers[key] = answer
        if missing:
            raise InputRequired(missing)
        return answers

    async def elicit(
        self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None
    ) -> ElicitResult:
        """Ask the user to fill in a form (a flat object of primitive properties)."""
        params = ElicitRequestFormParams(message=message, requested_schema=dict(requested_schema))
        return await self._ask_one(key, ElicitRequest(params=params))  # type: ignore[no-any-return]

    async def elicit_url(
        self, message: str, url: str, *, key: str | None = None, elicitation_id: str | None = None
    ) -> ElicitResult:
        """Ask the user to visit a URL (for anything secret: 2025-11-25 URL mode)."""
        key = key or self._next_key("elicitation")
        # 2025-11-25 requires an elicitationId; 2026-07-28 removed it.
        identifier = (elicitation_id or key) if self.era is Era.LEGACY else UNSET
        params = ElicitRequestURLParams(message=message, url=url, elicitation_id=identifier)
        return await self._ask_one(key, ElicitRequest(params=params))  # type: ignore[no-any-return]

    async def sample(
        self,
        messages: list[SamplingMessage],
        *,
        max_tokens: int,
        key: str | None = None,
        **options: Any,
    ) -> CreateMessageResult:
        """Ask the client's model for a message (``options``: the other params' fields)."""
        params = CreateMessageRequestParams(messages=messages, max_tokens=max_tokens, **options)
        return await self._ask_one(key, CreateMessageRequest(params=params))  # type: ignore[no-any-return]

    async def list_roots(self, *, key: str | None = None) -> ListRootsResult:
        """Ask the client for its roots."""
        return await self._ask_one(key, ListRootsRequest())  # type: ignore[no-any-return]

    async def _ask_one(self, key: str | None, request: InputRequest) -> Any:
        key = key or self._next_key(_METHOD_OF[type(request)].split("/")[0])
        return (await self.request_input({key: request}))[key]

    def _next_key(self, kind: str) -> str:
        # Deterministic, so the same question gets the same key on every round.
        self._asked += 1
        return f"{kind}-{self._asked}"

    async def _ask_legacy(self, request: InputRequest) -> Any:
        method = _METHOD_OF[type(request)]
        request_id, data = self._connection.send_request(method, getattr(request, "params", None))
        event = await self._outbound.request(request_id, data)
        if isinstance(event, ResponseReceived):
            return event.result
        if isinstance(event, ErrorReceived):
            raise McpError.from_error(event.error, event.method)
        raise McpError(jsonrpc.INTERNAL_ERROR, "The client's answer could not be used")
