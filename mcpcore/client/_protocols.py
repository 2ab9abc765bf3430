"""The driver contract: what a transport gives the client logic.

The client logic is sans-IO. It builds every request with its `Connection` and decides
what to do with every answer; a driver (the trio transports, or any event loop) only
moves the bytes and waits. The driver also owns the read side: it feeds what the server
sends to the same `Connection`, routes each terminal event to the request waiting for
it, and hands server requests and notifications to the `ClientSession`.
"""

from __future__ import annotations

from typing import Protocol, TypeAlias

from mcpcore.events import ErrorReceived, InvalidResponse, ResponseReceived
from mcpcore.types import RequestId

__all__ = ["Outcome", "Requester"]

#: How one of our requests ends: a result, the server's error, or an unusable answer.
Outcome: TypeAlias = ResponseReceived | ErrorReceived | InvalidResponse


class Requester(Protocol):
    """What a driver gives the client logic: it moves bytes and waits; the logic decides."""

    async def request(
        self, request_id: RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Write a request the session built; return the event that ends it.

        On timeout the driver gives up on the request (``Connection.cancel`` plus
        writing the ``notifications/cancelled`` it returns, or closing the response
        stream on 2026-07-28 Streamable HTTP) and raises `TimeoutError`. ``initialize``
        can't be cancelled ("the client MUST NOT attempt to cancel its initialize
        request", 2024-11-05 basic/lifecycle): on its timeout a driver just raises
        `TimeoutError`, and should close the connection. A closed transport raises
        `ConnectionError`.

        Args:
            request_id: The id the Connection gave the request.
            data: The request, one JSON message without framing.
            timeout: Seconds to wait for the answer; None waits for the driver's default.

        Returns:
            The `ResponseReceived`, `ErrorReceived` or `InvalidResponse` for ``request_id``.
        """
        ...

    async def send(self, data: bytes) -> None:
        """Write a notification (initialized, cancelled, roots/list_changed...).

        Args:
            data: The notification, one JSON message without framing.
        """
        ...
