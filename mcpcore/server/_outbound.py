"""What a driver gives the server for one request: a way to write, and to ask the client.

The server never does IO. For each request it is handed an `Outbound`, through which it
writes the notifications that belong to that request (progress, log messages, a listen
stream's acknowledgement) and, in the legacy era, sends a server-to-client request and
awaits its answer. On stdio every request shares one outbound; on Streamable HTTP each
request's outbound is its own response stream.
"""

from __future__ import annotations

from typing import Protocol

from mcpcore.events import ErrorReceived, InvalidResponse, ResponseReceived
from mcpcore.types import RequestId

__all__ = ["Outbound"]


class Outbound(Protocol):
    """The driver's side of one request (or of one connection, for notifications)."""

    async def send(self, data: bytes) -> None:
        """Write one message (a notification) to the client.

        A closed peer may raise `ConnectionError`; the server treats that as "nobody is
        listening any more".
        """

    async def request(
        self, request_id: RequestId, data: bytes
    ) -> ResponseReceived | ErrorReceived | InvalidResponse:
        """Write a server-to-client request (legacy era) and return the event that ends it.

        The driver routes the client's answer for ``request_id`` here. It may raise
        `ConnectionError` when the client goes away first.
        """
