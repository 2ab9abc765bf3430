"""The rules of an MCP conversation, as tables: what each side may send and receive, when.

Rules of this file (the h11 discipline, after h11/_state.py):

1. Every legality decision of the lifecycle lives here, as data. `Connection` looks
   it up and never writes a lifecycle rule as an ``if`` of its own. A key missing from
   a table is illegal: on our side a `LocalProtocolError`; from the peer the refusal
   the table names (an error reply to a request, silence for a notification).
2. The tables are nested as h11's are, ``TABLE[our side][phase][kind]``. `Kind` is
   what a message is to the lifecycle, read off its method name (`KINDS`): the
   handshake's messages, ``ping``, the notifications the core tracks, and "any other
   request or notification". Which methods exist in which revision, and which
   capability gates them, is the method table's business (`mcpcore.methods`).
3. One `Phase` describes the whole conversation, for both sides: both see the same
   messages, one sending and the other receiving, so they move through the same
   phases. Sending is stricter than receiving ("be strict in what you send"): a
   server accepts requests pipelined behind ``initialize``, which a client never sends.
4. Answers, progress and cancellation belong to a request in flight: they are legal
   exactly while that request is, which the request table (`mcpcore._inflight`)
   decides, so they have no rows here. Only the answers to ``initialize`` move the
   lifecycle, so only they appear (`Kind.INITIALIZE_RESULT`, `Kind.INITIALIZE_ERROR`).
5. This module holds no state and imports nothing of the connection.

The phases:

    IDLE ──initialize──▶ INITIALIZING ──result──▶ INITIALIZED ──initialized──▶ OPERATING
      │ ▲                    │
      │ └────────error───────┘
      └──2026-07-28 request──▶ MODERN ──(client abandons a failed probe)──▶ IDLE

and any phase ──close──▶ CLOSED.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final, NamedTuple

from mcpcore.versions import Era

__all__ = [
    "ANSWER_KINDS",
    "ENVELOPED_KINDS",
    "ERAS",
    "IGNORED",
    "KINDS",
    "RECEIVING",
    "RECEIVING_REQUESTS",
    "REFUSED_REQUESTS",
    "SENDING",
    "STEPS",
    "UNCANCELLABLE",
    "Admit",
    "Kind",
    "Phase",
    "Refusal",
    "Side",
    "Step",
    "kind_of",
]


class _IdentityEnum(enum.Enum):
    """An enum whose members hash by identity, as they already compare.

    Sides, phases and kinds are looked up in the tables below on every message, and
    ``enum.Enum.__hash__`` is a Python function (it hashes the member's name).
    """

    __hash__ = object.__hash__


class Side(_IdentityEnum):
    """Which end of the conversation a `Connection` is: ``Connection(CLIENT)``."""

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


class Kind(_IdentityEnum):
    """What a message is to the lifecycle (`kind_of` reads it off the method name)."""

    # Requests.
    INITIALIZE = "initialize"
    #: An ``initialize`` carrying the 2026-07-28 ``_meta`` envelope.
    ENVELOPED_INITIALIZE = "initialize in a 2026-07-28 envelope"
    PING = "ping"
    REQUEST = "request"
    #: Any other request carrying the 2026-07-28 ``_meta`` envelope (only a server that
    #: speaks 2026-07-28 tells these apart: to anyone else they are plain requests).
    ENVELOPED = "2026-07-28 request"
    # The answers to initialize: the only answers that move the lifecycle.
    INITIALIZE_RESULT = "initialize result"
    INITIALIZE_ERROR = "initialize error"
    # Notifications.
    INITIALIZED = "notifications/initialized"
    CANCELLED = "notifications/cancelled"
    PROGRESS = "notifications/progress"
    LOG = "notifications/message"
    NOTIFICATION = "notification"
    #: A JSON-RPC batch (2025-03-26 only).
    BATCH = "batch"


class Step(_IdentityEnum):
    """A decision of our own that moves the lifecycle (no message is involved)."""

    #: A client speaks 2026-07-28 from now on, without a handshake (`Connection.start_modern`).
    SPEAK_MODERN = "speak 2026-07-28"
    #: A client whose ``server/discover`` probe failed goes back to choose again
    #: (2026-07-28 basic/versioning: "any other error or a timeout → legacy").
    ABANDON_MODERN = "abandon 2026-07-28"
    CLOSE = "close"


class Admit(_IdentityEnum):
    """Which checks admit a request the lifecycle allows (the `Connection` runs them)."""

    #: Legacy ``initialize``: negotiate a version (-32022 when we speak none).
    HANDSHAKE = "handshake"
    #: Served as it is, under no version: "the client MAY send ping before initialize".
    AS_IS = "as is"
    #: A server in a legacy session: the method must exist in the negotiated version,
    #: and a capability it is gated on must be one we advertised (else -32601).
    SESSION = "session"
    #: A 2026-07-28 request: its envelope first (-32602, -32022), then the method must
    #: exist in the request's version and be one we advertised (-32601).
    ENVELOPE = "envelope"
    #: A client answering a legacy server: the method must exist in the negotiated
    #: version and its capability must be one we declared (-32601).
    CALLBACK = "callback"


class Refusal(NamedTuple):
    """How a request the lifecycle does not allow is answered.

    Attributes:
        code: The JSON-RPC error code.
        message: Safe for the peer; ``{version}`` becomes the negotiated version.
        reply: False when no answer is due (2026-07-28 clients never answer requests).
        names_versions: Whether ``data`` names our 2026-07-28 versions and the one the
            request asked for (-32022, 2026-07-28 basic/versioning).
    """

    code: int
    message: str
    reply: bool = True
    names_versions: bool = False


_C, _S = Side.CLIENT, Side.SERVER
_IDLE, _INITIALIZING, _INITIALIZED = Phase.IDLE, Phase.INITIALIZING, Phase.INITIALIZED
_OPERATING, _MODERN, _CLOSED = Phase.OPERATING, Phase.MODERN, Phase.CLOSED
_LEGACY_PHASES: Final = (_INITIALIZING, _INITIALIZED, _OPERATING)
_OPEN_PHASES: Final = (_IDLE, *_LEGACY_PHASES, _MODERN)

#: The kind of each method the lifecycle names; any other is a `Kind.REQUEST` or a
#: `Kind.NOTIFICATION`.
KINDS: Final[Mapping[str, Kind]] = {
    "initialize": Kind.INITIALIZE,
    "ping": Kind.PING,
    "notifications/initialized": Kind.INITIALIZED,
    "notifications/cancelled": Kind.CANCELLED,
    "notifications/progress": Kind.PROGRESS,
    "notifications/message": Kind.LOG,
}
#: What a request is when it carries the 2026-07-28 envelope, to a server speaking it.
ENVELOPED_KINDS: Final[Mapping[Kind, Kind]] = {
    Kind.INITIALIZE: Kind.ENVELOPED_INITIALIZE,
    Kind.PING: Kind.ENVELOPED,
    Kind.REQUEST: Kind.ENVELOPED,
}
#: The requests whose answers move the lifecycle: the kinds of their (result, error).
ANSWER_KINDS: Final[Mapping[Kind, tuple[Kind, Kind]]] = {
    Kind.INITIALIZE: (Kind.INITIALIZE_RESULT, Kind.INITIALIZE_ERROR),
}
#: "The client MUST NOT attempt to cancel its initialize request" (2024-11-05); a
#: server ignores such a cancellation ("invalid cancellations SHOULD be ignored").
UNCANCELLABLE: Final = frozenset({Kind.INITIALIZE})


def kind_of(method: str, *, request: bool) -> Kind:
    """The kind of a message of ``method`` (`KINDS`, else a plain request or notification)."""
    return KINDS.get(method) or (Kind.REQUEST if request else Kind.NOTIFICATION)


def _same_phase(phases: tuple[Phase, ...], *kinds: Kind) -> dict[Phase, dict[Kind, Phase]]:
    """Rows where each of ``kinds`` is allowed in each of ``phases`` and changes nothing."""
    return {phase: dict.fromkeys(kinds, phase) for phase in phases}


def _merge(*rows: Mapping[Phase, Mapping[Kind, Phase]]) -> dict[Phase, dict[Kind, Phase]]:
    merged: dict[Phase, dict[Kind, Phase]] = {phase: {} for phase in Phase}
    for row in rows:
        for phase, kinds in row.items():
            merged[phase].update(kinds)
    return merged


#: What our side may send in each phase (requests, notifications, and the answers to
#: ``initialize``), and the phase after it went out.
SENDING: Final[Mapping[Side, Mapping[Phase, Mapping[Kind, Phase]]]] = {
    _C: _merge(
        # "The client SHOULD NOT send requests other than pings before the server has
        # responded to the initialize request" (2024-11-05 basic/lifecycle).
        {_IDLE: {Kind.INITIALIZE: _INITIALIZING}},
        _same_phase((_IDLE, _INITIALIZING, _INITIALIZED), Kind.PING),
        # "After successful initialization, the client MUST send an initialized
        # notification": it goes first, before any other request.
        {_INITIALIZED: {Kind.INITIALIZED: _OPERATING}},
        _same_phase((_OPERATING, _MODERN), Kind.PING, Kind.REQUEST, Kind.NOTIFICATION),
    ),
    _S: _merge(
        # "The server SHOULD NOT send requests other than pings and logging before
        # receiving the initialized notification" (2024-11-05 basic/lifecycle).
        _same_phase((_INITIALIZING, _INITIALIZED), Kind.PING, Kind.LOG),
        {
            _INITIALIZING: {
                Kind.INITIALIZE_RESULT: _INITIALIZED,
                # A failed initialize leaves the era open: the client may retry, or probe.
                Kind.INITIALIZE_ERROR: _IDLE,
            }
        },
        _same_phase((_OPERATING,), Kind.PING, Kind.REQUEST, Kind.LOG, Kind.NOTIFICATION),
        # "Servers MUST NOT initiate JSON-RPC requests" (2026-07-28 basic); outside a
        # subscriptions/listen stream (which has actions of its own) a 2026-07-28 server
        # only reports on a request in flight.
        _same_phase((_MODERN,), Kind.LOG),
    ),
}

#: The requests from the peer that each phase admits: which checks admit them
#: (`Admit`), and the phase after one is admitted. Missing: `REFUSED_REQUESTS`.
RECEIVING_REQUESTS: Final[Mapping[Side, Mapping[Phase, Mapping[Kind, tuple[Admit, Phase]]]]] = {
    _S: {
        _IDLE: {
            # The first request decides the era of the connection, once, as the official
            # SDKs do: initialize opens a legacy session...
            Kind.INITIALIZE: (Admit.HANDSHAKE, _INITIALIZING),
            Kind.ENVELOPED_INITIALIZE: (Admit.HANDSHAKE, _INITIALIZING),
            # ..."the client MAY send ping before initialize completes"...
            Kind.PING: (Admit.AS_IS, _IDLE),
            # ...and a request in the 2026-07-28 envelope opens a modern one.
            Kind.ENVELOPED: (Admit.ENVELOPE, _MODERN),
        },
        # Receiving is lenient: requests pipelined behind initialize are served.
        **{
            phase: {Kind.PING: (Admit.SESSION, phase), Kind.REQUEST: (Admit.SESSION, phase)}
            for phase in _LEGACY_PHASES
        },
        # A request without the envelope is still read as 2026-07-28 here: it is told
        # what its envelope lacks (-32602), and ping, gone in 2026-07-28, is -32601.
        _MODERN: dict.fromkeys(
            (Kind.PING, Kind.REQUEST, Kind.ENVELOPED), (Admit.ENVELOPE, _MODERN)
        ),
        _CLOSED: {},
    },
    _C: {
        _IDLE: {},
        **{
            phase: {Kind.PING: (Admit.CALLBACK, phase), Kind.REQUEST: (Admit.CALLBACK, phase)}
            for phase in _LEGACY_PHASES
        },
        _MODERN: {},
        _CLOSED: {},
    },
}

_ALREADY_INITIALIZED: Final = Refusal(-32600, "Invalid Request: already initialized")
_NOT_ACCEPTED_ON_LEGACY: Final = Refusal(
    -32600,
    "Invalid Request: this connection speaks {version}; requests carrying the 2026-07-28 "
    "_meta envelope are not accepted on it",
)
_NOT_INITIALIZED: Final = Refusal(-32600, "Invalid Request: not initialized")

#: How the requests `RECEIVING_REQUESTS` does not admit are answered.
REFUSED_REQUESTS: Final[Mapping[Side, Mapping[Phase, Mapping[Kind, Refusal]]]] = {
    _S: {
        _IDLE: {
            Kind.REQUEST: Refusal(
                -32600,
                "Invalid Request: send initialize first, or a 2026-07-28 request with its _meta",
            ),
        },
        **{
            phase: {
                Kind.INITIALIZE: _ALREADY_INITIALIZED,
                Kind.ENVELOPED_INITIALIZE: _ALREADY_INITIALIZED,
                Kind.ENVELOPED: _NOT_ACCEPTED_ON_LEGACY,
            }
            for phase in _LEGACY_PHASES
        },
        _MODERN: {
            # "A modern-only server SHOULD name its supported versions in any error it
            # returns to an initialize request" (2026-07-28 basic/versioning); a probing
            # client reads the -32022 as "modern".
            Kind.INITIALIZE: Refusal(
                -32022,
                "This connection serves 2026-07-28; the initialize handshake is not accepted",
                names_versions=True,
            ),
            # A 2026-07-28 request for a method 2026-07-28 removed (on Streamable HTTP's
            # modern path that is 404 + -32601).
            Kind.ENVELOPED_INITIALIZE: Refusal(-32601, "Method not found: initialize"),
        },
        _CLOSED: {},
    },
    _C: {
        _IDLE: dict.fromkeys((Kind.PING, Kind.REQUEST), _NOT_INITIALIZED),
        **{phase: {} for phase in _LEGACY_PHASES},
        # "Servers MUST NOT initiate JSON-RPC requests" and "clients do not send
        # JSON-RPC responses" (2026-07-28 basic): nothing to answer with.
        _MODERN: dict.fromkeys(
            (Kind.PING, Kind.REQUEST),
            Refusal(-32600, "A 2026-07-28 server must not send requests", reply=False),
        ),
        _CLOSED: {},
    },
}

#: The notifications, batches and answers to ``initialize`` each phase accepts from the
#: peer, and the phase after. Missing: ignored (JSON-RPC never answers a notification
#: or a response), for the reason in `IGNORED`; a batch gets -32600.
RECEIVING: Final[Mapping[Side, Mapping[Phase, Mapping[Kind, Phase]]]] = {
    _S: _merge(
        _same_phase(_OPEN_PHASES, Kind.CANCELLED, Kind.NOTIFICATION),
        # "Progress is server → client only" in 2026-07-28.
        _same_phase((_IDLE, *_LEGACY_PHASES), Kind.PROGRESS),
        {_INITIALIZED: {Kind.INITIALIZED: _OPERATING}},
        # "Implementations MUST support receiving JSON-RPC batches" (2025-03-26 only),
        # and "initialize MUST NOT be part of a batch".
        _same_phase((_INITIALIZED, _OPERATING), Kind.BATCH),
    ),
    _C: _merge(
        _same_phase(_OPEN_PHASES, Kind.CANCELLED, Kind.PROGRESS, Kind.LOG, Kind.NOTIFICATION),
        {_INITIALIZING: {Kind.INITIALIZE_RESULT: _INITIALIZED, Kind.INITIALIZE_ERROR: _IDLE}},
        _same_phase((_INITIALIZED, _OPERATING), Kind.BATCH),
    ),
}

#: Why a notification `RECEIVING` does not accept is ignored.
IGNORED: Final[Mapping[Kind, str]] = {
    # A repeated or early initialized notification changes nothing.
    Kind.INITIALIZED: "Unexpected initialized notification",
    Kind.PROGRESS: "Clients do not send progress",
}

#: Our own decisions, and the phase after each.
STEPS: Final[Mapping[Side, Mapping[Phase, Mapping[Step, Phase]]]] = {
    side: {
        phase: {
            Step.CLOSE: _CLOSED,
            # A client speaks 2026-07-28 from the start, or switches to another
            # modern version (after a -32022 that named one we share).
            **({Step.SPEAK_MODERN: _MODERN} if side is _C and phase in (_IDLE, _MODERN) else {}),
            **({Step.ABANDON_MODERN: _IDLE} if side is _C and phase is _MODERN else {}),
        }
        for phase in Phase
    }
    for side in Side
}

#: The era each phase belongs to; a phase missing here has not chosen one.
ERAS: Final[Mapping[Phase, Era]] = {
    **dict.fromkeys(_LEGACY_PHASES, Era.LEGACY),
    _MODERN: Era.MODERN,
}
