"""Bookkeeping for requests in flight, in both directions, and a bounded memory of closed ids.

A request id lives in exactly one of three places: in flight (one of the dicts the
`Connection` keeps), recently closed (`RecentIds`, so a late answer after a cancel is
dropped quietly, as h2 remembers closed streams), or forgotten.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from mcpcore.methods import MethodSpec
from mcpcore.types import (
    ClientCapabilities,
    LoggingLevel,
    ProgressToken,
    RequestId,
    SubscriptionFilter,
)

__all__ = ["IncomingRequest", "OutgoingRequest", "RecentIds"]


@dataclass(slots=True)
class IncomingRequest:
    """A request the peer sent us that we have not answered yet."""

    spec: MethodSpec
    protocol_version: str | None
    client_capabilities: ClientCapabilities | None
    progress_token: ProgressToken | None
    log_level: LoggingLevel | None
    last_progress: float | None = None
    #: The peer sent notifications/cancelled: our answer, when it comes, is not sent.
    cancelled: bool = False
    #: subscriptions/listen only: what the client asked for, and what we honoured
    #: (None until the acknowledgement went out).
    requested_filter: SubscriptionFilter | None = None
    honoured_filter: SubscriptionFilter | None = None


@dataclass(slots=True)
class OutgoingRequest:
    """A request we sent that the peer has not answered yet."""

    spec: MethodSpec
    progress_token: ProgressToken | None
    last_progress: float | None = None
    #: subscriptions/listen only: the filter the server acknowledged (None until then).
    honoured_filter: SubscriptionFilter | None = None
    #: subscriptions/listen only: whether the acknowledgement arrived.
    acknowledged: bool = False
    #: Anything the caller wants to find again with the response (unused by the core).
    context: Any = None


class RecentIds:
    """A set of request ids that forgets its oldest member beyond ``capacity``."""

    __slots__ = ("_members", "_order")

    def __init__(self, capacity: int) -> None:
        self._order: deque[RequestId] = deque(maxlen=capacity)
        self._members: set[RequestId] = set()

    def add(self, request_id: RequestId) -> None:
        """Remember ``request_id``, forgetting the oldest id if full."""
        if request_id in self._members:
            return
        if len(self._order) == self._order.maxlen:
            self._members.discard(self._order[0])
        self._order.append(request_id)
        self._members.add(request_id)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._members

    def __len__(self) -> int:
        return len(self._members)
