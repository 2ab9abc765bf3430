"""The lifecycle state machine of a connection, as tables.

Rules of this file (the h11 discipline):

1. All lifecycle legality lives here, as data. `Connection` asks; it never encodes a
   lifecycle rule in an ``if`` of its own.
2. One `Phase` describes the whole conversation, for both sides: both see the same
   messages, one sending and one receiving, so they move through the same phases.
3. `TRANSITIONS` maps (phase, step) to the next phase. A step missing from the table
   is illegal in that phase: on our side a `LocalProtocolError`, from the peer an
   error reply (or, for a notification, nothing at all).
4. `SENDABLE_REQUESTS` and `SENDABLE_NOTIFICATIONS` say what each role may start in
   each phase. ``None`` means "whatever the method table and capabilities allow".
   Receiving is more lenient than sending (a server accepts requests pipelined
   behind ``initialize``): be strict in what you send.

The phases:

    IDLE ──initialize──▶ INITIALIZING ──result──▶ INITIALIZED ──initialized──▶ OPERATING
      │ ▲                    │
      │ └────────error───────┘
      └──2026-07-28 request──▶ MODERN ──(client abandons a failed probe)──▶ IDLE

and any phase ──close──▶ CLOSED.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "LEGACY_PHASES",
    "SENDABLE_NOTIFICATIONS",
    "SENDABLE_REQUESTS",
    "TRANSITIONS",
    "Phase",
    "Role",
    "Step",
    "may_send_notification",
    "may_send_request",
    "next_phase",
]


class _IdentityEnum(enum.Enum):
    """An enum whose members hash by identity, as they already compare.

    Phases and roles are looked up in the tables below on every message, and
    ``enum.Enum.__hash__`` is a Python function (it hashes the member's name).
    """

    __hash__ = object.__hash__


class Role(_IdentityEnum):
    """Which end of the conversation a `Connection` is."""

    CLIENT = "client"
    SERVER = "server"


class Phase(_IdentityEnum):
    """Where a connection is in its lifecycle."""

    #: Nothing has chosen the era yet.
    IDLE = "idle"
    #: ``initialize`` is in flight (legacy).
    INITIALIZING = "initializing"
    #: The ``initialize`` result went out; ``notifications/initialized`` has not (legacy).
    INITIALIZED = "initialized"
    #: The legacy handshake is complete.
    OPERATING = "operating"
    #: 2026-07-28: no handshake, each request carries its own version and capabilities.
    MODERN = "modern"
    #: Closed by us, or by a peer error we cannot recover from.
    CLOSED = "closed"


class Step(_IdentityEnum):
    """A message, or a local decision, that moves the lifecycle."""

    INITIALIZE_REQUEST = "initialize request"
    INITIALIZE_RESULT = "initialize result"
    INITIALIZE_ERROR = "initialize error"
    INITIALIZED_NOTIFICATION = "initialized notification"
    MODERN_REQUEST = "2026-07-28 request"
    #: A client whose ``server/discover`` probe failed goes back to choose again
    #: (2026-07-28 basic/versioning: "any other error or a timeout → legacy").
    ABANDON_MODERN = "abandon 2026-07-28"
    CLOSE = "close"


TRANSITIONS: Final[dict[tuple[Phase, Step], Phase]] = {
    (Phase.IDLE, Step.INITIALIZE_REQUEST): Phase.INITIALIZING,
    (Phase.INITIALIZING, Step.INITIALIZE_RESULT): Phase.INITIALIZED,
    # A failed initialize leaves the era open: the client may retry, or probe.
    (Phase.INITIALIZING, Step.INITIALIZE_ERROR): Phase.IDLE,
    (Phase.INITIALIZED, Step.INITIALIZED_NOTIFICATION): Phase.OPERATING,
    (Phase.IDLE, Step.MODERN_REQUEST): Phase.MODERN,
    (Phase.MODERN, Step.MODERN_REQUEST): Phase.MODERN,
    (Phase.MODERN, Step.ABANDON_MODERN): Phase.IDLE,
    **{(phase, Step.CLOSE): Phase.CLOSED for phase in Phase},
}

_CANCELLED = "notifications/cancelled"
_PROGRESS = "notifications/progress"
_LOG = "notifications/message"

SENDABLE_REQUESTS: Final[dict[tuple[Role, Phase], frozenset[str] | None]] = {
    # "The client SHOULD NOT send requests other than pings before the server has
    # responded to the initialize request" (2024-11-05 basic/lifecycle).
    (Role.CLIENT, Phase.IDLE): frozenset({"initialize", "ping"}),
    (Role.CLIENT, Phase.INITIALIZING): frozenset({"ping"}),
    # "After successful initialization, the client MUST send an initialized
    # notification": it goes first, before any other request.
    (Role.CLIENT, Phase.INITIALIZED): frozenset({"ping"}),
    (Role.CLIENT, Phase.OPERATING): None,
    (Role.CLIENT, Phase.MODERN): None,
    (Role.CLIENT, Phase.CLOSED): frozenset(),
    (Role.SERVER, Phase.IDLE): frozenset(),
    # "The server SHOULD NOT send requests other than pings and logging before
    # receiving the initialized notification" (2024-11-05 basic/lifecycle).
    (Role.SERVER, Phase.INITIALIZING): frozenset({"ping"}),
    (Role.SERVER, Phase.INITIALIZED): frozenset({"ping"}),
    (Role.SERVER, Phase.OPERATING): None,
    # "Servers MUST NOT initiate JSON-RPC requests" (2026-07-28 basic).
    (Role.SERVER, Phase.MODERN): frozenset(),
    (Role.SERVER, Phase.CLOSED): frozenset(),
}

SENDABLE_NOTIFICATIONS: Final[dict[tuple[Role, Phase], frozenset[str] | None]] = {
    (Role.CLIENT, Phase.IDLE): frozenset({_CANCELLED}),
    (Role.CLIENT, Phase.INITIALIZING): frozenset({_CANCELLED}),
    (Role.CLIENT, Phase.INITIALIZED): frozenset({"notifications/initialized", _CANCELLED}),
    (Role.CLIENT, Phase.OPERATING): None,
    (Role.CLIENT, Phase.MODERN): None,
    (Role.CLIENT, Phase.CLOSED): frozenset(),
    (Role.SERVER, Phase.IDLE): frozenset(),
    (Role.SERVER, Phase.INITIALIZING): frozenset({_LOG, _PROGRESS, _CANCELLED}),
    (Role.SERVER, Phase.INITIALIZED): frozenset({_LOG, _PROGRESS, _CANCELLED}),
    (Role.SERVER, Phase.OPERATING): None,
    # Outside a subscriptions/listen stream (which has its own actions), a 2026-07-28
    # server only reports on a request in flight, or ends a listen stream.
    (Role.SERVER, Phase.MODERN): frozenset({_LOG, _PROGRESS, _CANCELLED}),
    (Role.SERVER, Phase.CLOSED): frozenset(),
}


#: The phases of a legacy conversation, once ``initialize`` started it.
LEGACY_PHASES: Final = frozenset({Phase.INITIALIZING, Phase.INITIALIZED, Phase.OPERATING})


def next_phase(phase: Phase, step: Step) -> Phase | None:
    """The phase after ``step``, or None if ``step`` is illegal in ``phase``."""
    return TRANSITIONS.get((phase, step))


def may_send_request(role: Role, phase: Phase, method: str) -> bool:
    """Whether ``role`` may start a request for ``method`` in ``phase``."""
    allowed = SENDABLE_REQUESTS[role, phase]
    return allowed is None or method in allowed


def may_send_notification(role: Role, phase: Phase, method: str) -> bool:
    """Whether ``role`` may send a notification for ``method`` in ``phase``."""
    allowed = SENDABLE_NOTIFICATIONS[role, phase]
    return allowed is None or method in allowed
