"""An in-memory `Requester` for the client logic: a real server Connection, scripted answers.

`MemoryRequester` feeds every request the session builds to a real
``Connection(SERVER)``; each `RequestReceived` is answered by a scripted handler, and
the server's reply goes back through the session's client Connection, whose terminal
event is returned, as a transport would. ``intercepts`` answer chosen methods before
the server Connection sees them (a server that ignores a method, or one that breaks
the rules the server Connection enforces).

Every message the client emits is recorded with the revision it belongs to, and
`check_all` validates them against the official schemas (tests/oracle.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from msgspec import UNSET

from mcpcore import (
    LATEST_LEGACY_VERSION,
    SERVER,
    Connection,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore.client import ClientCallbacks, ClientSession
from mcpcore.types import PROTOCOL_VERSION_META_KEY, RequestId
from tests.oracle import oracle

CLIENT_INFO = types.Implementation(name="test-client", version="1.0")
SERVER_INFO = types.Implementation(name="test-server", version="2.0")
MODERN = "2026-07-28"


def server_capabilities() -> types.ServerCapabilities:
    """A server that advertises everything."""
    return types.ServerCapabilities(
        tools=types.ServerToolsCapability(list_changed=True),
        resources=types.ServerResourcesCapability(subscribe=True, list_changed=True),
        prompts=types.ServerPromptsCapability(list_changed=True),
        completions={},
        logging={},
    )


@dataclass
class ErrorReply:
    """Answer with a JSON-RPC error."""

    code: int
    message: str
    data: Any = UNSET


@dataclass
class RawResult:
    """Answer with this result object as it is, bypassing the server Connection."""

    result: Any


@dataclass
class Timeout:
    """Don't answer in time, so the client gives up.

    ``late``: an answer sent after all, crossing the cancellation.
    """

    late: Any = None


Handler = Callable[[RequestReceived], Any]
Intercept = Callable[[dict[str, Any]], Any]

#: Every requester made during the current test; `every_message_checked` checks them.
LIVE: list[MemoryRequester] = []


def default_answer(event: RequestReceived) -> Any:
    """Answers for the lifecycle methods."""
    if event.method == "initialize":
        return types.InitializeResult(
            protocol_version=event.protocol_version or LATEST_LEGACY_VERSION,
            capabilities=server_capabilities(),
            server_info=SERVER_INFO,
            instructions="legacy instructions",
        )
    if event.method == "server/discover":
        return types.DiscoverResult(
            supported_versions=[MODERN, LATEST_LEGACY_VERSION],
            capabilities=server_capabilities(),
            instructions="modern instructions",
            ttl_ms=60_000,
            cache_scope="public",
        )
    if event.method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        return types.Result()
    raise AssertionError(f"no scripted answer for {event.method}")


def scripted(answers: Mapping[str, Any] | None = None) -> Handler:
    """A handler answering by method: a value, or a function of the event."""
    table = dict(answers or {})

    def handle(event: RequestReceived) -> Any:
        answer = table.get(event.method)
        if answer is None:
            return default_answer(event)
        return answer(event) if callable(answer) else answer

    return handle


@dataclass
class Sent:
    """One message the client wrote."""

    data: bytes
    revision: str
    answers: str | None = None  # the method of the server request a reply answers

    @property
    def message(self) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(self.data)
        return decoded


@dataclass
class MemoryRequester:
    """A driver with no IO: a real server Connection answers through ``handler``."""

    handler: Handler = field(default_factory=scripted)
    server: Connection = field(
        default_factory=lambda: Connection(
            SERVER, capabilities=server_capabilities(), implementation=SERVER_INFO
        )
    )
    intercepts: dict[str, Intercept] = field(default_factory=dict)
    client: Connection | None = None
    sent: list[Sent] = field(default_factory=list)
    server_events: list[Event] = field(default_factory=list)
    timeouts: list[float | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        LIVE.append(self)

    # -- the Requester protocol ------------------------------------------------

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> ResponseReceived | ErrorReceived | InvalidResponse:
        self.timeouts.append(timeout)
        self._emit(data)
        message = json.loads(data)
        intercept = self.intercepts.get(message["method"])
        if intercept is not None:
            reply = self._intercepted(request_id, intercept(message))
        else:
            reply = self._through_server(request_id, data)
        return self._deliver(request_id, reply)

    async def send(self, data: bytes) -> None:
        self.write(data)

    def write(self, data: bytes) -> list[Event]:
        """Write client bytes to the server outside a request/answer (a listen stream)."""
        self._emit(data)
        events = self.server.receive(data)
        self.server_events.extend(events)
        return events

    # -- moving bytes ------------------------------------------------------------

    def _through_server(self, request_id: RequestId, data: bytes) -> bytes:
        events = self.server.receive(data)
        self.server_events.extend(events)
        [event] = events
        if isinstance(event, InvalidMessage):
            assert event.reply is not None
            return event.reply
        assert isinstance(event, RequestReceived)
        answer = self.handler(event)
        if isinstance(answer, Timeout):
            self._time_out(request_id, answer, event)
        if isinstance(answer, ErrorReply):
            reply = self.server.send_error(
                event.request_id, answer.code, answer.message, answer.data
            )
        elif isinstance(answer, RawResult):
            reply = jsonrpc.encode_result_response(event.request_id, answer.result)
        else:
            reply = self.server.send_result(event.request_id, answer)
        assert reply is not None
        return reply

    def _intercepted(self, request_id: RequestId, answer: Any) -> bytes:
        if isinstance(answer, Timeout):
            self._time_out(request_id, answer, None)
        if isinstance(answer, ErrorReply):
            return jsonrpc.encode_error_response(
                request_id, answer.code, answer.message, answer.data
            )
        assert isinstance(answer, RawResult), answer
        return jsonrpc.encode_result_response(request_id, answer.result)

    def _time_out(
        self, request_id: RequestId, answer: Timeout, event: RequestReceived | None
    ) -> None:
        """Give up as a driver does: Connection.cancel, write the notification, raise."""
        assert self.client is not None
        cancel = self.client.cancel(request_id, "timed out")
        assert cancel is not None
        self._emit(cancel)
        if answer.late is not None and event is not None:
            # The server answers before it reads the cancellation: the answer crosses it
            # and the client drops it quietly.
            late = self.server.send_result(event.request_id, answer.late)
            assert late is not None
            assert self.client.receive(late) == []
        self.server_events.extend(self.server.receive(cancel))
        raise TimeoutError

    def _deliver(
        self, request_id: RequestId, reply: bytes
    ) -> ResponseReceived | ErrorReceived | InvalidResponse:
        assert self.client is not None
        [event] = self.client.receive(reply)
        assert isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse), event
        assert event.request_id == request_id
        return event

    def _emit(self, data: bytes, answers: str | None = None) -> None:
        message = json.loads(data)
        meta = (message.get("params") or {}).get("_meta") or {}
        revision = meta.get(PROTOCOL_VERSION_META_KEY)
        if revision is None:
            # A notification, or a legacy message: the version the client speaks now.
            assert self.client is not None
            revision = self.client.protocol_version or LATEST_LEGACY_VERSION
        self.sent.append(Sent(data, revision, answers))

    # -- what the server asks (legacy) ----------------------------------------------

    async def server_asks(self, session: ClientSession, method: str, params: Any = None) -> Event:
        """The server sends a request; the session answers it; the server's event."""
        _, data = self.server.send_request(method, params)
        reply = await self.raw_server_request(session, data, method)
        [answer] = self.server.receive(reply)
        return answer

    async def raw_server_request(self, session: ClientSession, data: bytes, method: str) -> bytes:
        """Feed request bytes to the client; return the reply the client writes."""
        assert self.client is not None
        [event] = self.client.receive(data)
        if isinstance(event, InvalidMessage):
            reply = event.reply  # the client Connection refused it by itself
        else:
            assert isinstance(event, RequestReceived)
            reply = await session.handle_server_request(event)
        assert reply is not None
        self._emit(reply, method)
        return reply

    # -- looking at what happened ------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The requests the client wrote, decoded."""
        return [
            sent.message for sent in self.sent if "id" in sent.message and "method" in sent.message
        ]

    @property
    def methods(self) -> list[str]:
        """The methods of the requests the client wrote."""
        return [request["method"] for request in self.requests]

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """The notifications the client wrote, decoded."""
        return [sent.message for sent in self.sent if "id" not in sent.message]

    def check_schema(self) -> int:
        """Validate every message the client wrote; returns how many."""
        for sent in self.sent:
            oracle(sent.revision).check(sent.data, method=sent.answers)
        return len(self.sent)


def make_session(
    handler: Handler | None = None,
    *,
    server: Connection | None = None,
    intercepts: dict[str, Intercept] | None = None,
    callbacks: ClientCallbacks | None = None,
    clock: Callable[[], float] | None = None,
    supported_versions: tuple[str, ...] | None = None,
) -> tuple[ClientSession, MemoryRequester]:
    """A session wired to a `MemoryRequester`."""
    requester = MemoryRequester(handler or scripted(), intercepts=intercepts or {})
    if server is not None:
        requester.server = server
    session = ClientSession(
        requester,
        client_info=CLIENT_INFO,
        callbacks=callbacks,
        clock=clock,
        supported_versions=supported_versions,
    )
    requester.client = session.connection
    return session, requester


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def every_message_checked() -> Iterator[None]:
    """Fixture body: after each test, validate what every requester recorded."""
    LIVE.clear()
    yield
    live = list(LIVE)
    LIVE.clear()
    for requester in live:
        requester.check_schema()
