"""A `ClientSession` and a `Server` joined in memory: the whole sans-IO stack, no IO.

`ClientSide` is the session's `Requester`, `ServerSide` the server's `Outbound`; each
hands bytes straight to the other side's `Connection`, so every exchange completes
inside the awaited calls. What either side emits is recorded in a `Pair`, which the
autouse fixture checks against the schema of the revision in use.
"""

from __future__ import annotations

from typing import Any

from mcpcore import (
    CancelRequested,
    ErrorReceived,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    types,
)
from mcpcore.client import ClientCallbacks, ClientSession, Outcome
from mcpcore.server import Server
from tests.core.pair import INFO, Pair


class MemoryLink:
    """One client session talking to one server."""

    def __init__(
        self,
        server: Server,
        *,
        callbacks: ClientCallbacks | None = None,
        clock: Any = None,
    ) -> None:
        self.server = server
        self.client_side = ClientSide(self)
        self.server_side = ServerSide(self)
        self.session = ClientSession(
            self.client_side, client_info=INFO, callbacks=callbacks, clock=clock
        )
        self.pair = Pair()
        self.pair.client = self.session.connection
        self.pair.server = server.connection()
        server.attach(self.pair.server, self.server_side)
        #: Requests the server received, by method (to see what the cache saved).
        self.served: list[str] = []
        #: Notifications and progress the client received.
        self.received: list[NotificationReceived | ProgressReceived] = []

    @property
    def client(self) -> Any:
        """The client's Connection."""
        return self.pair.client

    @property
    def connection(self) -> Any:
        """The server's Connection."""
        return self.pair.server

    async def to_server(self, data: bytes) -> None:
        """Deliver the client's bytes; answer whatever they ask."""
        self.pair.record("client", data)
        for event in self.connection.receive(data):
            if isinstance(event, RequestReceived):
                self.served.append(event.method)
                reply = await self.server.handle_request(self.connection, event, self.server_side)
                if reply is not None:
                    await self.to_client(reply)
            elif isinstance(event, InvalidMessage) and event.reply is not None:
                await self.to_client(event.reply)
            elif isinstance(event, CancelRequested):
                self.server.request_cancelled(self.connection, event.request_id)
            elif isinstance(event, NotificationReceived):
                await self.server.handle_notification(self.connection, event)

    async def to_client(self, data: bytes) -> list[Any]:
        """Deliver the server's bytes; return the answers to the client's requests."""
        self.pair.record("server", data)
        outcomes: list[Any] = []
        for event in self.client.receive(data):
            if isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
                outcomes.append(event)
            elif isinstance(event, NotificationReceived):
                self.session.handle_notification(event)
                self.received.append(event)
            elif isinstance(event, ProgressReceived):
                self.received.append(event)
            elif isinstance(event, RequestReceived):
                outcomes.append(event)
        self.client_side.outcomes.extend(outcomes)
        return outcomes


class ClientSide:
    """The session's Requester."""

    def __init__(self, link: MemoryLink) -> None:
        self.link = link
        self.outcomes: list[Any] = []

    async def request(
        self, request_id: types.RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Deliver a request; its answer is there when the server is done."""
        await self.link.to_server(data)
        for index, outcome in enumerate(self.outcomes):
            if getattr(outcome, "request_id", None) == request_id and not isinstance(
                outcome, RequestReceived
            ):
                del self.outcomes[index]
                return outcome  # type: ignore[no-any-return]
        raise ConnectionError(f"no answer to {request_id!r}")

    async def send(self, data: bytes) -> None:
        """Deliver a notification."""
        await self.link.to_server(data)


class ServerSide:
    """The server's Outbound."""

    def __init__(self, link: MemoryLink) -> None:
        self.link = link

    async def send(self, data: bytes) -> None:
        """Deliver a notification to the client."""
        await self.link.to_client(data)

    async def request(
        self, request_id: types.RequestId, data: bytes
    ) -> ResponseReceived | ErrorReceived | InvalidResponse:
        """Deliver a server request; the session answers through its callbacks."""
        [asked] = await self.link.to_client(data)
        self.link.client_side.outcomes.remove(asked)
        assert isinstance(asked, RequestReceived), asked
        reply = await self.link.session.handle_server_request(asked)
        assert reply is not None
        self.link.pair.record("client", reply)
        [answer] = self.link.connection.receive(reply)
        assert isinstance(answer, ResponseReceived | ErrorReceived | InvalidResponse)
        return answer
