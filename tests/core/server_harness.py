"""A client `Connection` and a `Server` back to back, with no IO.

The harness plays the driver: it hands each request to `Server.handle_request`, routes
what the server writes through its `Outbound` to the client, and answers the server's
own requests (legacy era) with a scripted function. Everything either side emits is
recorded in a `Pair`, so the autouse fixture checks it against the schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcpcore import (
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    RequestReceived,
    ResponseReceived,
    types,
)
from mcpcore.server import Server
from tests.core.pair import INFO, Pair

Answer = Callable[[RequestReceived], Any]


def run(coroutine: Any) -> Any:
    """Run one coroutine to completion (the harness never really waits)."""
    return asyncio.run(coroutine)


class Harness:
    """Drives one client Connection against ``server``."""

    def __init__(
        self,
        server: Server,
        *,
        client_caps: types.ClientCapabilities | None = None,
        answer: Answer | None = None,
    ) -> None:
        self.server = server
        self.pair = Pair(client_caps=client_caps)
        self.pair.server = server.connection()
        self.client = self.pair.client
        self.connection = self.pair.server
        self.answer = answer
        #: What the client received besides the answers to its requests (events of
        #: several kinds, so tests read their attributes freely).
        self.notifications: list[Any] = []
        #: The requests the server sent the client (legacy era).
        self.asked: list[RequestReceived] = []
        #: Who the driver says is asking (an authorization context), if anyone.
        self.principal: str | None = None
        server.attach(self.connection, self)

    # -- the Outbound the server writes to ------------------------------------

    async def send(self, data: bytes) -> None:
        """Outbound.send: deliver to the client."""
        self.notifications.extend(self.pair.to_client(data))

    async def request(
        self, request_id: types.RequestId, data: bytes
    ) -> ResponseReceived | ErrorReceived | InvalidResponse:
        """Outbound.request: the client answers with the scripted function."""
        [asked] = self.pair.to_client(data)
        assert isinstance(asked, RequestReceived), asked
        self.asked.append(asked)
        assert self.answer is not None, f"no answer scripted for {asked.method}"
        result = self.answer(asked)
        if isinstance(result, types.Error):
            reply = self.client.send_error(asked.request_id, result.code, result.message)
        else:
            reply = self.client.send_result(asked.request_id, result)
        [event] = self.pair.to_server(reply)
        assert isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse), event
        return event

    # -- the client's side ------------------------------------------------------

    async def call(
        self, method: str, params: Any = None, *, invalid: bool = False, **kwargs: Any
    ) -> Event:
        """Send a request; return the client's event that ends it.

        ``invalid``: the request breaks the schema on purpose (the server must refuse
        or repair it), so it is left out of the schema check.
        """
        _, data = self.client.send_request(method, params, **kwargs)
        [event] = self.pair.to_server(data)
        if invalid:
            self.pair.forget_last("client")
        return await self._answer(event)

    async def deliver(self, data: bytes) -> Event:
        """Hand bytes the client built to the server; return the client's final event."""
        [event] = self.pair.to_server(data)
        return await self._answer(event)

    async def _answer(self, event: Event) -> Event:
        if isinstance(event, InvalidMessage):
            assert event.reply is not None, event
            [answer] = self.pair.to_client(event.reply)
            return answer
        assert isinstance(event, RequestReceived), event
        reply = await self.server.handle_request(
            self.connection, event, self, principal=self.principal
        )
        if reply is None:
            return event  # nothing yet: a listen stream, or a cancelled request
        events = self.pair.to_client(reply)
        *notifications, final = events
        self.notifications.extend(notifications)
        return final

    async def result(
        self, method: str, params: Any = None, *, invalid: bool = False, **kwargs: Any
    ) -> Any:
        """Send a request that must succeed; return its result."""
        event = await self.call(method, params, invalid=invalid, **kwargs)
        assert isinstance(event, ResponseReceived), event
        return event.result

    async def handshake(self, version: str = "2025-11-25") -> types.InitializeResult:
        """The legacy handshake, answered by the server."""
        params = types.InitializeRequestParams(
            protocol_version=version, capabilities=self.pair.client_caps, client_info=INFO
        )
        result = await self.result("initialize", params)
        self.pair.to_server(self.client.send_notification("notifications/initialized"))
        assert isinstance(result, types.InitializeResult)
        return result

    def go_modern(self) -> None:
        """The client speaks 2026-07-28."""
        self.client.start_modern()
