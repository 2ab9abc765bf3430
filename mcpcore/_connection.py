"""`Connection`: the sans-IO MCP protocol state machine, for one peer.

Modelled on h11: ``Connection(our_role)``. Bytes the peer sent go into `receive`, which
returns events; each protocol action (`send_request`, `send_result`, `cancel`, ...)
checks and updates the state first and returns the bytes to write, or None where the
protocol says to send nothing. There is no IO, clock or randomness here: a driver moves
the bytes, owns the time, and runs the user's code.

`receive` takes exactly one JSON-RPC message (or one 2025-03-26 batch); framing
(newlines, SSE, WebSocket frames) is the driver's job, with `mcpcore.framing`. Every
action returns one compact JSON message without a trailing newline.

Rules of this module:

1. Legality is looked up, never written as an ``if`` on a method name: the lifecycle
   (what each side may send and receive in each phase, and the phase after) is the
   tables of `mcpcore._state`; which methods exist in which revision, flow which way
   and are gated on which capability is the method table (`mcpcore.methods`). What a
   method does beyond that (``initialize`` records the version, ``logging/setLevel``
   the level) is an effect, found in the effect tables at the end of this module.
2. Every check runs before anything changes: an action that raises leaves the
   connection as it was.
3. Misuse on our side raises `LocalProtocolError`. What the peer gets wrong becomes an
   `InvalidMessage` (carrying the reply to write) or an `InvalidResponse`; only a peer
   that makes the conversation impossible (a server that picks a version we do not
   speak) raises `RemoteProtocolError`, and closes the connection.
4. The state is the phase, the version, both sides' capabilities and the request
   table (`mcpcore._inflight`). The memos (`mcpcore._memo`) only make repeated checks
   cheaper; nothing reads them for a decision they did not get from the rules.

Beside it, one concept each: the 2026-07-28 ``_meta`` envelope (`_envelope`), result
shapes (`_results`), listen streams (`_listen`), capability objects (`_capabilities`),
and the one-pass decoders of the hot path (`_onepass`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import _listen, jsonrpc
from mcpcore._capabilities import has_capability, required_client_capabilities
from mcpcore._envelope import (
    Rejection,
    meta_of,
    probe_meta,
    progress_token_in,
    read_modern_envelope,
    request_envelope,
    stamp_request_meta,
)
from mcpcore._inflight import (
    MAX_RECENTLY_CLOSED_IDS,
    MAX_REQUESTS_IN_FLIGHT,
    MAX_SUBSCRIPTIONS,
    IncomingRequest,
    OutgoingRequest,
    RequestTable,
)
from mcpcore._memo import Memo
from mcpcore._results import decode_result, result_problem, shape_modern_result
from mcpcore._state import (
    ANSWER_KINDS,
    ENVELOPED_KINDS,
    ERAS,
    IGNORED,
    KINDS,
    RECEIVING,
    RECEIVING_REQUESTS,
    REFUSED_REQUESTS,
    SENDING,
    STEPS,
    UNCANCELLABLE,
    Admit,
    Kind,
    Phase,
    Side,
    Step,
    kind_of,
)
from mcpcore.errors import LocalProtocolError, RemoteProtocolError
from mcpcore.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
)
from mcpcore.methods import DEFAULT_METHODS, Direction, MethodSpec, MethodTable
from mcpcore.types import (
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    CancelledNotificationParams,
    ClientCapabilities,
    Error,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    RequestId,
    ServerCapabilities,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
)
from mcpcore.versions import (
    ALL_VERSIONS,
    BATCH_VERSIONS,
    Era,
    era_of,
    is_at_least,
    negotiate_legacy_version,
)

__all__ = ["MAX_RECENTLY_CLOSED_IDS", "MAX_REQUESTS_IN_FLIGHT", "MAX_SUBSCRIPTIONS", "Connection"]

#: A request we serve: its protocol version, the client's capabilities, its log level.
Admission: TypeAlias = tuple[str | None, ClientCapabilities | None, LoggingLevel | None]

_LOG_RANK: Final = {
    level: rank
    for rank, level in enumerate(
        ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    )
}
# What encoding a result raises when JSON can't hold it: an object of a type msgspec
# does not encode (TypeError, msgspec.EncodeError), or nesting past the stack.
_UNENCODABLE: Final = (msgspec.EncodeError, TypeError, RecursionError)
# Notifications with an action of their own, because the core must track them.
_DEDICATED_ACTIONS: Final = {
    "notifications/cancelled": "cancel() or cancel_subscription()",
    "notifications/progress": "send_progress()",
    "notifications/message": "send_log_message()",
    _listen.LISTEN_ACKNOWLEDGED: "acknowledge_subscription()",
}
# What to say beside "can't send it now", where there is a better way.
_SENDING_HINTS: Final = {
    (Side.SERVER, Phase.MODERN, Kind.NOTIFICATION): (
        "; 2026-07-28 delivers it with send_subscription_notification()"
    ),
}

# How messages begin when written in the usual key order: results (and requests, which
# carry an id too), and notifications.
_RESULT_OR_REQUEST: Final = b'{"jsonrpc":"2.0","id":'
_NOTIFICATION: Final = b'{"jsonrpc":"2.0","method":'
# A message no longer than this can't nest too deeply: one comparison on the hot path.
_SHALLOW_SIZE: Final = jsonrpc.SHALLOW_SIZE
_BATCH_DECODER: Final = msgspec.json.Decoder(list[Raw])
_ANY_DECODER: Final = msgspec.json.Decoder()
_META_ENCODER: Final = msgspec.json.Encoder()
# Enum members read on every message, as module constants: an enum attribute costs
# ~40 ns on CPython 3.11, a module global a quarter of that.
_CLOSED: Final = Phase.CLOSED
_MODERN: Final = Phase.MODERN
_SERVER: Final = Side.SERVER
_PLAIN_REQUEST: Final = Kind.REQUEST
_PLAIN_NOTIFICATION: Final = Kind.NOTIFICATION
_MODERN_ERA: Final = Era.MODERN


class Connection:
    """The protocol state of one MCP conversation, seen from ``our_role``.

    Args:
        our_role: `CLIENT` or `SERVER` (a `Side`).
        methods: The method table; extend `DEFAULT_METHODS` to add your own methods.
        supported_versions: The revisions we speak, legacy and modern alike.
        capabilities: Ours. A server answers -32601 for gated methods it did not
            advertise (learned from the ``initialize`` result it sends when not given
            here). A client's are stamped on every 2026-07-28 request.
        implementation: Our name and version. A 2026-07-28 client stamps it on every
            request as ``clientInfo``, a server on every result as ``serverInfo``.
    """

    # Slots: past 30 attributes CPython stops sharing an instance dict's keys with the
    # class, and each Connection carried a ~1.5 KB dict of its own (bench, layer
    # memory: an idle legacy session, client and server, went from 6.2 to 9.2 KB).
    __slots__ = (
        "_admitted",
        "_call_decoder",
        "_capabilities",
        "_cleared",
        "_envelopes",
        "_log_level",
        "_one_pass",
        "_phase",
        "_reads_envelopes",
        "_receivable",
        "_receivable_notifications",
        "_receivable_requests",
        "_receiving",
        "_receiving_requests",
        "_refused_requests",
        "_requests",
        "_sendable_notifications",
        "_sendable_requests",
        "_sending",
        "_server_meta",
        "_steps",
        "_their_capabilities",
        "_their_info",
        "_version",
        "implementation",
        "methods",
        "our_role",
        "supported_modern_versions",
        "supported_versions",
        "their_role",
    )

    def __init__(
        self,
        our_role: Side,
        *,
        methods: MethodTable = DEFAULT_METHODS,
        supported_versions: tuple[str, ...] = ALL_VERSIONS,
        capabilities: ServerCapabilities | ClientCapabilities | None = None,
        implementation: Implementation | None = None,
    ) -> None:
        unknown = [version for version in supported_versions if era_of(version) is None]
        if unknown or not supported_versions:
            raise ValueError(f"unknown protocol versions: {unknown or 'none given'}")
        if not isinstance(our_role, Side):
            raise TypeError(f"our_role must be CLIENT or SERVER, not {our_role!r}")
        is_client = our_role is Side.CLIENT
        self.our_role: Final = our_role
        self.their_role: Final = Side.SERVER if is_client else Side.CLIENT
        self.methods: Final = methods
        self.supported_versions: Final = tuple(supported_versions)
        self.supported_modern_versions: Final = tuple(
            v for v in supported_versions if era_of(v) is Era.MODERN
        )
        self.implementation: Final = implementation

        # -- the state
        self._phase = Phase.IDLE
        # Legacy: the negotiated version (the offered one while initialize is in
        # flight). A 2026-07-28 client: the version it speaks.
        self._version: str | None = None
        self._capabilities = capabilities
        self._their_capabilities: ServerCapabilities | ClientCapabilities | None = None
        self._their_info: Implementation | None = None
        # Legacy logging/setLevel: None until the client asks for log messages.
        self._log_level: LoggingLevel | None = None
        self._requests = RequestTable()

        # -- what never changes: our rows of the tables, and the methods of each way
        self._sending: Final = SENDING[our_role]
        self._receiving: Final = RECEIVING[our_role]
        self._receiving_requests: Final = RECEIVING_REQUESTS[our_role]
        self._refused_requests: Final = REFUSED_REQUESTS[our_role]
        self._steps: Final = STEPS[our_role]
        sending = Direction.CLIENT_TO_SERVER if is_client else Direction.SERVER_TO_CLIENT
        receiving = Direction.BOTH & ~sending
        self._sendable_requests: Final = methods.flowing_specs(sending, requests=True)
        self._sendable_notifications: Final = methods.flowing_specs(sending, requests=False)
        self._receivable_requests: Final = methods.flowing_specs(receiving, requests=True)
        self._receivable_notifications: Final = methods.flowing_specs(receiving, requests=False)
        self._receivable: Final = methods.flowing(receiving)
        self._call_decoder: Final = methods.call_decoder
        # Only a server that speaks 2026-07-28 tells an enveloped request from a plain
        # one: to anyone else the envelope is just more _meta.
        self._reads_envelopes: Final = not is_client and bool(self.supported_modern_versions)
        # A 2026-07-28 server's ``_meta`` for its results ("SHOULD include serverInfo").
        self._server_meta: Final = (
            None if implementation is None else {SERVER_INFO_META_KEY: implementation}
        )

        # -- memos: speed only (see mcpcore._memo for why they are never stale)
        # The requests a client passed every check for, by method, in one state (the
        # phase, the version, the server's capabilities: all that the checks read).
        # A server's checks read the params too, so a server keeps none.
        self._cleared: Memo[str, tuple[MethodSpec, Kind, _Effects | None]] | None = (
            Memo() if is_client else None
        )
        # What a server admits, by method, in one state: the route and what it reads
        # (the version and both sides' capabilities; the envelope, in 2026-07-28).
        self._admitted: Memo[MethodSpec, Admission] = Memo()
        # A 2026-07-28 client's request envelope (``_meta``), by version: it reads our
        # capabilities too (those a failed initialize declared, say).
        self._envelopes: Memo[str, dict[str, Any]] = Memo()
        # The one-pass decoding paths (mcpcore._onepass) change speed, never behaviour;
        # the tests turn them off to compare.
        self._one_pass = True

    # ================================================================== the state

    @property
    def phase(self) -> Phase:
        """Where the conversation is in its lifecycle."""
        return self._phase

    @property
    def era(self) -> Era | None:
        """The era of the conversation, or None while nothing has chosen it."""
        return ERAS.get(self._phase)

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
        self._phase = self._step(Step.CLOSE, "close")
        return self._requests.clear()

    # ========================================================== our own decisions

    def start_modern(self, version: str | None = None) -> None:
        """Client: speak 2026-07-28 (or ``version``) from now on, without a handshake.

        Every request is then stamped with the version, our capabilities and our
        ``clientInfo``. Call it again to switch to another modern version (after a
        -32022 that named one we share). A dual-era client probes with
        ``server/discover`` right after, and calls `abandon_modern` if the probe fails.
        """
        then = self._step(Step.SPEAK_MODERN, "start_modern")
        if version is None and self.supported_modern_versions:
            version = self.supported_modern_versions[-1]
        if version not in self.supported_modern_versions:
            raise LocalProtocolError(f"{version!r} is not a supported modern version")
        self._phase = then
        self._version = version

    def abandon_modern(self) -> None:
        """Client: the server is not modern after all; return to choose the era again.

        "Any other error or a timeout → legacy; fall back to initialize" (2026-07-28
        basic/versioning). Only possible with no request in flight.
        """
        then = self._step(Step.ABANDON_MODERN, "abandon_modern")
        if self._requests.outgoing:
            raise LocalProtocolError("requests are still in flight")
        self._phase = then
        self._version = None
        self._their_capabilities = None

    # ============================================================ our requests

    def send_request(
        self, method: str, params: Any = None, *, request_id: RequestId | None = None
    ) -> tuple[RequestId, bytes]:
        """Start a request. Returns its id and the bytes to write.

        ``params`` defaults to the method's empty params. A progress token in
        ``params._meta`` is tracked (it must be unique among our requests in flight).
        ``request_id`` defaults to the next integer; an explicit one must not be in use.
        """
        phase, version = self._phase, self._version
        state = (phase, version, self._their_capabilities)
        cleared = self._cleared
        known = None if cleared is None else cleared.recall(state, method)
        if known is not None:
            # A client sending a request it already sent in this very state: the checks
            # of `_checked_request` read nothing else, and passed then.
            spec, kind, effects = known
            then = phase
            if params is None:
                params = self._empty_params(spec)
            meta = meta_of(params)
            if phase is _MODERN and version is not None:
                params = stamp_request_meta(params, meta, self._request_envelope(version))
        else:
            spec, params, meta, then = self._checked_request(method, params)
            kind, effects = KINDS.get(method, _PLAIN_REQUEST), _EFFECTS.get(method)
            if cleared is not None and then is phase:  # (initialize moves the phase)
                cleared.keep(state, method, (spec, kind, effects))
        # Read from the caller's keys: the envelope stamped on top carries no progress token.
        token = progress_token_in(meta)
        if token is False:
            raise LocalProtocolError("_meta.progressToken must be a string or an integer")
        request_id = self._requests.start(request_id, spec, kind, effects, token)
        data = jsonrpc.encode_request(request_id, method, params)
        self._phase = then
        if effects is not None and effects.sent is not None:
            effects.sent(self, params)
        return request_id, data

    def _checked_request(
        self, method: str, params: Any
    ) -> tuple[MethodSpec, Any, dict[str, Any] | None, Phase]:
        """Check that we may send ``method`` now: its spec, params (stamped), _meta, next phase.

        What a client may send depends only on the phase, the version and the server's
        capabilities (`send_request` remembers the answer); what a server may send also
        on the params (the client capabilities a request to it needs).
        """
        spec = self._spec_to_send(method, request=True)
        then = self._may_send(KINDS.get(method, Kind.REQUEST), method)
        if params is None:
            params = self._empty_params(spec)
        meta = meta_of(params)  # the caller's own _meta keys, if any
        effects = _EFFECTS.get(method)
        if effects is not None and effects.check is not None:
            effects.check(self, params)
        version = self._version
        if version is not None:
            refusal = self._refuse_to_send(spec, params, version)
            if refusal is not None:
                raise LocalProtocolError(refusal)
            if self._phase is _MODERN:
                params = stamp_request_meta(params, meta, self._request_envelope(version))
        return spec, params, meta, then

    def _refuse_to_send(self, spec: MethodSpec, params: Any, version: str) -> str | None:
        """Why our side may not send this request under ``version``, or None if it may.

        The sending twin of admission: the method must exist in the version, and the peer
        must have advertised the capability the method is gated on ("both parties MUST
        respect the negotiated protocol version and capabilities", 2025-06-18 lifecycle).
        """
        if version not in spec.versions:
            return f"{spec.name} does not exist in {version}"
        their = self._their_capabilities
        if isinstance(their, ServerCapabilities):
            # A client: the server's advertised capability, where the method is gated.
            if _gated(spec, their, version):
                return (
                    f"the server did not advertise the {spec.capability} capability "
                    f"{spec.name} needs"
                )
        elif isinstance(their, ClientCapabilities) and required_client_capabilities(
            spec.name, params, their
        ):
            return f"the client did not declare the capability {spec.name} needs"
        return None

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Give up on one of our requests. Returns the ``notifications/cancelled`` to send.

        Whatever answer still arrives is dropped quietly. Returns None when the request
        was already given up on. On 2026-07-28 Streamable HTTP the cancellation is
        closing the response stream, so the driver may drop the bytes; the state
        change is the same.
        """
        outgoing = self._requests.outgoing.get(request_id)
        if outgoing is None:
            if self._requests.gave_up_on(request_id):
                return None
            raise LocalProtocolError(f"no request {request_id!r} is in flight")
        if outgoing.kind in UNCANCELLABLE:
            raise LocalProtocolError(f"{outgoing.spec.name} can't be cancelled")
        self._requests.finish(request_id, gave_up=True)
        return _cancelled(request_id, reason)

    # ======================================================= our notifications

    def send_notification(self, method: str, params: Any = None) -> bytes:
        """Send a notification that needs no tracking (list_changed, roots changes...).

        Cancellation, progress, log messages and subscription acknowledgements have
        actions of their own, because the core must track them.
        """
        if method in _DEDICATED_ACTIONS:
            raise LocalProtocolError(f"send {method} with {_DEDICATED_ACTIONS[method]}")
        spec = self._spec_to_send(method, request=False)
        then = self._may_send(kind_of(method, request=False), method)
        version = self._version
        if version is not None and version not in spec.versions:
            raise LocalProtocolError(f"{method} does not exist in {version}")
        capability, ours = spec.capability, self._capabilities
        if capability and ours and not has_capability(ours, capability):
            raise LocalProtocolError(f"{method} needs the {capability} capability")
        if params is None:
            params = self._empty_params(spec)
        data = jsonrpc.encode_notification(method, params)
        self._phase = then
        return data

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bytes | None:
        """Report progress on the peer's request.

        None when there is nothing to send: the request carried no progress token, or
        the peer cancelled it. ``progress`` must grow with every report.
        """
        incoming = self._requests.open_incoming(request_id)
        if incoming.spec.opens_stream:
            raise LocalProtocolError("progress is never sent on a listen stream")
        if incoming.progress_token is None or incoming.cancelled:
            return None
        if incoming.last_progress is not None and progress <= incoming.last_progress:
            raise LocalProtocolError(
                f"progress must increase: {progress} after {incoming.last_progress}"
            )
        incoming.last_progress = progress
        params = ProgressNotificationParams(
            progress_token=incoming.progress_token,
            progress=progress,
            total=UNSET if total is None else total,
            message=UNSET if message is None else message,
        )
        return jsonrpc.encode_notification("notifications/progress", params)

    def send_log_message(
        self,
        level: LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        request_id: RequestId | None = None,
    ) -> bytes | None:
        """Server: send a log message, if the client asked for this level. None if not.

        Legacy: filtered by the level set with ``logging/setLevel``; nothing is sent
        before the client set one. 2026-07-28: a message belongs to a request
        (``request_id`` is required) and is sent only if that request's ``_meta`` log
        level admits it ("if absent, the server MUST NOT send notifications/message for
        that request").
        """
        self._may_send(Kind.LOG, "log messages", action="send_log_message")
        if level not in _LOG_RANK:
            raise LocalProtocolError(f"unknown log level {level!r}")
        threshold = self._log_threshold(request_id)
        if threshold is None or _LOG_RANK[level] < _LOG_RANK[threshold]:
            return None
        params = LoggingMessageNotificationParams(
            level=level, data=data, logger=UNSET if logger is None else logger
        )
        return jsonrpc.encode_notification("notifications/message", params)

    def _log_threshold(self, request_id: RequestId | None) -> LoggingLevel | None:
        """The level a log message must reach to be sent now, or None to send nothing."""
        if self._phase is Phase.MODERN:
            if request_id is None:
                raise LocalProtocolError("a 2026-07-28 log message must name its request")
            incoming = self._requests.open_incoming(request_id)
            if incoming.spec.opens_stream:
                raise LocalProtocolError("log messages are never sent on a listen stream")
            return None if incoming.cancelled else incoming.log_level
        if self._capabilities is not None and not has_capability(self._capabilities, "logging"):
            raise LocalProtocolError("log messages need the logging capability")
        related = None if request_id is None else self._requests.incoming.get(request_id)
        return None if related is not None and related.cancelled else self._log_level

    # ================================================= answering the peer's requests

    def send_result(self, request_id: RequestId, result: Any) -> bytes | None:
        """Answer the peer's request. None if the peer cancelled it: nothing is sent.

        Raises:
            LocalProtocolError: ``result`` can't answer the request: the wrong type, or
                a value JSON can't hold (an object msgspec can't encode, or nesting past
                what the stack holds). The request stays open, to be answered with an
                error instead.
        """
        incoming = self._requests.open_incoming(request_id)
        spec = incoming.spec
        problem = result_problem(spec, incoming, result, self._version)
        if problem is not None:
            raise LocalProtocolError(problem)
        then = self._phase
        if incoming.kind is not _PLAIN_REQUEST:
            answers = ANSWER_KINDS.get(incoming.kind)
            if answers is not None:
                then = self._may_send(answers[0], spec.name)
        if spec.opens_stream:
            result = _listen.stamp_subscription_id(result, request_id)
        version = incoming.protocol_version
        if version is not None and era_of(version) is _MODERN_ERA:
            result = shape_modern_result(spec, result, self._server_meta)
        # Encoded before anything changes, so that a result that can't be encoded
        # leaves the request open for the error that answers it instead.
        try:
            data = jsonrpc.encode_result_response(request_id, result)
        except _UNENCODABLE as exc:
            raise LocalProtocolError(f"the {spec.name} result can't be encoded: {exc}") from exc
        self._requests.close_incoming(request_id)
        if incoming.cancelled:
            return None
        self._phase = then
        effects = incoming.effects
        if effects is not None and effects.answered is not None:
            effects.answered(self, result)
        return data

    def send_error(
        self, request_id: RequestId, code: int, message: str, data: Any = UNSET
    ) -> bytes | None:
        """Answer the peer's request with an error. None if the peer cancelled it."""
        if self._end_incoming(request_id):
            return jsonrpc.encode_error_response(request_id, code, message, data)
        return None

    def abandon(self, request_id: RequestId) -> bool:
        """Forget the peer's request ``request_id``, which will never be answered.

        For a driver whose request can't run (it was cancelled before it started, or its
        transport is gone): the state changes as if an error had answered it (a failed
        ``initialize`` leaves the era open again), but nothing is written. Returns False,
        changing nothing, when the request is not open (answered already, or never
        received), so a driver racing an answer needs no check of its own.
        """
        if request_id not in self._requests.incoming:
            return False
        self._end_incoming(request_id)
        return True

    def _end_incoming(self, request_id: RequestId) -> bool:
        """Close the peer's request without a result; whether an answer is due."""
        incoming = self._requests.open_incoming(request_id)
        answers = ANSWER_KINDS.get(incoming.kind)
        then = self._phase if answers is None else self._may_send(answers[1], incoming.spec.name)
        self._requests.close_incoming(request_id)
        if incoming.cancelled:
            return False
        self._phase = then
        effects = incoming.effects
        if effects is not None and effects.refused is not None:
            effects.refused(self)
        return True

    def missing_capabilities(
        self, request_id: RequestId, method: str, params: Any = None
    ) -> ClientCapabilities | None:
        """Server: what the request's client lacks to be asked ``method``, or None.

        ``method`` is ``elicitation/create``, ``sampling/createMessage`` or
        ``roots/list``; the answer is shaped as ``requiredCapabilities``. In 2026-07-28
        the capabilities are the request's own ("servers MUST NOT infer capabilities
        from earlier requests"); in the legacy era, the session's.
        """
        incoming = self._requests.open_incoming(request_id)
        return required_client_capabilities(method, params, incoming.client_capabilities)

    def send_missing_capabilities(
        self, request_id: RequestId, required: ClientCapabilities, message: str | None = None
    ) -> bytes | None:
        """Server: refuse a request that needs client capabilities it did not declare.

        -32021 with ``data.requiredCapabilities`` (2026-07-28 basic: "If one is
        required → -32021", HTTP 400). None if the peer cancelled the request.
        """
        text = message or "The request needs a client capability it did not declare"
        data = {"requiredCapabilities": required}
        return self.send_error(request_id, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, text, data)

    # ================================================ subscriptions/listen streams

    def acknowledge_subscription(
        self, request_id: RequestId, notifications: SubscriptionFilter
    ) -> bytes | None:
        """Server: accept a ``subscriptions/listen`` stream with the filter we honour.

        It must be the first message of the stream, and a subset of what the client
        asked for ("unsupported types omitted", 2026-07-28 basic/patterns/subscriptions).
        None if the client already cancelled the stream.
        """
        incoming = self._open_stream(request_id)
        problem = _listen.acknowledgement_problem(incoming, notifications)
        if problem is not None:
            raise LocalProtocolError(problem)
        incoming.honoured_filter = notifications
        if incoming.cancelled:
            return None
        params = _listen.stamp_subscription_id(
            SubscriptionsAcknowledgedNotificationParams(notifications=notifications), request_id
        )
        return jsonrpc.encode_notification(_listen.LISTEN_ACKNOWLEDGED, params)

    def send_subscription_notification(
        self, request_id: RequestId, method: str, params: Any = None
    ) -> bytes | None:
        """Server: deliver a notification on a ``subscriptions/listen`` stream.

        The stream must be acknowledged, and the notification one its filter asked for.
        The ``subscriptionId`` is stamped on it. None if the client cancelled the stream.
        """
        incoming = self._open_stream(request_id)
        problem = _listen.sending_problem(incoming, method)
        if problem is not None:
            raise LocalProtocolError(problem)
        spec = self._spec_to_send(method, request=False)
        if incoming.cancelled:
            return None
        if params is None:
            params = self._empty_params(spec)
        params = _listen.stamp_subscription_id(params, request_id)
        return jsonrpc.encode_notification(method, params)

    def close_subscription(self, request_id: RequestId) -> bytes | None:
        """Server: end a listen stream gracefully, with its result (2026-07-28 SHOULD)."""
        self._open_stream(request_id)
        return self.send_result(request_id, _listen.closing_result())

    def cancel_subscription(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Server: tear a listen stream down with ``notifications/cancelled`` (stdio).

        The schema says a server ending a stdio subscription MUST send this; the
        subscriptions page says it SHOULD send the result (`close_subscription`). A
        client must handle both (CHECKLIST gotcha G6). None if the client cancelled first.
        """
        self._open_stream(request_id)
        incoming = self._requests.close_incoming(request_id)
        return None if incoming.cancelled else _cancelled(request_id, reason)

    def _open_stream(self, request_id: RequestId) -> IncomingRequest:
        incoming = self._requests.open_incoming(request_id)
        if not incoming.spec.opens_stream:
            raise LocalProtocolError(f"request {request_id!r} is not a subscriptions/listen")
        return incoming

    # ================================================================ receiving
    #
    # Every check a peer's message goes through, in order: how deeply it nests (before
    # anything decodes it), the JSON-RPC envelope (`jsonrpc`), the method table, the
    # params, the lifecycle table and the era's rules (the `Admit` route), the request
    # table. Input that can be answered becomes an `InvalidMessage` carrying the reply;
    # an unusable answer to one of our requests becomes an `InvalidResponse`.

    def receive(self, data: bytes) -> list[Event]:
        """Feed one message (or one 2025-03-26 batch) from the peer; get what happened.

        Never raises for input that can be answered: that becomes an `InvalidMessage`
        carrying the reply. Raises `RemoteProtocolError` only when the peer leaves the
        conversation unusable; the connection is closed from then on.
        """
        if self._phase is _CLOSED:
            raise RemoteProtocolError("data received on a closed connection")
        if type(data) is not bytes:
            # msgspec.Raw values are views into the buffer they came from; a caller's
            # reused bytearray would change under them.
            data = bytes(data)
        events: list[Event] = []
        if len(data) > _SHALLOW_SIZE and jsonrpc.nests_too_deeply(data):
            self._receive_too_deep(data, events)
        elif data[:1] == b"[" or (data[:1].isspace() and data.lstrip()[:1] == b"["):
            self._receive_batch(data, events)
        else:
            self._receive_message(data, events)
        return events

    def _receive_batch(self, data: bytes, events: list[Event]) -> None:
        if Kind.BATCH not in self._receiving[self._phase] or self._version not in BATCH_VERSIONS:
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Batches are not supported"))
            return
        try:
            items = _BATCH_DECODER.decode(data)
        except msgspec.ValidationError:
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: bad batch"))
            return
        except jsonrpc.DECODE_ERRORS:
            events.append(self._invalid(jsonrpc.PARSE_ERROR, "Parse error: invalid JSON"))
            return
        if not items:
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch"))
        for item in items:
            self._receive_message(bytes(item), events)

    def _receive_too_deep(self, data: bytes, events: list[Event]) -> None:
        """Refuse a message nested past `jsonrpc.MAX_JSON_DEPTH`, which is never decoded.

        Its id, peeked from the usual first bytes, still lets the conversation go on
        cleanly: a request gets its -32700 with the id echoed (so its caller hears of
        it at once), and an answer to one of our requests ends that request unusable
        (JSON-RPC never answers a response). Anything else is answered -32700 bare.
        """
        too_deep = jsonrpc.TOO_DEEP
        peeked = jsonrpc.peek_id(data)
        if peeked is None:
            events.append(self._invalid(too_deep.code, too_deep.message))
            return
        request_id, member = peeked
        if member == "method":
            events.append(self._invalid(too_deep.code, too_deep.message, request_id=request_id))
            return
        outgoing = self._requests.outgoing.get(request_id)
        if outgoing is not None:
            self._requests.finish(request_id)
            self._complete(request_id, outgoing, f"Malformed response: {too_deep.message}", events)
        elif not self._requests.gave_up_on(request_id):
            reason = f"Response to an unknown request {request_id!r}, nested too deeply"
            events.append(self._ignored(None, reason))

    def _receive_message(self, data: bytes, events: list[Event]) -> None:
        if not data.isascii() and not jsonrpc.is_valid_utf8(data):
            events.append(self._invalid(jsonrpc.PARSE_ERROR, jsonrpc.INVALID_UTF8.message))
            return
        # The one-pass paths (mcpcore._onepass): a server mostly receives calls, a
        # client mostly results. Whatever they refuse goes down the general path.
        if self._one_pass:
            if self.our_role is _SERVER:
                if self._receive_call_in_one_pass(data, events):
                    return
            elif self._receive_on_client_in_one_pass(data, events):
                return
        message = jsonrpc.decode_envelope(data, utf8_checked=True)
        if isinstance(message, jsonrpc.MalformedMessage):
            events.append(
                self._invalid(
                    message.code,
                    message.message,
                    request_id=message.request_id,
                    reply=message.answerable,
                )
            )
            return
        method, request_id = message.method, message.id
        is_response = message.result is not UNSET or message.error is not UNSET
        if method is UNSET and is_response:
            self._receive_response(message, events)
        elif message.jsonrpc != "2.0" or method is UNSET or is_response:
            events.append(self._not_a_message(message))
        elif request_id is UNSET:
            self._receive_notification(method, message.params, events)
        elif request_id is None:
            events.append(
                self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: id must not be null")
            )
        else:
            self._receive_request(request_id, method, message.params, events)

    def _not_a_message(self, message: jsonrpc.WireMessage) -> InvalidMessage:
        """The answer to JSON that is no JSON-RPC 2.0 request, notification or response."""
        reason = (
            'Invalid Request: "jsonrpc" must be "2.0"'
            if message.jsonrpc != "2.0"
            else "Invalid Request: not a request, notification or response"
        )
        request_id = message.id
        readable = request_id if isinstance(request_id, (int, str)) else None
        return self._invalid(jsonrpc.INVALID_REQUEST, reason, request_id=readable)

    # -- the one-pass paths: speed, never behaviour (tests/core/test_fuzz.py checks)

    def _receive_on_client_in_one_pass(self, data: bytes, events: list[Event]) -> bool:
        """A client tries a result first, judging by the first bytes, then a call."""
        if data.startswith(_RESULT_OR_REQUEST):
            if self._receive_result_in_one_pass(data, events):
                return True
            # A legacy server's request.
            return data.find(b'"method"') >= 0 and self._receive_call_in_one_pass(data, events)
        return (
            data.startswith(_NOTIFICATION) or data.find(b'"method"') >= 0
        ) and self._receive_call_in_one_pass(data, events)

    def _receive_call_in_one_pass(self, data: bytes, events: list[Event]) -> bool:
        """A well-formed request or notification, decoded in one pass; False if not."""
        try:
            call = self._call_decoder.decode(data)
        except jsonrpc.DECODE_ERRORS:
            return False
        spec, params = call.spec, call.params
        if params is UNSET:
            params = spec.read_params(UNSET)
        if params is None or spec.name not in self._receivable:
            return False
        if call.id is None:
            self._accept_notification(spec, params, events)
        else:
            self._accept_request(call.id, spec, params, events)
        return True

    def _receive_result_in_one_pass(self, data: bytes, events: list[Event]) -> bool:
        """A plain successful result, decoded in one pass; False if not.

        The result type comes from the method of our requests in flight when they all
        share one (sequential calls, or many concurrent tool calls); otherwise from the
        id, peeked from the first bytes. Either way the decoded id must then name a
        request of exactly that method.
        """
        spec = self._requests.only_method()
        if spec is None:
            peeked = jsonrpc.peek_result_id(data)
            peeked_request = None if peeked is None else self._requests.outgoing.get(peeked)
            if peeked_request is None:
                return False
            spec = peeked_request.spec
        if self._phase is _MODERN and spec.modern_result_type is not None:
            return False  # a shape of its own in 2026-07-28 (the tasks extension)
        try:
            message = spec.decode_result_message(data)
        except jsonrpc.DECODE_ERRORS:
            return False
        request_id, result = message.id, message.result
        outgoing = self._requests.outgoing.get(request_id)
        if (
            outgoing is None
            or outgoing.spec is not spec
            or (
                self._phase is _MODERN
                and getattr(result, "result_type", UNSET) not in (UNSET, "complete")
            )
        ):
            return False  # not ours, not that method, or a resultType to examine
        self._requests.finish(request_id)
        self._complete(request_id, outgoing, result, events)
        return True

    # ================================================== the peer's requests

    def _receive_request(
        self, request_id: RequestId, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self._receivable_requests.get(method)
        if spec is None:
            events.append(
                self._reject(request_id, method, self._unknown_method(method, raw_params))
            )
            return
        params = spec.read_params(raw_params)
        if params is None:
            rejection = Rejection(jsonrpc.INVALID_PARAMS, f"Invalid params for {method}")
            events.append(self._reject(request_id, method, rejection))
            return
        self._accept_request(request_id, spec, params, events)

    def _accept_request(
        self, request_id: RequestId, spec: MethodSpec, params: Any, events: list[Event]
    ) -> None:
        """Admit a request whose params decoded (or refuse it with the right answer)."""
        method = spec.name
        meta = meta_of(params)
        kind = claimed = KINDS.get(method, _PLAIN_REQUEST)
        if self._reads_envelopes and meta is not None and PROTOCOL_VERSION_META_KEY in meta:
            claimed = ENVELOPED_KINDS[kind]
        rule = self._receiving_requests[self._phase].get(claimed)
        if rule is None:
            events.append(self._reject(request_id, method, self._refusal(claimed, params)))
            return
        admit, then = rule
        admission = _ADMISSIONS[admit](self, spec, params, meta)
        if isinstance(admission, Rejection):
            events.append(self._reject(request_id, method, admission))
            return
        token = progress_token_in(meta)
        if token is False:
            rejection = Rejection(
                jsonrpc.INVALID_PARAMS,
                "Invalid params: _meta.progressToken must be a string or an integer",
            )
            events.append(self._reject(request_id, method, rejection))
            return
        refusal = self._requests.refusal(request_id, spec.opens_stream)
        if refusal is not None:
            rejection = Rejection(jsonrpc.INVALID_REQUEST, refusal)
            events.append(self._reject(request_id, method, rejection))
            return
        version, capabilities, log_level = admission
        effects = _EFFECTS.get(method)
        record = IncomingRequest(spec, kind, effects, version, capabilities, token, log_level)
        if spec.opens_stream:
            record.requested_filter = params.notifications
        self._phase = then
        if effects is not None and effects.received is not None:
            effects.received(self, params, version)
        self._requests.take_in(request_id, record)
        events.append(
            RequestReceived(
                request_id=request_id,
                method=method,
                params=params,
                protocol_version=version,
                client_capabilities=capabilities,
                progress_token=record.progress_token,
                log_level=log_level,
            )
        )

    def _refusal(self, claimed: Kind, params: Any) -> Rejection:
        """The answer `REFUSED_REQUESTS` gives a request the phase does not admit."""
        refused = self._refused_requests[self._phase].get(claimed)
        if refused is None:  # (the tables cover every open phase; tests/core checks)
            return Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request")
        data: Any = UNSET
        if refused.names_versions:
            data = {
                "supported": list(self.supported_modern_versions),
                "requested": params.protocol_version,
            }
        message = refused.message.format(version=self._version)
        return Rejection(refused.code, message, data, refused.reply)

    def _unknown_method(self, method: str, raw_params: Raw | UnsetType) -> Rejection:
        """The answer to a method we don't serve.

        A 2026-07-28 request still owes us a valid envelope before we say "no such
        method": -32602 and -32022 come first (the order the spec's conformance tests
        expect), wherever the phase admits requests by their envelope.
        """
        claimed = Kind.REQUEST
        meta = probe_meta(raw_params) if self._reads_envelopes else None
        if meta is not None and PROTOCOL_VERSION_META_KEY in meta:
            claimed = Kind.ENVELOPED
        rule = self._receiving_requests[self._phase].get(claimed)
        if rule is not None and rule[0] is Admit.ENVELOPE:
            envelope = read_modern_envelope(meta, self.supported_modern_versions)
            if isinstance(envelope, Rejection):
                return envelope
        return _method_not_found(method)

    # -- the admission routes of `_state.Admit`, by `_ADMISSIONS`

    def _admit_handshake(
        self, spec: MethodSpec, params: InitializeRequestParams, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        requested = params.protocol_version
        version = negotiate_legacy_version(requested, self.supported_versions)
        if version is None:
            # "A modern-only server SHOULD name its supported versions in any error it
            # returns to an initialize request" (2026-07-28 basic/versioning).
            return Rejection(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version: this server does not speak the handshake era",
                {"supported": list(self.supported_modern_versions), "requested": requested},
            )
        return version, params.capabilities, None

    def _admit_as_is(
        self, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        return None, None, None

    def _admit_session(
        self, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        version, ours, theirs = self._version, self._capabilities, self._their_capabilities
        state = (Admit.SESSION, version, ours, theirs)
        admission = self._admitted.recall(state, spec)
        if admission is not None:
            return admission
        if version is None or version not in spec.versions:
            return _method_not_found(spec.name)
        if ours is not None and _gated(spec, ours, version):
            return _method_not_found(spec.name)
        admission = (version, theirs if isinstance(theirs, ClientCapabilities) else None, None)
        self._admitted.keep(state, spec, admission)
        return admission

    def _admit_envelope(
        self, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        # A client asks the same few methods over and over with the same envelope (read
        # whole each time otherwise). The envelope is remembered as its JSON: equal
        # decoded values may be different JSON (True == 1 == 1.0, but a capability flag
        # that is a number is -32602), and bytes don't change when a handler changes
        # the request's own _meta.
        ours = self._capabilities
        seen = None if meta is None else _META_ENCODER.encode(meta)
        admission = self._admitted.recall((Admit.ENVELOPE, ours, seen), spec)
        if admission is not None:
            return admission
        envelope = read_modern_envelope(meta, self.supported_modern_versions)
        if isinstance(envelope, Rejection):
            return envelope
        version = envelope.protocol_version
        if version not in spec.versions:
            # Removed methods (ping, logging/setLevel, resources/subscribe...) → -32601
            # (2026-07-28 basic/versioning).
            return _method_not_found(spec.name)
        if ours is not None and _gated(spec, ours, version):
            return _method_not_found(spec.name)
        admission = (version, envelope.client_capabilities, envelope.log_level)
        self._admitted.keep((Admit.ENVELOPE, ours, seen), spec, admission)
        return admission

    def _admit_callback(
        self, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        version = self._version
        if version is None or version not in spec.versions:
            return _method_not_found(spec.name)
        if spec.capability is not None and not has_capability(self._capabilities, spec.capability):
            # "A client without roots support → -32601" (2024-11-05 client/roots), and
            # likewise for every capability-gated request.
            return _method_not_found(spec.name)
        return version, None, None

    # ================================================ the peer's notifications

    def _receive_notification(
        self, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self._receivable_notifications.get(method)
        if spec is None:
            events.append(self._ignored(method, f"Unknown notification: {method}"))
            return
        params = spec.read_params(raw_params)
        if params is None:
            events.append(self._ignored(method, f"Invalid params for {method}"))
        else:
            self._accept_notification(spec, params, events)

    def _accept_notification(self, spec: MethodSpec, params: Any, events: list[Event]) -> None:
        """Act on a notification whose params decoded, if the phase accepts it."""
        kind = KINDS.get(spec.name, _PLAIN_NOTIFICATION)
        then = self._receiving[self._phase].get(kind)
        if then is None:
            events.append(self._ignored(spec.name, IGNORED.get(kind, "Unexpected notification")))
            return
        self._phase = then
        _NOTIFICATION_HANDLERS.get(kind, Connection._receive_plain)(self, spec, params, events)

    def _receive_initialized(self, spec: MethodSpec, params: Any, events: list[Event]) -> None:
        events.append(NotificationReceived(method=spec.name, params=params))

    def _receive_cancel(
        self, spec: MethodSpec, params: CancelledNotificationParams, events: list[Event]
    ) -> None:
        request_id = params.request_id
        if request_id is UNSET:
            # Only task-augmented requests (2025-11-25) omit it, and those are cancelled
            # with tasks/cancel: nothing to do.
            return
        reason = None if params.reason is UNSET else params.reason
        incoming = self._requests.incoming.get(request_id)
        if incoming is not None:
            # Invalid cancellations SHOULD be ignored (2025-11-25 basic/utilities/cancellation).
            if incoming.kind not in UNCANCELLABLE and not incoming.cancelled:
                incoming.cancelled = True
                events.append(CancelRequested(request_id=request_id, reason=reason))
            return
        outgoing = self._requests.outgoing.get(request_id)
        if outgoing is not None and outgoing.spec.opens_stream:
            # 2026-07-28: the one thing a server may cancel is a listen stream.
            self._requests.finish(request_id, gave_up=True)
            events.append(SubscriptionEnded(subscription_id=request_id, reason=reason))
        # Anything else refers to a request already answered: a harmless race.

    def _receive_progress(
        self, spec: MethodSpec, params: ProgressNotificationParams, events: list[Event]
    ) -> None:
        request_id = self._requests.for_token(params.progress_token)
        if request_id is None:
            return  # progress for a request that already completed: a harmless race
        outgoing = self._requests.outgoing[request_id]
        if outgoing.last_progress is not None and params.progress <= outgoing.last_progress:
            # "The progress value MUST increase with each notification" (2024-11-05).
            events.append(self._ignored(spec.name, "Progress must increase"))
            return
        outgoing.last_progress = params.progress
        events.append(
            ProgressReceived(
                request_id=request_id,
                progress_token=params.progress_token,
                progress=params.progress,
                total=None if params.total is UNSET else params.total,
                message=None if params.message is UNSET else params.message,
            )
        )

    def _receive_plain(self, spec: MethodSpec, params: Any, events: list[Event]) -> None:
        """Any other notification: checked against the era's rules."""
        method = spec.name
        if self._phase is _MODERN and self.our_role is not _SERVER:
            # A 2026-07-28 client reads notifications against the listen stream they name.
            subscription_id = _listen.subscription_id_of(params)
            if subscription_id is not None:
                stream = self._requests.outgoing.get(subscription_id)
                problem = _listen.receive_on_stream(stream, method, params)
                if problem is not None:
                    events.append(self._ignored(method, problem))
                    return
            events.append(
                NotificationReceived(method=method, params=params, subscription_id=subscription_id)
            )
        elif self.era is Era.LEGACY and self._version not in spec.versions:
            events.append(self._ignored(method, f"{method} does not exist in {self._version}"))
        else:
            events.append(NotificationReceived(method=method, params=params))

    # ============================================ the peer's answers to our requests

    def _receive_response(self, message: jsonrpc.WireMessage, events: list[Event]) -> None:
        request_id = message.id
        if not isinstance(request_id, (int, str)):
            # An error about a message the peer could not read (it has no id).
            error = self._read_error(message)
            if error is None:
                events.append(self._ignored(None, "Malformed response without an id"))
            else:
                events.append(ErrorReceived(request_id=None, method=None, error=error))
            return
        outgoing = self._requests.outgoing.get(request_id)
        if outgoing is None:
            if not self._requests.gave_up_on(request_id):
                events.append(self._ignored(None, f"Response to an unknown request {request_id!r}"))
            return  # else: a late answer to a request we gave up on, dropped quietly
        self._requests.finish(request_id)
        outcome: Any
        if message.result is not UNSET and message.error is UNSET and message.jsonrpc == "2.0":
            modern = self._phase is _MODERN
            outcome = decode_result(outgoing.spec, message.result, modern=modern)
        else:
            error = self._read_error(message)
            outcome = "Malformed response" if error is None else error
        self._complete(request_id, outgoing, outcome, events)

    def _complete(
        self, request_id: RequestId, outgoing: OutgoingRequest, outcome: Any, events: list[Event]
    ) -> None:
        """Report how one of our requests ended: a result, an error, or unusable (a str)."""
        method = outgoing.spec.name
        effects = outgoing.effects
        if isinstance(outcome, str):
            event: Event = InvalidResponse(request_id=request_id, method=method, message=outcome)
        elif isinstance(outcome, Error):
            event = ErrorReceived(request_id=request_id, method=method, error=outcome)
        else:
            if outgoing.kind is not _PLAIN_REQUEST:
                self._answer_received(outgoing, success=True)
            if effects is not None and effects.succeeded is not None:
                effects.succeeded(self, outcome)
            events.append(ResponseReceived(request_id=request_id, method=method, result=outcome))
            return
        if outgoing.kind is not _PLAIN_REQUEST:
            self._answer_received(outgoing, success=False)
        if effects is not None and effects.failed is not None:
            effects.failed(self)
        events.append(event)

    def _answer_received(self, outgoing: OutgoingRequest, *, success: bool) -> None:
        """Move the lifecycle for the answer to a request of a kind it names."""
        answers = ANSWER_KINDS.get(outgoing.kind)
        if answers is not None:
            kind = answers[0] if success else answers[1]
            self._phase = self._may_receive(kind, outgoing.spec.name)

    def _read_error(self, message: jsonrpc.WireMessage) -> Error | None:
        """The error of a well-formed error response, or None."""
        if message.jsonrpc != "2.0" or message.result is not UNSET or message.error is UNSET:
            return None
        wire = jsonrpc.decode_error(message.error)
        if wire is None:
            return None
        data = UNSET if wire.data is UNSET else _ANY_DECODER.decode(wire.data)
        return Error(code=wire.code, message=wire.message, data=data)

    # ================================================================ the lifecycle

    def _may_send(self, kind: Kind, what: str, *, action: str | None = None) -> Phase:
        """The phase after we send a message of ``kind``; LocalProtocolError if we may not.

        ``what`` names the message, ``action`` the method that sends it, for the error.
        """
        then = self._sending[self._phase].get(kind)
        if then is not None:
            return then
        if self._phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")
        if action is not None and not any(kind in row for row in self._sending.values()):
            raise LocalProtocolError(f"{action}() is for the {self.their_role.value} side")
        hint = _SENDING_HINTS.get((self.our_role, self._phase, kind), "")
        raise LocalProtocolError(f"can't send {what} in the {self._phase.value} phase{hint}")

    def _may_receive(self, kind: Kind, what: str) -> Phase:
        """The phase after the peer's message of ``kind``; RemoteProtocolError if impossible.

        Only for the messages no table refuses quietly (the answers to ``initialize``):
        one arriving in a phase with no row for it leaves nothing to go on.
        """
        then = self._receiving[self._phase].get(kind)
        if then is None:
            phase = self._phase
            self.close()
            raise RemoteProtocolError(f"the {what} {kind.value} came in the {phase.value} phase")
        return then

    def _step(self, step: Step, action: str) -> Phase:
        """The phase after a decision of our own; LocalProtocolError if we may not take it."""
        then = self._steps[self._phase].get(step)
        if then is not None:
            return then
        if not any(step in row for row in self._steps.values()):
            raise LocalProtocolError(f"{action}() is for the {self.their_role.value} side")
        raise LocalProtocolError(f"can't {step.value} in the {self._phase.value} phase")

    # ================================================================== helpers

    def _request_envelope(self, version: str) -> dict[str, Any]:
        """The ``_meta`` a 2026-07-28 client stamps on its requests at ``version``."""
        state = (self._capabilities,)
        envelope = self._envelopes.recall(state, version)
        if envelope is None:
            capabilities = self._capabilities
            if not isinstance(capabilities, ClientCapabilities):
                capabilities = ClientCapabilities()
            envelope = request_envelope(version, capabilities, self.implementation)
            self._envelopes.keep(state, version, envelope)
        return envelope

    def _spec_to_send(self, method: str, *, request: bool) -> MethodSpec:
        sendable = self._sendable_requests if request else self._sendable_notifications
        spec = sendable.get(method)
        if spec is None:
            raise self._unsendable(method, request=request)
        return spec

    def _unsendable(self, method: str, *, request: bool) -> LocalProtocolError:
        """Why ``method`` is not one of the requests (or notifications) we may send."""
        if self._phase is Phase.CLOSED:
            return LocalProtocolError("the connection is closed")
        spec = self.methods.get(method)
        if spec is None:
            return LocalProtocolError(f"unknown method {method!r}; register it in the method table")
        if spec.is_request is not request:
            kind = "a request" if spec.is_request else "a notification"
            return LocalProtocolError(f"{method} is {kind}")
        return LocalProtocolError(f"a {self.our_role.value} can't send {method}")

    def _empty_params(self, spec: MethodSpec) -> Any:
        """The params a request or notification sent without any gets."""
        try:
            return spec.params_type()
        except TypeError:
            raise LocalProtocolError(f"{spec.name} needs params") from None

    def _invalid(
        self, code: int, message: str, *, request_id: RequestId | None = None, reply: bool = True
    ) -> InvalidMessage:
        return InvalidMessage(
            code=code,
            message=message,
            reply=jsonrpc.encode_error_response(request_id, code, message) if reply else None,
            request_id=request_id,
        )

    def _reject(self, request_id: RequestId, method: str, rejection: Rejection) -> InvalidMessage:
        reply = None
        if rejection.reply:
            reply = jsonrpc.encode_error_response(
                request_id, rejection.code, rejection.message, rejection.data
            )
        return InvalidMessage(
            code=rejection.code,
            message=rejection.message,
            reply=reply,
            request_id=request_id,
            method=method,
        )

    def _ignored(self, method: str | None, message: str) -> InvalidMessage:
        # JSON-RPC never answers a notification (even a broken one) or a response.
        return InvalidMessage(code=jsonrpc.INVALID_REQUEST, message=message, method=method)

    # ====================== method-specific effects (see the tables below the class)

    def _check_initialize(self, params: Any) -> None:
        if not isinstance(params, InitializeRequestParams):
            raise LocalProtocolError("initialize takes InitializeRequestParams")
        if params.protocol_version not in self.supported_versions:
            raise LocalProtocolError(
                f"initialize must offer a supported version, not {params.protocol_version!r}"
            )

    def _sent_initialize(self, params: InitializeRequestParams) -> None:
        self._capabilities = params.capabilities
        self._version = params.protocol_version  # until the server answers

    def _received_initialize(self, params: InitializeRequestParams, version: str | None) -> None:
        self._version = version
        self._their_capabilities = params.capabilities
        self._their_info = params.client_info

    def _received_set_level(self, params: Any, version: str | None) -> None:
        self._log_level = params.level

    def _answered_initialize(self, result: InitializeResult) -> None:
        if self._capabilities is None:
            self._capabilities = result.capabilities

    def _initialize_failed(self) -> None:
        # A failed initialize leaves the era open: the client may retry, or probe.
        self._version = None

    def _initialize_answered(self, result: InitializeResult) -> None:
        if era_of(result.protocol_version) is not Era.LEGACY or (
            result.protocol_version not in self.supported_versions
        ):
            # "If the client does not support the version in the server's response, it
            # SHOULD disconnect" (2024-11-05 basic/lifecycle).
            self.close()
            raise RemoteProtocolError(
                f"The server chose protocol version {result.protocol_version!r}, "
                "which this client does not support"
            )
        self._version = result.protocol_version
        self._their_capabilities = result.capabilities
        self._their_info = result.server_info

    def _discovered(self, result: Any) -> None:
        self._their_capabilities = result.capabilities


def _gated(spec: MethodSpec, advertised: Any, version: str) -> bool:
    """Whether ``spec`` is gated on a capability ``advertised`` lacks, under ``version``.

    "-32601 also means method gated behind a server capability the server did not
    advertise" (2026-07-28 basic); gating starts with ``spec.capability_since``.
    """
    capability = spec.capability
    return not (
        capability is None
        or (spec.capability_since is not None and not is_at_least(version, spec.capability_since))
        or has_capability(advertised, capability)
    )


def _method_not_found(method: str) -> Rejection:
    return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")


def _cancelled(request_id: RequestId, reason: str | None) -> bytes:
    """A ``notifications/cancelled`` for ``request_id``."""
    params = CancelledNotificationParams(
        request_id=request_id, reason=UNSET if reason is None else reason
    )
    return jsonrpc.encode_notification("notifications/cancelled", params)


# The checks each admission route of the lifecycle table runs (`_state.Admit`).
_ADMISSIONS: Final[
    dict[Admit, Callable[[Connection, MethodSpec, Any, dict[str, Any] | None], Any]]
] = {
    Admit.HANDSHAKE: Connection._admit_handshake,
    Admit.AS_IS: Connection._admit_as_is,
    Admit.SESSION: Connection._admit_session,
    Admit.ENVELOPE: Connection._admit_envelope,
    Admit.CALLBACK: Connection._admit_callback,
}
# What a notification the lifecycle accepts does, by kind (any other: `_receive_plain`).
_NOTIFICATION_HANDLERS: Final[
    dict[Kind, Callable[[Connection, MethodSpec, Any, list[Event]], None]]
] = {
    Kind.INITIALIZED: Connection._receive_initialized,
    Kind.CANCELLED: Connection._receive_cancel,
    Kind.PROGRESS: Connection._receive_progress,
}


class _Effects(NamedTuple):
    """What a method does beyond the lifecycle and the request table, at each moment.

    Each hook runs once every check has passed (rule 2 of this module).
    """

    #: Checks the params of a request we are about to send.
    check: Callable[[Connection, Any], None] | None = None
    #: We sent the request (its params).
    sent: Callable[[Connection, Any], None] | None = None
    #: We admitted the peer's request (its params, the version it is served under).
    received: Callable[[Connection, Any, str | None], None] | None = None
    #: We answered the peer's request with a result.
    answered: Callable[[Connection, Any], None] | None = None
    #: We answered the peer's request with an error, or abandoned it.
    refused: Callable[[Connection], None] | None = None
    #: The peer answered our request with a result.
    succeeded: Callable[[Connection, Any], None] | None = None
    #: The peer answered our request with an error, or with something unusable.
    failed: Callable[[Connection], None] | None = None


#: The methods that do something beyond the lifecycle and the request table, by name.
_EFFECTS: Final[dict[str, _Effects]] = {
    "initialize": _Effects(
        check=Connection._check_initialize,
        sent=Connection._sent_initialize,
        received=Connection._received_initialize,
        answered=Connection._answered_initialize,
        refused=Connection._initialize_failed,
        succeeded=Connection._initialize_answered,
        failed=Connection._initialize_failed,
    ),
    "logging/setLevel": _Effects(received=Connection._received_set_level),
    "server/discover": _Effects(succeeded=Connection._discovered),
}
