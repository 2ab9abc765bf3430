"""`Connection`: the sans-IO MCP protocol state machine, for one peer.

Modelled on h11: ``Connection(our_role)``. Bytes the peer sent go into `receive`,
which returns events; each protocol action (`send_request`, `send_result`, `cancel`,
...) checks and updates the state first and returns the bytes to write, or None where
the protocol says to send nothing. There is no IO, no clock and no randomness here: a
driver moves the bytes, owns the time, and runs the user's code.

`receive` takes exactly one JSON-RPC message (or one 2025-03-26 batch); framing
(newlines, SSE, WebSocket frames) is the driver's job, with `mcpcore.framing`. Every
action returns one compact JSON message without a trailing newline.

What it tracks:

* the era: the legacy ``initialize`` handshake and its version negotiation, or a
  2026-07-28 request's own ``_meta``. The first request decides, once, as the official
  SDKs do: ``initialize`` after a 2026-07-28 request is answered -32022 naming our
  versions, and a 2026-07-28 request inside a legacy session is answered -32600;
* requests in flight both ways, matched by exact id (``"7"`` is not ``7``), with a
  bounded memory of ids we gave up on, so a late answer is dropped quietly;
* cancellation, progress, ``subscriptions/listen`` streams, log levels, and the shape
  of 2026-07-28 results (``resultType``, cache hints, multi round-trip requests).

Misuse on our side raises `LocalProtocolError` before anything changes. What the peer
gets wrong becomes an `InvalidMessage` event carrying the reply to write; only a peer
that makes the conversation impossible (a server choosing a version we do not speak)
raises `RemoteProtocolError`.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import _state, jsonrpc
from mcpcore._capabilities import has_capability, required_client_capabilities
from mcpcore._envelope import (
    Rejection,
    meta_of,
    probe_meta,
    read_modern_envelope,
    stamp_request_meta,
)
from mcpcore._inflight import IncomingRequest, OutgoingRequest, RecentIds
from mcpcore._results import check_input_required, shape_modern_result
from mcpcore._state import Phase, Role, Step
from mcpcore.errors import LocalProtocolError, RemoteProtocolError
from mcpcore.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    InvalidMessage,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
)
from mcpcore.methods import DEFAULT_METHODS, Direction, MethodSpec, MethodTable
from mcpcore.types import (
    PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    CancelledNotificationParams,
    ClientCapabilities,
    Error,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    InputRequiredResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    ProgressToken,
    RequestId,
    ServerCapabilities,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenResult,
)
from mcpcore.versions import (
    ALL_VERSIONS,
    BATCH_VERSIONS,
    Era,
    era_of,
    is_at_least,
    negotiate_legacy_version,
)

__all__ = [
    "MAX_RECENTLY_CLOSED_IDS",
    "MAX_REQUESTS_IN_FLIGHT",
    "MAX_SUBSCRIPTIONS",
    "Connection",
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
#: Open subscriptions/listen streams per connection: the Python SDK's default
#: (``max_subscriptions=1024``). Each costs a filter here and a task in the driver.
MAX_SUBSCRIPTIONS: Final = 1024

_LEGACY_PHASES: Final = frozenset({Phase.INITIALIZING, Phase.INITIALIZED, Phase.OPERATING})
_LOG_RANK: Final[dict[str, int]] = {
    level: rank
    for rank, level in enumerate(
        ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    )
}
# Notifications with an action of their own, because the core must track them.
_DEDICATED_ACTIONS: Final = {
    "notifications/cancelled": "cancel() or cancel_subscription()",
    "notifications/progress": "send_progress()",
    "notifications/message": "send_log_message()",
    "notifications/subscriptions/acknowledged": "acknowledge_subscription()",
}
_LISTEN = "subscriptions/listen"
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_RESOURCE_UPDATED = "notifications/resources/updated"
# The subscriptions/listen filter flag each list_changed notification needs (2026-07-28).
_LISTEN_FLAGS: Final = {
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/resources/list_changed": "resources_list_changed",
}
# "notifications/progress and notifications/message MUST NOT be delivered on a listen
# stream" (2026-07-28 basic/patterns/subscriptions).
_NEVER_ON_LISTEN: Final = frozenset({"notifications/progress", "notifications/message"})
_BATCH_DECODER: Final = msgspec.json.Decoder(list[Raw])
_ANY_DECODER: Final = msgspec.json.Decoder()
_INPUT_REQUIRED_DECODER: Final = msgspec.json.Decoder(InputRequiredResult)


class Connection:
    """The protocol state of one MCP conversation, seen from ``our_role``.

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
        self.implementation: Final = implementation
        self._modern_versions = tuple(v for v in supported_versions if era_of(v) is Era.MODERN)
        self._phase = Phase.IDLE
        # Legacy: the negotiated version. A 2026-07-28 client: the version it speaks.
        self._version: str | None = None
        self._our_capabilities = capabilities
        self._their_capabilities: ServerCapabilities | ClientCapabilities | None = None
        self._their_info: Implementation | None = None
        self._incoming: dict[RequestId, IncomingRequest] = {}
        self._outgoing: dict[RequestId, OutgoingRequest] = {}
        self._outgoing_progress: dict[ProgressToken, RequestId] = {}
        self._closed_outgoing = RecentIds(MAX_RECENTLY_CLOSED_IDS)
        self._subscriptions = 0
        self._next_id = 1
        # Legacy logging/setLevel: None until the client asks for log messages.
        self._log_level: LoggingLevel | None = None
        self._sending: Final = (
            Direction.CLIENT_TO_SERVER if our_role is Role.CLIENT else Direction.SERVER_TO_CLIENT
        )
        self._receiving: Final = (
            Direction.SERVER_TO_CLIENT if our_role is Role.CLIENT else Direction.CLIENT_TO_SERVER
        )

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
        if self._phase in _LEGACY_PHASES:
            return Era.LEGACY
        return None

    @property
    def protocol_version(self) -> str | None:
        """The negotiated legacy version, or the version a 2026-07-28 client speaks."""
        return self._version

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
        return tuple(self._outgoing)

    @property
    def requests_in_flight(self) -> int:
        """How many of the peer's requests we have not answered yet."""
        return len(self._incoming)

    def close(self) -> tuple[RequestId, ...]:
        """Close the conversation; returns the ids of our requests that will never be answered."""
        pending = tuple(self._outgoing)
        self._phase = Phase.CLOSED
        self._outgoing.clear()
        self._outgoing_progress.clear()
        self._incoming.clear()
        return pending

    # --------------------------------------------------------------- receiving

    def receive(self, data: bytes) -> list[Event]:
        """Feed one message (or one 2025-03-26 batch) from the peer; get what happened.

        Never raises for input that can be answered: that becomes an `InvalidMessage`
        carrying the reply. Raises `RemoteProtocolError` only when the peer leaves the
        conversation unusable; the connection is closed from then on.
        """
        if self._phase is Phase.CLOSED:
            raise RemoteProtocolError("data received on a closed connection")
        if type(data) is not bytes:
            # msgspec.Raw values are views into the buffer they came from; a caller's
            # reused bytearray would change under them.
            data = bytes(data)
        events: list[Event] = []
        if data[:1] == b"[" or (data[:1].isspace() and data.lstrip()[:1] == b"["):
            self._receive_batch(data, events)
        else:
            self._receive_message(data, events)
        return events

    def _receive_batch(self, data: bytes, events: list[Event]) -> None:
        # "Implementations MUST support receiving JSON-RPC batches" in 2025-03-26 (and
        # only there), and "initialize MUST NOT be part of a batch".
        if self._phase not in (Phase.INITIALIZED, Phase.OPERATING) or (
            self._version not in BATCH_VERSIONS
        ):
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Batches are not supported"))
            return
        try:
            items = _BATCH_DECODER.decode(data)
        except msgspec.ValidationError:
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: bad batch"))
            return
        except (msgspec.DecodeError, UnicodeDecodeError):
            events.append(self._invalid(jsonrpc.PARSE_ERROR, "Parse error: invalid JSON"))
            return
        if not items:
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        for item in items:
            self._receive_message(bytes(item), events)

    def _receive_message(self, data: bytes, events: list[Event]) -> None:
        message = jsonrpc.decode_envelope(data)
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
        result, error = message.result, message.error
        has_result, has_error = result is not UNSET, error is not UNSET
        readable_id = request_id if isinstance(request_id, (int, str)) else None
        if message.jsonrpc != "2.0":
            events.append(
                self._invalid(
                    jsonrpc.INVALID_REQUEST,
                    'Invalid Request: "jsonrpc" must be "2.0"',
                    request_id=readable_id,
                    reply=not (has_result or has_error),
                )
            )
        elif method is not UNSET and not (has_result or has_error):
            if request_id is UNSET:
                self._receive_notification(method, message.params, events)
            elif request_id is None:
                events.append(
                    self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: id must not be null")
                )
            else:
                self._receive_request(request_id, method, message.params, events)
        elif method is UNSET and result is not UNSET and not has_error and readable_id is not None:
            self._receive_result(readable_id, result, events)
        elif method is UNSET and error is not UNSET and not has_result:
            # The id may be absent or null: the peer could not read which message it
            # was answering (2025-11-25 basic).
            self._receive_error(readable_id, error, events)
        else:
            # Never answer what looks like a response: two peers must not be able to
            # trade error replies forever.
            events.append(
                self._invalid(
                    jsonrpc.INVALID_REQUEST,
                    "Invalid Request: not a request, notification or response",
                    request_id=readable_id,
                    reply=method is not UNSET or not (has_result or has_error),
                )
            )

    def _receive_request(
        self, request_id: RequestId, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self.methods.get(method)
        if spec is None or not spec.is_request or not spec.direction & self._receiving:
            rejection = self._unknown_method(method, raw_params)
            events.append(self._reject(request_id, method, rejection))
            return
        params = _decode_params(spec, raw_params)
        if params is None:
            events.append(
                self._reject(
                    request_id,
                    method,
                    Rejection(jsonrpc.INVALID_PARAMS, f"Invalid params for {method}"),
                )
            )
            return
        if self.our_role is Role.SERVER:
            admission = self._admit_on_server(spec, params)
        else:
            admission = self._admit_on_client(spec)
        if isinstance(admission, Rejection):
            events.append(self._reject(request_id, method, admission))
            return
        version, capabilities, log_level = admission
        if request_id in self._incoming:
            events.append(
                self._reject(
                    request_id,
                    method,
                    Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request: id already in flight"),
                )
            )
            return
        if len(self._incoming) >= MAX_REQUESTS_IN_FLIGHT:
            events.append(
                self._reject(
                    request_id,
                    method,
                    Rejection(
                        jsonrpc.INVALID_REQUEST,
                        f"Too many requests in flight (limit {MAX_REQUESTS_IN_FLIGHT})",
                    ),
                )
            )
            return
        token = _progress_token_of(params)
        if token is False:
            events.append(
                self._reject(
                    request_id,
                    method,
                    Rejection(
                        jsonrpc.INVALID_PARAMS,
                        "Invalid params: _meta.progressToken must be a string or an integer",
                    ),
                )
            )
            return
        record = IncomingRequest(spec, version, capabilities, token, log_level)
        if method == _LISTEN:
            if self._subscriptions >= MAX_SUBSCRIPTIONS:
                events.append(
                    self._reject(
                        request_id,
                        method,
                        Rejection(
                            jsonrpc.INVALID_REQUEST,
                            f"Too many open subscriptions (limit {MAX_SUBSCRIPTIONS})",
                        ),
                    )
                )
                return
            self._subscriptions += 1
            record.requested_filter = params.notifications
        elif method == "logging/setLevel":
            self._log_level = params.level
        elif method == "initialize":
            self._advance(Step.INITIALIZE_REQUEST)
            self._version = version
            self._their_capabilities = params.capabilities
            self._their_info = params.client_info
        if self._phase is Phase.IDLE and version is not None and era_of(version) is Era.MODERN:
            self._advance(Step.MODERN_REQUEST)  # the first 2026-07-28 request decides
        self._incoming[request_id] = record
        events.append(
            RequestReceived(
                request_id=request_id,
                method=method,
                params=params,
                protocol_version=version,
                client_capabilities=capabilities,
                progress_token=token,
                log_level=log_level,
            )
        )

    def _admit_on_server(
        self, spec: MethodSpec, params: Any
    ) -> tuple[str | None, ClientCapabilities | None, LoggingLevel | None] | Rejection:
        """Decide whether a server serves a request, and under which version."""
        meta = meta_of(params)
        phase = self._phase
        if spec.name == "initialize":
            return self._admit_initialize(params)
        if phase is Phase.MODERN or (meta is not None and PROTOCOL_VERSION_META_KEY in meta):
            if phase in _LEGACY_PHASES:
                return Rejection(
                    jsonrpc.INVALID_REQUEST,
                    f"Invalid Request: this connection speaks {self._version}; requests "
                    "carrying the 2026-07-28 _meta envelope are not accepted on it",
                )
            envelope = read_modern_envelope(meta, self._modern_versions)
            if isinstance(envelope, Rejection):
                return envelope
            if envelope.protocol_version not in spec.versions:
                # Removed methods (ping, initialize, logging/setLevel, resources/subscribe)
                # → -32601 (2026-07-28 basic/versioning).
                return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {spec.name}")
            gated = self._gated(spec, envelope.protocol_version)
            if gated is not None:
                return gated
            return envelope.protocol_version, envelope.client_capabilities, envelope.log_level
        if phase is Phase.IDLE:
            if spec.name == "ping":
                return None, None, None
            return Rejection(
                jsonrpc.INVALID_REQUEST,
                "Invalid Request: send initialize first, or a 2026-07-28 request with its _meta",
            )
        version = self._version
        assert version is not None  # set with the initialize request
        if version not in spec.versions:
            return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {spec.name}")
        gated = self._gated(spec, version)
        if gated is not None:
            return gated
        capabilities = self._their_capabilities
        assert capabilities is None or isinstance(capabilities, ClientCapabilities)
        return version, capabilities, None

    def _admit_initialize(
        self, params: InitializeRequestParams
    ) -> tuple[str | None, ClientCapabilities | None, LoggingLevel | None] | Rejection:
        requested = params.protocol_version
        if self._phase is Phase.MODERN:
            meta = meta_of(params)
            if meta is not None and PROTOCOL_VERSION_META_KEY in meta:
                # A 2026-07-28 request for a method 2026-07-28 removed (Streamable
                # HTTP's modern path answers it 404 + -32601).
                return Rejection(jsonrpc.METHOD_NOT_FOUND, "Method not found: initialize")
            # As the official SDKs answer a handshake on a connection already serving
            # 2026-07-28: -32022 naming what we serve, which a probing client reads as
            # "modern" and re-probes (2026-07-28 basic/versioning).
            return Rejection(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                "This connection serves 2026-07-28; the initialize handshake is not accepted",
                {"supported": list(self._modern_versions), "requested": requested},
            )
        if self._phase is not Phase.IDLE:
            return Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request: already initialized")
        version = negotiate_legacy_version(requested, self.supported_versions)
        if version is None:
            # "A modern-only server SHOULD name its supported versions in any error it
            # returns to an initialize request" (2026-07-28 basic/versioning).
            return Rejection(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version: this server does not speak the handshake era",
                {"supported": list(self._modern_versions), "requested": requested},
            )
        return version, params.capabilities, None

    def _admit_on_client(
        self, spec: MethodSpec
    ) -> tuple[str | None, ClientCapabilities | None, LoggingLevel | None] | Rejection:
        """Decide whether a client answers a server's request (legacy only)."""
        if self._phase is Phase.MODERN:
            # "Servers MUST NOT initiate JSON-RPC requests" and "clients do not send
            # JSON-RPC responses" (2026-07-28 basic): nothing to answer with.
            return Rejection(
                jsonrpc.INVALID_REQUEST,
                "A 2026-07-28 server must not send requests",
                reply=False,
            )
        if self._phase not in _LEGACY_PHASES:
            return Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request: not initialized")
        if self._version not in spec.versions:
            return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {spec.name}")
        if spec.capability is not None and not has_capability(
            self._our_capabilities, spec.capability
        ):
            # "A client without roots support → -32601" (2024-11-05 client/roots), and
            # likewise for every capability-gated request.
            return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {spec.name}")
        return self._version, None, None

    def _gated(self, spec: MethodSpec, version: str) -> Rejection | None:
        """-32601 for a method gated on a capability this server did not advertise."""
        if (
            spec.capability is None
            or self._our_capabilities is None
            or (
                spec.capability_since is not None
                and not is_at_least(version, spec.capability_since)
            )
            or has_capability(self._our_capabilities, spec.capability)
        ):
            return None
        return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {spec.name}")

    def _unknown_method(self, method: str, raw_params: Raw | UnsetType) -> Rejection:
        # A 2026-07-28 request owes us a valid envelope before we say "no such method":
        # -32602 and -32022 come first (the order the spec's conformance tests expect).
        if self.our_role is Role.SERVER and self._phase in (Phase.IDLE, Phase.MODERN):
            meta = probe_meta(raw_params)
            if self._phase is Phase.MODERN or (
                meta is not None and PROTOCOL_VERSION_META_KEY in meta
            ):
                envelope = read_modern_envelope(meta, self._modern_versions)
                if isinstance(envelope, Rejection):
                    return envelope
        return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")

    def _receive_notification(
        self, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self.methods.get(method)
        if spec is None or spec.is_request or not spec.direction & self._receiving:
            events.append(self._ignored(method, f"Unknown notification: {method}"))
            return
        params = _decode_params(spec, raw_params)
        if params is None:
            events.append(self._ignored(method, f"Invalid params for {method}"))
            return
        if method == "notifications/cancelled":
            self._receive_cancel(params, events)
        elif method == "notifications/progress":
            self._receive_progress(params, events)
        elif method == "notifications/initialized":
            # A repeated or early initialized notification changes nothing.
            if self._phase is Phase.INITIALIZED:
                self._advance(Step.INITIALIZED_NOTIFICATION)
                events.append(NotificationReceived(method=method, params=params))
            else:
                events.append(self._ignored(method, "Unexpected initialized notification"))
        elif self._phase is Phase.MODERN and self.our_role is Role.CLIENT:
            self._receive_listen_notification(method, params, events)
        elif self.era is Era.LEGACY and self._version not in spec.versions:
            events.append(self._ignored(method, f"{method} does not exist in {self._version}"))
        else:
            events.append(NotificationReceived(method=method, params=params))

    def _receive_cancel(self, params: CancelledNotificationParams, events: list[Event]) -> None:
        request_id = params.request_id
        reason = None if params.reason is UNSET else params.reason
        if request_id is UNSET:
            # Only task-augmented requests (2025-11-25) omit it, and those are cancelled
            # with tasks/cancel: nothing to do here.
            return
        incoming = self._incoming.get(request_id)
        if incoming is not None:
            # "The client MUST NOT attempt to cancel its initialize request"; an invalid
            # cancellation SHOULD be ignored (2025-11-25 basic/utilities/cancellation).
            if incoming.spec.name != "initialize" and not incoming.cancelled:
                incoming.cancelled = True
                events.append(CancelRequested(request_id=request_id, reason=reason))
            return
        outgoing = self._outgoing.get(request_id)
        if outgoing is not None and outgoing.spec.name == _LISTEN and self.our_role is Role.CLIENT:
            # 2026-07-28: the one thing a server may cancel is a listen stream.
            self._forget_outgoing(request_id, outgoing)
            events.append(SubscriptionEnded(subscription_id=request_id, reason=reason))
        # Anything else refers to a request already answered: a harmless race.

    def _receive_progress(self, params: ProgressNotificationParams, events: list[Event]) -> None:
        if self._phase is Phase.MODERN and self.our_role is Role.SERVER:
            # "Progress is server → client only" in 2026-07-28.
            events.append(self._ignored("notifications/progress", "Clients do not send progress"))
            return
        request_id = self._outgoing_progress.get(params.progress_token)
        if request_id is None:
            return  # progress for a request that already completed: a harmless race
        outgoing = self._outgoing[request_id]
        if outgoing.last_progress is not None and params.progress <= outgoing.last_progress:
            # "The progress value MUST increase with each notification" (2024-11-05).
            events.append(
                self._ignored("notifications/progress", "Progress must increase; dropped")
            )
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

    def _receive_listen_notification(self, method: str, params: Any, events: list[Event]) -> None:
        meta = meta_of(params) or {}
        subscription_id = meta.get(SUBSCRIPTION_ID_META_KEY)
        if subscription_id is None:
            # Not on a listen stream (progress and logs have their own events).
            events.append(NotificationReceived(method=method, params=params))
            return
        outgoing = self._outgoing.get(subscription_id)
        if outgoing is None or outgoing.spec.name != _LISTEN:
            events.append(self._ignored(method, "Notification for an unknown subscription"))
            return
        if method == _ACKNOWLEDGED:
            if outgoing.acknowledged:
                events.append(self._ignored(method, "Subscription acknowledged twice"))
                return
            outgoing.acknowledged = True
            outgoing.honoured_filter = params.notifications
        elif not outgoing.acknowledged:
            # "No notification may precede" the acknowledgement (2026-07-28).
            events.append(self._ignored(method, "Notification before the acknowledgement"))
            return
        elif not _filter_allows(outgoing.honoured_filter, method):
            events.append(self._ignored(method, "Notification the subscription did not ask for"))
            return
        events.append(
            NotificationReceived(method=method, params=params, subscription_id=subscription_id)
        )

    def _receive_result(self, request_id: RequestId, raw_result: Raw, events: list[Event]) -> None:
        outgoing = self._outgoing.get(request_id)
        if outgoing is None:
            if request_id not in self._closed_outgoing:
                events.append(
                    self._invalid(
                        jsonrpc.INVALID_REQUEST,
                        "Response to an unknown request",
                        request_id=request_id,
                        reply=False,
                    )
                )
            return  # else: a late answer to a request we gave up on; dropped quietly
        self._forget_outgoing(request_id, outgoing, closed=False)
        spec = outgoing.spec
        result = self._decode_result(spec, raw_result)
        if isinstance(result, str):
            if spec.name == "initialize":
                self._initialize_failed()
            events.append(
                self._invalid(
                    jsonrpc.INVALID_REQUEST,
                    result,
                    request_id=request_id,
                    method=spec.name,
                    reply=False,
                )
            )
            return
        if spec.name == "initialize":
            self._accept_initialize_result(result)
        elif spec.name == "server/discover":
            self._their_capabilities = result.capabilities
        events.append(ResponseReceived(request_id=request_id, method=spec.name, result=result))

    def _decode_result(self, spec: MethodSpec, raw_result: Raw) -> Any:
        """The typed result, or a string saying why it is unusable."""
        assert spec.result_decoder is not None
        modern = self._phase is Phase.MODERN
        try:
            result = spec.result_decoder.decode(raw_result)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            if not (modern and spec.input_required):
                return f"Invalid result for {spec.name}: {exc}"
            # An InputRequiredResult lacks the fields the complete result requires.
            result = _decode_input_required(raw_result)
            return result if result is not None else f"Invalid result for {spec.name}: {exc}"
        if not modern:
            return result
        # "Clients MUST treat a missing resultType as complete" and "MUST treat an
        # unrecognized resultType as invalid" (2026-07-28 basic).
        result_type = getattr(result, "result_type", UNSET)
        if result_type is UNSET or result_type == "complete":
            return result
        if result_type == "input_required" and spec.input_required:
            input_required = _decode_input_required(raw_result)
            if input_required is not None:
                return input_required
        return f"Unrecognized resultType {result_type!r} for {spec.name}"

    def _accept_initialize_result(self, result: InitializeResult) -> None:
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
        self._advance(Step.INITIALIZE_RESULT)

    def _receive_error(
        self, request_id: RequestId | None, raw_error: Raw, events: list[Event]
    ) -> None:
        wire = jsonrpc.decode_error(raw_error)
        if wire is None:
            events.append(
                self._invalid(jsonrpc.INVALID_REQUEST, "Malformed error response", reply=False)
            )
            return
        data: Any = UNSET
        if wire.data is not UNSET:
            data = _ANY_DECODER.decode(wire.data)
        error = Error(code=wire.code, message=wire.message, data=data)
        if request_id is None:
            events.append(ErrorReceived(request_id=None, method=None, error=error))
            return
        outgoing = self._outgoing.get(request_id)
        if outgoing is None:
            if request_id not in self._closed_outgoing:
                events.append(
                    self._invalid(
                        jsonrpc.INVALID_REQUEST,
                        "Error response to an unknown request",
                        request_id=request_id,
                        reply=False,
                    )
                )
            return
        self._forget_outgoing(request_id, outgoing, closed=False)
        if outgoing.spec.name == "initialize":
            self._initialize_failed()
        events.append(ErrorReceived(request_id=request_id, method=outgoing.spec.name, error=error))

    # ----------------------------------------------------------------- sending

    def start_modern(self, version: str | None = None) -> None:
        """Client: speak 2026-07-28 (or ``version``) from now on, without a handshake.

        Every request is then stamped with the version, our capabilities and our
        ``clientInfo``. Call it again to switch to another modern version (after a
        -32022 that named one we share). A dual-era client probes with
        ``server/discover`` right after, and calls `abandon_modern` if the probe fails.
        """
        self._require_role(Role.CLIENT, "start_modern")
        if version is None:
            if not self._modern_versions:
                raise LocalProtocolError("this connection supports no 2026-07-28 version")
            version = self._modern_versions[-1]
        if version not in self._modern_versions:
            raise LocalProtocolError(f"{version!r} is not a supported modern version")
        if self._phase is not Phase.MODERN:
            self._advance_local(Step.MODERN_REQUEST)
        self._version = version

    def abandon_modern(self) -> None:
        """Client: the server is not modern after all; return to choose the era again.

        "Any other error or a timeout → legacy; fall back to initialize" (2026-07-28
        basic/versioning). Only possible with no request in flight.
        """
        self._require_role(Role.CLIENT, "abandon_modern")
        if self._outgoing:
            raise LocalProtocolError("requests are still in flight")
        self._advance_local(Step.ABANDON_MODERN)
        self._version = None
        self._their_capabilities = None

    def send_request(
        self, method: str, params: Any = None, *, request_id: RequestId | None = None
    ) -> tuple[RequestId, bytes]:
        """Start a request. Returns its id and the bytes to write.

        ``params`` defaults to the method's empty params. A progress token in
        ``params._meta`` is tracked (it must be unique among our requests in flight).
        ``request_id`` defaults to the next integer; an explicit one must not be in use.
        """
        spec = self._spec_to_send(method, request=True)
        phase = self._phase
        if not _state.may_send_request(self.our_role, phase, method):
            raise LocalProtocolError(f"can't send {method} in the {phase.value} phase")
        params = self._default_params(spec, params)
        if method == "initialize":
            if not isinstance(params, InitializeRequestParams):
                raise LocalProtocolError("initialize takes InitializeRequestParams")
            if params.protocol_version not in self.supported_versions:
                raise LocalProtocolError(
                    f"initialize must offer a supported version, not {params.protocol_version!r}"
                )
            self._our_capabilities = params.capabilities
        elif phase is Phase.MODERN:
            assert self._version is not None
            self._check_exists(spec, self._version)
            self._check_their_capability(spec, self._version)
            our_caps = self._our_capabilities
            if not isinstance(our_caps, ClientCapabilities):
                our_caps = ClientCapabilities()
            params = stamp_request_meta(params, self._version, our_caps, self.implementation)
        elif phase in _LEGACY_PHASES:
            assert self._version is not None
            self._check_exists(spec, self._version)
            self._check_their_capability(spec, self._version)
            their = self._their_capabilities
            if self.our_role is Role.SERVER and isinstance(their, ClientCapabilities):
                missing = required_client_capabilities(method, params, their)
                if missing is not None:
                    raise LocalProtocolError(
                        f"the client did not declare the capability {method} needs"
                    )
        token = _progress_token_of(params)
        if token is False:
            raise LocalProtocolError("_meta.progressToken must be a string or an integer")
        if token is not None and token in self._outgoing_progress:
            # "The progress token MUST be unique across all active requests" (2024-11-05).
            raise LocalProtocolError(f"progress token {token!r} is already in use")
        request_id = self._allocate_id(request_id)
        if len(self._outgoing) >= MAX_REQUESTS_IN_FLIGHT:
            raise LocalProtocolError(
                f"too many requests in flight (limit {MAX_REQUESTS_IN_FLIGHT})"
            )
        data = jsonrpc.encode_request(request_id, method, params)
        if method == "initialize":
            self._advance_local(Step.INITIALIZE_REQUEST)
            # Until the server answers, we speak the version we offered.
            self._version = params.protocol_version
        self._outgoing[request_id] = OutgoingRequest(spec, token)
        if token is not None:
            self._outgoing_progress[token] = request_id
        return request_id, data

    def send_notification(self, method: str, params: Any = None) -> bytes:
        """Send a notification that needs no tracking (list_changed, roots changes...).

        Cancellation, progress, log messages and subscription acknowledgements have
        actions of their own, because the core must track them.
        """
        if method in _DEDICATED_ACTIONS:
            raise LocalProtocolError(f"send {method} with {_DEDICATED_ACTIONS[method]}")
        spec = self._spec_to_send(method, request=False)
        phase = self._phase
        if not _state.may_send_notification(self.our_role, phase, method):
            hint = ""
            if phase is Phase.MODERN and self.our_role is Role.SERVER:
                hint = "; 2026-07-28 delivers it with send_subscription_notification()"
            raise LocalProtocolError(f"can't send {method} in the {phase.value} phase{hint}")
        if self._version is not None:
            self._check_exists(spec, self._version)
        if (
            spec.capability is not None
            and self._our_capabilities is not None
            and not (has_capability(self._our_capabilities, spec.capability))
        ):
            raise LocalProtocolError(f"{method} needs the {spec.capability} capability")
        params = self._default_params(spec, params)
        data = jsonrpc.encode_notification(method, params)
        if method == "notifications/initialized":
            self._advance_local(Step.INITIALIZED_NOTIFICATION)
        return data

    def send_result(self, request_id: RequestId, result: Any) -> bytes | None:
        """Answer the peer's request. None if the peer cancelled it: nothing is sent."""
        incoming = self._take_incoming(request_id)
        if incoming is None:
            return None
        spec = incoming.spec
        expected = spec.result_type
        if (
            isinstance(result, msgspec.Struct)
            and isinstance(expected, type)
            and not isinstance(result, (expected, InputRequiredResult))
        ):
            self._incoming[request_id] = incoming
            raise LocalProtocolError(
                f"{spec.name} answers with {expected.__name__}, not {type(result).__name__}"
            )
        if isinstance(result, InputRequiredResult):
            problem = self._input_required_problem(spec, incoming, result)
            if problem is not None:
                self._incoming[request_id] = incoming  # nothing happened
                raise LocalProtocolError(problem)
        if spec.name == "initialize":
            if not isinstance(result, InitializeResult) or result.protocol_version != self._version:
                self._incoming[request_id] = incoming
                raise LocalProtocolError(
                    f"the initialize result must carry the negotiated version {self._version!r}"
                )
            self._advance(Step.INITIALIZE_RESULT)
            if self._our_capabilities is None:
                self._our_capabilities = result.capabilities
        if spec.name == _LISTEN:
            self._subscriptions -= 1
            result = _with_subscription_id(result, request_id)
        if (
            incoming.protocol_version is not None
            and era_of(incoming.protocol_version) is Era.MODERN
        ):
            result = shape_modern_result(spec, result, self.implementation)
        return jsonrpc.encode_result_response(request_id, result)

    def send_error(
        self, request_id: RequestId, code: int, message: str, data: Any = UNSET
    ) -> bytes | None:
        """Answer the peer's request with an error. None if the peer cancelled it."""
        incoming = self._take_incoming(request_id)
        if incoming is None:
            return None
        if incoming.spec.name == "initialize":
            self._initialize_failed()
        elif incoming.spec.name == _LISTEN:
            self._subscriptions -= 1
        return jsonrpc.encode_error_response(request_id, code, message, data)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Give up on one of our requests. Returns the ``notifications/cancelled`` to send.

        Whatever answer still arrives is dropped quietly. Returns None when the request
        was already answered (a race the spec expects). On 2026-07-28 Streamable HTTP
        the cancellation is closing the response stream, so the driver may drop the
        bytes; the state change is the same.
        """
        outgoing = self._outgoing.get(request_id)
        if outgoing is None:
            if request_id in self._closed_outgoing:
                return None
            raise LocalProtocolError(f"no request {request_id!r} is in flight")
        if outgoing.spec.name == "initialize":
            # "The client MUST NOT attempt to cancel its initialize request" (2024-11-05).
            raise LocalProtocolError("initialize can't be cancelled")
        self._forget_outgoing(request_id, outgoing)
        params = CancelledNotificationParams(
            request_id=request_id, reason=UNSET if reason is None else reason
        )
        return jsonrpc.encode_notification("notifications/cancelled", params)

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
        incoming = self._require_incoming(request_id)
        if incoming.spec.name == _LISTEN:
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
        (``request_id`` is required) and is sent only if that request's
        ``_meta`` log level admits it ("if absent, the server MUST NOT send
        notifications/message for that request").
        """
        self._require_role(Role.SERVER, "send_log_message")
        if level not in _LOG_RANK:
            raise LocalProtocolError(f"unknown log level {level!r}")
        if self._phase is Phase.MODERN:
            if request_id is None:
                raise LocalProtocolError("a 2026-07-28 log message must name its request")
            incoming = self._require_incoming(request_id)
            if incoming.spec.name == _LISTEN:
                raise LocalProtocolError("log messages are never sent on a listen stream")
            threshold = None if incoming.cancelled else incoming.log_level
        else:
            if self._phase not in _LEGACY_PHASES:
                raise LocalProtocolError(f"can't log in the {self._phase.value} phase")
            if self._our_capabilities is not None and not has_capability(
                self._our_capabilities, "logging"
            ):
                raise LocalProtocolError("log messages need the logging capability")
            threshold = self._log_level
            if request_id is not None:
                related = self._incoming.get(request_id)
                if related is not None and related.cancelled:
                    threshold = None
        if threshold is None or _LOG_RANK[level] < _LOG_RANK[threshold]:
            return None
        params = LoggingMessageNotificationParams(
            level=level, data=data, logger=UNSET if logger is None else logger
        )
        return jsonrpc.encode_notification("notifications/message", params)

    # -------------------------------------------------- subscriptions/listen

    def acknowledge_subscription(
        self, request_id: RequestId, notifications: SubscriptionFilter
    ) -> bytes | None:
        """Server: accept a ``subscriptions/listen`` stream with the filter we honour.

        It must be the first message of the stream, and a subset of what the client
        asked for ("unsupported types omitted", 2026-07-28 basic/patterns/subscriptions).
        None if the client already cancelled the stream.
        """
        incoming = self._require_listen(request_id)
        if incoming.honoured_filter is not None:
            raise LocalProtocolError("this subscription was already acknowledged")
        requested = incoming.requested_filter
        assert requested is not None
        if not _is_subset(notifications, requested):
            raise LocalProtocolError("the acknowledged filter must be a subset of the request's")
        incoming.honoured_filter = notifications
        if incoming.cancelled:
            return None
        params = SubscriptionsAcknowledgedNotificationParams(
            notifications=notifications, meta={SUBSCRIPTION_ID_META_KEY: request_id}
        )
        return jsonrpc.encode_notification(_ACKNOWLEDGED, params)

    def send_subscription_notification(
        self, request_id: RequestId, method: str, params: Any = None
    ) -> bytes | None:
        """Server: deliver a notification on a ``subscriptions/listen`` stream.

        The stream must be acknowledged, and the notification one its filter asked for.
        The ``subscriptionId`` is stamped on it. None if the client cancelled the stream.
        """
        incoming = self._require_listen(request_id)
        if incoming.honoured_filter is None:
            raise LocalProtocolError("acknowledge the subscription first")
        if method in _NEVER_ON_LISTEN:
            raise LocalProtocolError(f"{method} is never delivered on a listen stream")
        spec = self._spec_to_send(method, request=False)
        tracked = method in _LISTEN_FLAGS or method == _RESOURCE_UPDATED
        if tracked and not _filter_allows(incoming.honoured_filter, method):
            raise LocalProtocolError(f"the subscription did not ask for {method}")
        if incoming.cancelled:
            return None
        params = self._default_params(spec, params)
        meta = {**(meta_of(params) or {}), SUBSCRIPTION_ID_META_KEY: request_id}
        params = (
            {**params, "_meta": meta}
            if isinstance(params, dict)
            else msgspec.structs.replace(params, meta=meta)
        )
        return jsonrpc.encode_notification(method, params)

    def close_subscription(self, request_id: RequestId) -> bytes | None:
        """Server: end a listen stream gracefully, with its result (2026-07-28 SHOULD)."""
        self._require_listen(request_id)
        return self.send_result(request_id, SubscriptionsListenResult(meta={}))

    def cancel_subscription(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Server: tear a listen stream down with ``notifications/cancelled`` (stdio).

        The schema says a server ending a stdio subscription MUST send this; the
        subscriptions page says it SHOULD send the result (`close_subscription`). A
        client must handle both (CHECKLIST gotcha G6). None if the client cancelled first.
        """
        incoming = self._require_listen(request_id)
        del self._incoming[request_id]
        self._subscriptions -= 1
        if incoming.cancelled:
            return None
        params = CancelledNotificationParams(
            request_id=request_id, reason=UNSET if reason is None else reason
        )
        return jsonrpc.encode_notification("notifications/cancelled", params)

    # ----------------------------------------------------------------- helpers

    def _advance(self, step: Step) -> None:
        phase = _state.next_phase(self._phase, step)
        assert phase is not None, (self._phase, step)  # callers checked
        self._phase = phase

    def _initialize_failed(self) -> None:
        # "A failed initialize leaves the era open": the client may retry or probe.
        self._advance(Step.INITIALIZE_ERROR)
        self._version = None

    def _advance_local(self, step: Step) -> None:
        phase = _state.next_phase(self._phase, step)
        if phase is None:
            raise LocalProtocolError(f"can't {step.value} in the {self._phase.value} phase")
        self._phase = phase

    def _require_role(self, role: Role, action: str) -> None:
        if self.our_role is not role:
            raise LocalProtocolError(f"{action}() is for the {role.value} side")

    def _spec_to_send(self, method: str, *, request: bool) -> MethodSpec:
        if self._phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")
        spec = self.methods.get(method)
        if spec is None:
            raise LocalProtocolError(f"unknown method {method!r}; register it in the method table")
        if spec.is_request is not request:
            kind = "a request" if spec.is_request else "a notification"
            raise LocalProtocolError(f"{method} is {kind}")
        if not spec.direction & self._sending:
            raise LocalProtocolError(f"a {self.our_role.value} can't send {method}")
        return spec

    def _check_exists(self, spec: MethodSpec, version: str) -> None:
        if version not in spec.versions:
            raise LocalProtocolError(f"{spec.name} does not exist in {version}")

    def _check_their_capability(self, spec: MethodSpec, version: str) -> None:
        if (
            self.our_role is Role.CLIENT
            and spec.capability is not None
            and self._their_capabilities is not None
            and (spec.capability_since is None or is_at_least(version, spec.capability_since))
            and not has_capability(self._their_capabilities, spec.capability)
        ):
            raise LocalProtocolError(
                f"the server did not advertise the {spec.capability} capability {spec.name} needs"
            )

    def _default_params(self, spec: MethodSpec, params: Any) -> Any:
        if params is not None:
            return params
        try:
            return spec.params_type()
        except TypeError:
            raise LocalProtocolError(f"{spec.name} needs params") from None

    def _allocate_id(self, request_id: RequestId | None) -> RequestId:
        if request_id is None:
            while self._next_id in self._outgoing:
                self._next_id += 1
            request_id = self._next_id
            self._next_id += 1
            return request_id
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            raise LocalProtocolError("a request id must be a string or an integer")
        if request_id in self._outgoing:
            # "MUST NOT match the id of any other request the sender has issued and not
            # yet received a response for" (2026-07-28 basic).
            raise LocalProtocolError(f"request id {request_id!r} is already in flight")
        return request_id

    def _take_incoming(self, request_id: RequestId) -> IncomingRequest | None:
        """Remove and return a request we are answering; None if the peer cancelled it."""
        incoming = self._require_incoming(request_id)
        del self._incoming[request_id]
        if incoming.cancelled:
            if incoming.spec.name == _LISTEN:
                self._subscriptions -= 1
            return None
        return incoming

    def _require_incoming(self, request_id: RequestId) -> IncomingRequest:
        incoming = self._incoming.get(request_id)
        if incoming is None:
            raise LocalProtocolError(f"no request {request_id!r} from the peer is open")
        return incoming

    def _require_listen(self, request_id: RequestId) -> IncomingRequest:
        incoming = self._require_incoming(request_id)
        if incoming.spec.name != _LISTEN:
            raise LocalProtocolError(f"request {request_id!r} is not a subscriptions/listen")
        return incoming

    def _forget_outgoing(
        self, request_id: RequestId, outgoing: OutgoingRequest, *, closed: bool = True
    ) -> None:
        del self._outgoing[request_id]
        if outgoing.progress_token is not None:
            self._outgoing_progress.pop(outgoing.progress_token, None)
        if closed:
            self._closed_outgoing.add(request_id)

    def _input_required_problem(
        self, spec: MethodSpec, incoming: IncomingRequest, result: InputRequiredResult
    ) -> str | None:
        version = incoming.protocol_version
        if version is None or era_of(version) is not Era.MODERN:
            return "InputRequiredResult exists only in 2026-07-28; use a server-to-client request"
        if not spec.input_required:
            # "ONLY for tools/call, resources/read and prompts/get" (2026-07-28 mrtr).
            return f"{spec.name} can't answer with InputRequiredResult"
        return check_input_required(result, incoming.client_capabilities)

    def _invalid(
        self,
        code: int,
        message: str,
        *,
        request_id: RequestId | None = None,
        method: str | None = None,
        reply: bool = True,
    ) -> InvalidMessage:
        return InvalidMessage(
            code=code,
            message=message,
            reply=jsonrpc.encode_error_response(request_id, code, message) if reply else None,
            request_id=request_id,
            method=method,
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

    def _ignored(self, method: str, message: str) -> InvalidMessage:
        # JSON-RPC never answers a notification, even a broken one.
        return InvalidMessage(code=jsonrpc.INVALID_REQUEST, message=message, method=method)


def _decode_params(spec: MethodSpec, raw_params: Raw | UnsetType) -> Any:
    """Params decoded into the method's type, or None if they are not valid."""
    if raw_params is UNSET:
        try:
            return spec.params_type()
        except TypeError:
            return None  # the method has required params
    try:
        return spec.decode_params(raw_params)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _decode_input_required(raw_result: Raw) -> InputRequiredResult | None:
    try:
        result = _INPUT_REQUIRED_DECODER.decode(raw_result)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return result if result.result_type == "input_required" else None


def _progress_token_of(params: Any) -> ProgressToken | bool | None:
    """The progress token in ``params._meta``; None if absent, False if malformed."""
    meta = meta_of(params)
    if meta is None:
        return None
    token = meta.get(PROGRESS_TOKEN_META_KEY)
    if token is None:
        return None
    if isinstance(token, bool) or not isinstance(token, (int, str)):
        return False
    return token


def _filter_allows(honoured: SubscriptionFilter | None, method: str) -> bool:
    if honoured is None:
        return False
    if method == _RESOURCE_UPDATED:
        return bool(honoured.resource_subscriptions)
    flag = _LISTEN_FLAGS.get(method)
    return flag is None or getattr(honoured, flag) is True


def _is_subset(honoured: SubscriptionFilter, requested: SubscriptionFilter) -> bool:
    for flag in _LISTEN_FLAGS.values():
        if getattr(honoured, flag) is True and getattr(requested, flag) is not True:
            return False
    wanted = set(requested.resource_subscriptions or ())
    return set(honoured.resource_subscriptions or ()) <= wanted


def _with_subscription_id(result: Any, request_id: RequestId) -> Any:
    """A listen result always names its stream (2026-07-28 SubscriptionsListenResult)."""
    if not isinstance(result, SubscriptionsListenResult):
        return result
    meta = {**(result.meta or {}), SUBSCRIPTION_ID_META_KEY: request_id}
    return msgspec.structs.replace(result, meta=meta)
