"""What a `Client` needs from a transport: the one contract every client driver fulfils.

A transport is a `mcpcore.client.Requester` (it writes requests and returns the events
that end them) plus the few things the protocol does differently on each wire: a
2026-07-28 listen stream is a long-lived request on stdio, an SSE response on HTTP;
giving up on it is ``notifications/cancelled`` on one and closing the stream on the
other. The same object is the session's requester and the `Client`'s transport. Two
implement it: `transports._client.stream.StreamDriver` (stdio and WebSocket, each with
its own `transports._client.stream.StreamLink`) and the Streamable HTTP transport
(`transports._http.client.streamable.StreamableTransport`).
"""

from __future__ import annotations

from typing import Protocol

from mcpcore.client import ClientSession, Outcome
from mcpcore.types import RequestId
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import Subscription

__all__ = ["ClientTransport"]


class ClientTransport(Protocol):
    """A client driver: moves the bytes, waits for answers, fails calls when it breaks."""

    def bind(self, session: ClientSession) -> None:
        """Attach the session built over this transport, and start moving messages."""
        ...

    @property
    def failure(self) -> ConnectionClosedError | None:
        """Why the connection is gone, once it is (None while it works)."""
        ...

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """`mcpcore.client.Requester.request`, with `transports._client.calls` options.

        A ``timeout`` that is a `transports._client.calls.CallTimeout` also says how the
        call waits (its progress callback, timeout resets). On timeout and on
        cancellation the request is given up on the wire; `TimeoutError` on timeout,
        the connection's `ConnectionClosedError` when it is gone.
        """
        ...

    async def send(self, data: bytes) -> None:
        """Write a notification."""
        ...

    async def open_listen(
        self, subscription: Subscription, request_id: RequestId, data: bytes
    ) -> None:
        """Start a ``subscriptions/listen`` request and route its stream to ``subscription``."""
        ...

    async def close_listen(self, request_id: RequestId) -> None:
        """End a listen stream (if the server has not) and stop routing it.

        Must not leave half a message on the wire when cancelled.
        """
        ...

    async def aclose(self) -> None:
        """Close the connection; every pending call fails. Always closes, even cancelled."""
        ...
