"""The state of one MCP conversation, shared by the two halves of `Connection`.

`ConversationState` holds what a conversation knows (its lifecycle phase, the version,
both sides' capabilities, the requests in flight) and the small helpers both halves
use. `mcpcore._receiving` adds reading the peer; `mcpcore.connection` adds our own
actions. The rules themselves live in `_state` (lifecycle), `_admission` (eras and
versions), `_inflight` (request ids), `_envelope`, `_results` and `_listen`.
"""

from __future__ import annotations

from typing import Any, Final

from mcpcore import _state
from mcpcore._admission import Admission
from mcpcore._inflight import RequestTable
from mcpcore._state import LEGACY_PHASES, Phase, Role, Step
from mcpcore.methods import DEFAULT_METHODS, Direction, MethodSpec, MethodTable
from mcpcore.types import (
    SERVER_INFO_META_KEY,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
    RequestId,
    ServerCapabilities,
)
from mcpcore.versions import ALL_VERSIONS, Era, era_of

__all__ = ["ConversationState"]


class ConversationState:
    """What one MCP conversation knows, seen from ``our_role``. See `Connection`.

    Args:
        our_role: `Role.CLIENT` or `Role.SERVER`.
        methods: The method table; extend `DEFAULT_METHODS` to add your own methods.
        supported_versions: The revisions we speak, legacy and modern alike.
        capabilities: Ours. A server answers -32601 for gated methods it did not
            advertise (learned from the ``initialize`` result it sends when not given
            here). A client's are stamped on every 2026-07-28 request.
        implementation: Our name and version. A 2026-07-28 client stamps it on every
            request as ``clientInfo``, a server on every result as ``serverInfo``.
    """

    def __init__(
        self,
        our_role: Role,
        *,
        methods: MethodTable = DEFAULT_METHODS,
        supported_versions: tuple[str, ...] = ALL_VERSIONS,
        capabilities: ServerCapabilities | ClientCapabilities | None = None,
        implementation: Implementation | None = None,
    ) -> None:
        unknown = [version for version in supported_versions if era_of(version) is None]
        if unknown or not supported_versions:
            raise ValueError(f"unknown protocol versions: {unknown or 'none given'}")
        self.our_role: Final = our_role
        self.their_role: Final = Role.SERVER if our_role is Role.CLIENT else Role.CLIENT
        self.methods: Final = methods
        self.supported_versions: Final = tuple(supported_versions)
        self.supported_modern_versions: Final = tuple(
            v for v in supported_versions if era_of(v) is Era.MODERN
        )
        self.implementation: Final = implementation
        self._phase = Phase.IDLE
        # Legacy: the negotiated version (the offered one while initialize is in
        # flight). A 2026-07-28 client: the version it speaks.
        self._version: str | None = None
        self._capabilities = capabilities
        self._their_capabilities: ServerCapabilities | ClientCapabilities | None = None
        self._their_info: Implementation | None = None
        self._requests = RequestTable()
        # A 2026-07-28 client's request envelope (``_meta``), built once per version;
        # a 2026-07-28 server's ``_meta`` for its results ("SHOULD include serverInfo").
        self._envelope: dict[str, Any] | None = None
        self._server_meta: Final = (
            None if implementation is None else {SERVER_INFO_META_KEY: implementation}
        )
        # Legacy logging/setLevel: None until the client asks for log messages.
        self._log_level: LoggingLevel | None = None
        sending = (
            Direction.CLIENT_TO_SERVER if our_role is Role.CLIENT else Direction.SERVER_TO_CLIENT
        )
        # The requests and notifications we may send, and the methods the peer may send us.
        self._sendable_requests: Final = methods.flowing_specs(sending, requests=True)
        self._sendable_notifications: Final = methods.flowing_specs(sending, requests=False)
        self._receivable: Final = methods.flowing(Direction.BOTH & ~sending)
        self._call_decoder: Final = methods.call_decoder
        # The requests a client passed every check for in one state (phase, version, the
        # server's capabilities): they need no checking again until the state changes.
        self._cleared: dict[str, MethodSpec] = {}
        self._cleared_state: tuple[Any, ...] | None = None
        # Likewise what a server admits, in one state and for one request ``_meta``.
        self._admitted: dict[MethodSpec, Admission] = {}
        self._admitted_state: tuple[Any, ...] | None = None
        # The one-pass decoding paths (mcpcore._onepass) change speed, never behaviour;
        # the tests turn them off to compare.
        self._one_pass = True

    # ------------------------------------------------------------------ state

    @property
    def phase(self) -> Phase:
        """Where the conversation is in its lifecycle."""
        return self._phase

    @property
    def era(self) -> Era | None:
        """The era of the conversation, or None while nothing has chosen it."""
        if self._phase is Phase.MODERN:
            return Era.MODERN
        return Era.LEGACY if self._phase in LEGACY_PHASES else None

    @property
    def protocol_version(self) -> str | None:
        """The negotiated legacy version, or the version a 2026-07-28 client speaks."""
        return self._version

    @property
    def capabilities(self) -> ServerCapabilities | ClientCapabilities | None:
        """Our own capabilities, as given or as sent in the handshake."""
        return self._capabilities

    @property
    def their_capabilities(self) -> ServerCapabilities | ClientCapabilities | None:
        """What the peer advertised (``initialize``, or a ``server/discover`` result)."""
        return self._their_capabilities

    @property
    def their_info(self) -> Implementation | None:
        """The peer's self-reported name and version, when it sent one."""
        return self._their_info

    @property
    def log_level(self) -> LoggingLevel | None:
        """The level a legacy client set with ``logging/setLevel``, or None."""
        return self._log_level

    @property
    def pending_requests(self) -> tuple[RequestId, ...]:
        """Ids of our requests still waiting for an answer."""
        return tuple(self._requests.outgoing)

    @property
    def requests_in_flight(self) -> int:
        """How many of the peer's requests we have not answered yet."""
        return len(self._requests.incoming)

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled its request ``request_id`` (which is still ours to end).

        A request already answered, or one we never received, is not "cancelled".
        """
        request = self._requests.incoming.get(request_id)
        return request is not None and request.cancelled

    def close(self) -> tuple[RequestId, ...]:
        """Close the conversation; returns the ids of our requests that will never be answered."""
        self._phase = Phase.CLOSED
        return self._requests.clear()

    # ----------------------------------------------------------------- helpers

    def _advance(self, step: Step) -> None:
        """Apply a step the caller already knows is legal."""
        phase = _state.next_phase(self._phase, step)
        assert phase is not None, (self._phase, step)
        self._phase = phase

    def _initialize_failed(self) -> None:
        # A failed initialize leaves the era open: the client may retry, or probe.
        self._advance(Step.INITIALIZE_ERROR)
        self._version = None
