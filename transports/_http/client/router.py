"""Where each message the server sends goes, whichever response or stream carried it.

Over HTTP the server's messages arrive on many streams at once: the JSON body or the
event stream answering each POST, a legacy session's GET stream, a stream resumed with
``Last-Event-ID``, the 2024-11-05 transport's one GET stream. They all feed the one
client `Connection` through `Router.receive`, whose events `EventRouter` routes as
for every client transport (`transports._client.routing`). Here the replies to a
legacy server's requests are POSTed (`Router` is given the function that POSTs), and
so is the error reply to garbage, in the legacy era only: "(C) MUST NOT POST
responses" to a 2026-07-28 server (and it sends no requests to answer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from mcpcore import Phase, RemoteProtocolError
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import NotificationDispatcher
from transports._client.routing import MAX_SERVER_REQUESTS, EventRouter

__all__ = ["Router"]


class Router(EventRouter):
    """Routes what the server sends to the calls, streams and callbacks waiting for it.

    Args:
        nursery: Where the server's requests are answered.
        post: POSTs one message of ours (a reply to the server's request).
        notifications: Where notifications outside listen streams go, if anywhere.
        max_server_requests: See `MAX_SERVER_REQUESTS`.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        post: Callable[[bytes], Awaitable[None]],
        *,
        notifications: NotificationDispatcher | None = None,
        max_server_requests: int = MAX_SERVER_REQUESTS,
    ) -> None:
        super().__init__(
            nursery, notifications=notifications, max_server_requests=max_server_requests
        )
        self._post = post

    async def receive(self, message: bytes) -> None:
        """Feed one message from the server to the Connection and route its events."""
        try:
            events = self.session.connection.receive(message)
        except RemoteProtocolError as exc:
            self.fail(ConnectionClosedError(f"the server broke the protocol: {exc}"))
            return
        for event in events:
            await self.route(event)

    async def _deliver(self, data: bytes) -> None:
        """POST one message of ours (see `EventRouter._deliver`)."""
        await self._post(data)

    def _answers_garbage(self) -> bool:
        # "(C) MUST NOT POST responses" to a 2026-07-28 server.
        return self.session.connection.phase is not Phase.MODERN
