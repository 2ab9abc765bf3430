"""What the router asks of a deployment whose workers share their legacy sessions.

One worker alone keeps every legacy session in its memory. Several workers behind a
load balancer (shared/DESIGN.md §7) see a client's requests land anywhere, so the
router asks a `SharedSessions` (`transports.Deployment` opens one, with Redis) three
things:

* the prefix of the session ids this worker mints, which names it as their *owner*;
* for a request that names a session (``Mcp-Session-Id``, or 2024-11-05's
  ``sessionId``), whether another worker owns it: then the request is *forwarded* to
  that worker and its answer relayed back, byte for byte, so that every protocol rule
  keeps running in the one process that holds the session's `mcpcore.Connection`;
* whether the shared store is reachable: while it is not, legacy requests are refused
  with 503 and the 2026-07-28 era, which needs nothing shared but the key, goes on.

The interface lives here, below its implementation (`transports._deploy`), so that the
router and ``serve_http`` do not depend on Redis.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from transports._net.reply import Reply, ResponseWriter
from transports._net.request import HttpRequest

if TYPE_CHECKING:
    from mcpcore.server import Server
    from transports._net.limits import HttpLimits

__all__ = [
    "Dispatcher",
    "SessionSharing",
    "SharedSessions",
    "SharedStoreError",
    "session_owner",
]

#: Between the owner's name and the random part of a shared session id.
OWNER_SEPARATOR = "."


class SharedStoreError(ConnectionError):
    """The shared store (Redis) can't be reached: legacy requests can't be served now."""


def session_owner(session_id: str) -> str | None:
    """The worker a session id names as its owner (None: an unshared id)."""
    owner, separator, _ = session_id.partition(OWNER_SEPARATOR)
    return owner if separator else None


class Dispatcher(Protocol):
    """Answers a request that passed the gate (`transports._http.server.router.Router`)."""

    async def dispatch(
        self, request: HttpRequest, reply: Reply, http: ResponseWriter, principal: str | None
    ) -> None:
        """Answer a checked request as this worker's own."""


class SharedSessions(Protocol):
    """The legacy sessions of a deployment of several workers (see the module docstring).

    Attributes:
        worker: This worker's name, unique in the deployment.
    """

    worker: str

    @property
    def available(self) -> bool:
        """Whether the shared store is reachable, as far as this worker knows."""

    def serve(self, dispatcher: Dispatcher) -> None:
        """Answer the requests other workers forward here with ``dispatcher``."""

    async def check(self) -> bool:
        """Whether the shared store is reachable (asking it again if it was not)."""

    async def forward(
        self,
        owner: str,
        request: HttpRequest,
        reply: Reply,
        http: ResponseWriter,
        principal: str | None,
    ) -> None:
        """Have ``owner`` answer ``request``, and relay its answer to ``reply``."""


class SessionSharing(Protocol):
    """How a worker joins a deployment (`transports.Deployment`)."""

    def open(
        self, server: Server, limits: HttpLimits
    ) -> AbstractAsyncContextManager[SharedSessions]:
        """Join for the duration of the block: gives ``server`` the deployment's key."""
