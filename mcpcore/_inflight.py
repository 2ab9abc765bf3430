"""Every request in flight, both ways, and a bounded memory of the ids we gave up on.

A request id lives in one place at a time: in flight (`RequestTable.incoming` or
`RequestTable.outgoing`), given up on (remembered in a bounded set, so a late answer
after a cancel is dropped quietly, as h2 remembers closed streams), or forgotten.
Ids are compared exactly: ``"7"`` and ``7`` are different requests.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

import msgspec

from mcpcore._state import Kind
from mcpcore.errors import LocalProtocolError
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    ClientCapabilities,
    LoggingLevel,
    ProgressToken,
    RequestId,
    SubscriptionFilter,
)

__all__ = [
    "MAX_RECENTLY_CLOSED_IDS",
    "MAX_REQUESTS_IN_FLIGHT",
    "MAX_SUBSCRIPTIONS",
    "IncomingRequest",
    "OutgoingRequest",
    "RecentIds",
    "RequestTable",
]

#: Requests in flight per direction. The trio runtime stops reading long before this
#: (its handler cap is the real backpressure); this bound is the core's own guarantee
#: for embedders that don't cap: a peer that pipelines more gets -32600 instead of
#: growing our tables. 64 Ki entries of ~200 bytes is ~13 MB at worst.
MAX_REQUESTS_IN_FLIGHT: Final = 65_536
#: Ids of requests we gave up on (cancelled, timed out), remembered so that their late
#: answers are dropped quietly rather than reported as strays. Sized to cover a whole
#: table of in-flight requests cancelled at once.
MAX_RECENTLY_CLOSED_IDS: Final = 65_536
#: Open subscriptions/listen streams we serve per connection: the Python SDK's default
#: (``max_subscriptions=1024``). Each costs a filter here and a task in the driver.
MAX_SUBSCRIPTIONS: Final = 1024


class IncomingRequest(msgspec.Struct, gc=False):
    """A request the peer sent us that we have not answered yet.

    (Mutable Structs rather than dataclasses, here and below: one is built per
    request, and a Struct is built several times faster.)
    """

    spec: MethodSpec
    #: What the request is to the lifecycle (`mcpcore._state.KINDS`).
    kind: Kind
    #: What its method does beyond the lifecycle, or None (`mcpcore._connection`'s
    #: effect table, opaque here).
    effects: Any
    protocol_version: str | None
    client_capabilities: ClientCapabilities | None
    progress_token: ProgressToken | None
    log_level: LoggingLevel | None
    last_progress: float | None = None
    #: The peer sent notifications/cancelled: our answer, when it comes, is not sent.
    cancelled: bool = False
    #: subscriptions/listen only: what the client asked for, and what we honour (None
    #: until the acknowledgement went out).
    requested_filter: SubscriptionFilter | None = None
    honoured_filter: SubscriptionFilter | None = None


class OutgoingRequest(msgspec.Struct, gc=False):
    """A request we sent that the peer has not answered yet."""

    spec: MethodSpec
    #: What the request is to the lifecycle (`mcpcore._state.KINDS`).
    kind: Kind
    #: What its method does beyond the lifecycle, or None (as for `IncomingRequest`).
    effects: Any
    progress_token: ProgressToken | None
    last_progress: float | None = None
    #: subscriptions/listen only: the filter the server acknowledged (None until then).
    honoured_filter: SubscriptionFilter | None = None


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


class RequestTable:
    """The requests of one conversation that are still open, in both directions."""

    __slots__ = (
        "_by_method",
        "_by_token",
        "_given_up",
        "_max_in_flight",
        "_max_subscriptions",
        "_next_id",
        "incoming",
        "outgoing",
        "subscriptions",
    )

    def __init__(self) -> None:
        # The limits are read when the table is made, so a test can lower them.
        self._max_in_flight = MAX_REQUESTS_IN_FLIGHT
        self._max_subscriptions = MAX_SUBSCRIPTIONS
        self.incoming: dict[RequestId, IncomingRequest] = {}
        self.outgoing: dict[RequestId, OutgoingRequest] = {}
        #: Open subscriptions/listen streams among `incoming`.
        self.subscriptions = 0
        self._by_token: dict[ProgressToken, RequestId] = {}
        # How many of our requests are in flight per method: when they all share one,
        # an answer's type is known before its id is read (the one-pass result path).
        self._by_method: dict[MethodSpec, int] = {}
        self._given_up = RecentIds(MAX_RECENTLY_CLOSED_IDS)
        self._next_id = 1

    # -- the peer's requests ----------------------------------------------------

    def refusal(self, request_id: RequestId, opens_stream: bool) -> str | None:
        """Why a new request from the peer can't be taken, or None if it can.

        ``opens_stream``: the request would open a subscriptions/listen stream.
        """
        if request_id in self.incoming:
            return "Invalid Request: id already in flight"
        if len(self.incoming) >= self._max_in_flight:
            return f"Too many requests in flight (limit {self._max_in_flight})"
        if opens_stream and self.subscriptions >= self._max_subscriptions:
            return f"Too many open subscriptions (limit {self._max_subscriptions})"
        return None

    def take_in(self, request_id: RequestId, request: IncomingRequest) -> None:
        """Record a request from the peer (after `refusal` said yes)."""
        self.incoming[request_id] = request
        if request.requested_filter is not None:
            self.subscriptions += 1

    def open_incoming(self, request_id: RequestId) -> IncomingRequest:
        """The peer's request ``request_id``; LocalProtocolError if it is not open."""
        request = self.incoming.get(request_id)
        if request is None:
            raise LocalProtocolError(f"no request {request_id!r} from the peer is open")
        return request

    def close_incoming(self, request_id: RequestId) -> IncomingRequest:
        """Remove the peer's request, once answered (or abandoned)."""
        request = self.incoming.pop(request_id)
        if request.requested_filter is not None:
            self.subscriptions -= 1
        return request

    # -- our requests -------------------------------------------------------------

    def start(
        self,
        request_id: RequestId | None,
        spec: MethodSpec,
        kind: Kind,
        effects: Any,
        token: ProgressToken | None,
    ) -> RequestId:
        """Record a request we are sending; allocate its id unless one is given."""
        if token is not None and token in self._by_token:
            # "The progress token MUST be unique across all active requests" (2024-11-05).
            raise LocalProtocolError(f"progress token {token!r} is already in use")
        if len(self.outgoing) >= self._max_in_flight:
            raise LocalProtocolError(f"too many requests in flight (limit {self._max_in_flight})")
        if request_id is None:
            while self._next_id in self.outgoing:
                self._next_id += 1
            request_id = self._next_id
            self._next_id += 1
        elif isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            raise LocalProtocolError("a request id must be a string or an integer")
        elif request_id in self.outgoing:
            # "MUST NOT match the id of any other request the sender has issued and not
            # yet received a response for" (2026-07-28 basic).
            raise LocalProtocolError(f"request id {request_id!r} is already in flight")
        self.outgoing[request_id] = OutgoingRequest(spec, kind, effects, token)
        self._by_method[spec] = self._by_method.get(spec, 0) + 1
        if token is not None:
            self._by_token[token] = request_id
        return request_id

    def finish(self, request_id: RequestId, *, gave_up: bool = False) -> OutgoingRequest:
        """Remove one of our requests, answered or (``gave_up``) abandoned.

        A request is abandoned when we cancel it or the peer ends it (a listen stream);
        its id is then remembered for a while, so a late answer is dropped quietly.
        """
        request = self.outgoing.pop(request_id)
        remaining = self._by_method[request.spec] - 1
        if remaining:
            self._by_method[request.spec] = remaining
        else:
            del self._by_method[request.spec]
        if request.progress_token is not None:
            del self._by_token[request.progress_token]
        if gave_up:
            self._given_up.add(request_id)
        return request

    def only_method(self) -> MethodSpec | None:
        """The method of all our requests in flight, if they share one."""
        if len(self._by_method) != 1:
            return None
        return next(iter(self._by_method))

    def gave_up_on(self, request_id: RequestId) -> bool:
        """Whether we recently gave up on ``request_id`` (its late answer is expected)."""
        return request_id in self._given_up

    def for_token(self, token: ProgressToken) -> RequestId | None:
        """Which of our requests a progress token belongs to."""
        return self._by_token.get(token)

    def clear(self) -> tuple[RequestId, ...]:
        """Forget everything; returns the ids of our requests that were still open."""
        pending = tuple(self.outgoing)
        self.incoming.clear()
        self.outgoing.clear()
        self._by_token.clear()
        self._by_method.clear()
        self.subscriptions = 0
        return pending
