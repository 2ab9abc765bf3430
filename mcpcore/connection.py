"""`Connection`: the sans-IO MCP protocol state machine, for one peer.

Modelled on h11: ``Connection(our_role)``. Bytes the peer sent go into `receive`, which
returns events; each protocol action (`send_request`, `send_result`, `cancel`, ...)
checks and updates the state first and returns the bytes to write, or None where the
protocol says to send nothing. There is no IO, clock or randomness here: a driver moves
the bytes, owns the time, and runs the user's code.

`receive` takes exactly one JSON-RPC message (or one 2025-03-26 batch); framing
(newlines, SSE, WebSocket frames) is the driver's job, with `mcpcore.framing`. Every
action returns one compact JSON message without a trailing newline.

The rules live next door: the lifecycle table in `_state`, the era and version rules
in `_admission`, request bookkeeping in `_inflight`, the 2026-07-28 envelope in
`_envelope`, result shapes in `_results`, listen streams in `_listen`.

Misuse on our side raises `LocalProtocolError` before anything changes. What the peer
gets wrong becomes an `InvalidMessage` (carrying the reply to write) or an
`InvalidResponse`; only a peer that makes the conversation impossible (a server that
picks a version we do not speak) raises `RemoteProtocolError`.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpcore import _listen, _state, jsonrpc
from mcpcore._admission import refuse_to_send
from mcpcore._capabilities import has_capability, required_client_capabilities
from mcpcore._envelope import (
    meta_of,
    progress_token_in,
    request_envelope,
    stamp_request_meta,
)
from mcpcore._inflight import (
    MAX_RECENTLY_CLOSED_IDS,
    MAX_REQUESTS_IN_FLIGHT,
    MAX_SUBSCRIPTIONS,
    IncomingRequest,
)
from mcpcore._receiving import Receiving
from mcpcore._results import result_problem, shape_modern_result
from mcpcore._state import LEGACY_PHASES, Phase, Role, Step
from mcpcore.errors import LocalProtocolError
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    PROTOCOL_VERSION_META_KEY,
    CancelledNotificationParams,
    ClientCapabilities,
    InitializeRequestParams,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    RequestId,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
)
from mcpcore.versions import Era, era_of

__all__ = ["MAX_RECENTLY_CLOSED_IDS", "MAX_REQUESTS_IN_FLIGHT", "MAX_SUBSCRIPTIONS", "Connection"]

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


class Connection(Receiving):
    """The protocol state of one MCP conversation, seen from ``our_role``.

    The state and its read-only properties come from `ConversationState`, `receive`
    from `Receiving`; the actions our side takes are defined here.

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

    def start_modern(self, version: str | None = None) -> None:
        """Client: speak 2026-07-28 (or ``version``) from now on, without a handshake.

        Every request is then stamped with the version, our capabilities and our
        ``clientInfo``. Call it again to switch to another modern version (after a
        -32022 that named one we share). A dual-era client probes with
        ``server/discover`` right after, and calls `abandon_modern` if the probe fails.
        """
        self._require_role(Role.CLIENT, "start_modern")
        if version is None and self.supported_modern_versions:
            version = self.supported_modern_versions[-1]
        if version not in self.supported_modern_versions:
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
        if self._requests.outgoing:
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
        state = (self._phase, self._version, self._their_capabilities)
        spec = self._cleared.get(method) if state == self._cleared_state else None
        if spec is not None:
            # A client sending a request it already sent in this very state: the checks
            # of `_checked_request` depend on nothing else, and passed then.
            if params is None:
                params = self._empty_params(spec)
            meta = meta_of(params)
            if state[0] is Phase.MODERN and state[1] is not None:
                params = stamp_request_meta(params, meta, self._request_envelope(state[1]))
        else:
            spec, params, meta = self._checked_request(method, params)
            if self.our_role is Role.CLIENT and method != "initialize":
                if state != self._cleared_state:
                    self._cleared, self._cleared_state = {}, state
                self._cleared[method] = spec
        # Read from the caller's keys: the envelope stamped on top carries no progress token.
        token = progress_token_in(meta)
        if token is False:
            raise LocalProtocolError("_meta.progressToken must be a string or an integer")
        request_id = self._requests.start(request_id, spec, token)
        data = jsonrpc.encode_request(request_id, method, params)
        if method == "initialize":
            self._advance_local(Step.INITIALIZE_REQUEST)
            self._capabilities = params.capabilities
            self._version = params.protocol_version  # until the server answers
        return request_id, data

    def _checked_request(
        self, method: str, params: Any
    ) -> tuple[MethodSpec, Any, dict[str, Any] | None]:
        """Check that we may send ``method`` now; its spec, its params (stamped), their _meta.

        What a client may send depends only on the phase, the version and the server's
        capabilities (`send_request` remembers the answer); what a server may send also
        on the params (the client capabilities a request to it needs).
        """
        spec = self._spec_to_send(method, request=True)
        phase = self._phase
        if not _state.may_send_request(self.our_role, phase, method):
            raise LocalProtocolError(f"can't send {method} in the {phase.value} phase")
        if params is None:
            params = self._empty_params(spec)
        meta = meta_of(params)  # the caller's own _meta keys, if any
        version = self._version
        if method == "initialize":
            if not isinstance(params, InitializeRequestParams):
                raise LocalProtocolError("initialize takes InitializeRequestParams")
            if params.protocol_version not in self.supported_versions:
                raise LocalProtocolError(
                    f"initialize must offer a supported version, not {params.protocol_version!r}"
                )
        elif version is not None:
            refusal = refuse_to_send(self, spec, params, version)
            if refusal is not None:
                raise LocalProtocolError(refusal)
            if phase is Phase.MODERN:
                params = stamp_request_meta(params, meta, self._request_envelope(version))
        return spec, params, meta

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
        if self._version is not None and self._version not in spec.versions:
            raise LocalProtocolError(f"{method} does not exist in {self._version}")
        capability = spec.capability
        if capability and self._capabilities and not has_capability(self._capabilities, capability):
            raise LocalProtocolError(f"{method} needs the {capability} capability")
        if params is None:
            params = self._empty_params(spec)
        data = jsonrpc.encode_notification(method, params)
        if method == "notifications/initialized":
            self._advance_local(Step.INITIALIZED_NOTIFICATION)
        return data

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
        if spec.name == _listen.LISTEN:
            result = _listen.stamp_subscription_id(result, request_id)
        version = incoming.protocol_version
        if version is not None and era_of(version) is Era.MODERN:
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
        if spec.name == "initialize":
            self._advance(Step.INITIALIZE_RESULT)
            if self._capabilities is None:
                self._capabilities = result.capabilities
        return data

    def send_error(
        self, request_id: RequestId, code: int, message: str, data: Any = UNSET
    ) -> bytes | None:
        """Answer the peer's request with an error. None if the peer cancelled it."""
        self._requests.open_incoming(request_id)
        incoming = self._requests.close_incoming(request_id)
        if incoming.cancelled:
            return None
        if incoming.spec.name == "initialize":
            self._initialize_failed()
        return jsonrpc.encode_error_response(request_id, code, message, data)

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
        if outgoing.spec.name == "initialize":
            # "The client MUST NOT attempt to cancel its initialize request" (2024-11-05).
            raise LocalProtocolError("initialize can't be cancelled")
        self._requests.finish(request_id, gave_up=True)
        return _cancelled(request_id, reason)

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
        if incoming.spec.name == _listen.LISTEN:
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
        self._require_role(Role.SERVER, "send_log_message")
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
        if self._phase is Phase.MODERN:
            if request_id is None:
                raise LocalProtocolError("a 2026-07-28 log message must name its request")
            incoming = self._requests.open_incoming(request_id)
            if incoming.spec.name == _listen.LISTEN:
                raise LocalProtocolError("log messages are never sent on a listen stream")
            return None if incoming.cancelled else incoming.log_level
        if self._phase not in LEGACY_PHASES:
            raise LocalProtocolError(f"can't log in the {self._phase.value} phase")
        if self._capabilities is not None and not has_capability(self._capabilities, "logging"):
            raise LocalProtocolError("log messages need the logging capability")
        related = None if request_id is None else self._requests.incoming.get(request_id)
        return None if related is not None and related.cancelled else self._log_level

    # -------------------------------------------------- subscriptions/listen

    def acknowledge_subscription(
        self, request_id: RequestId, notifications: SubscriptionFilter
    ) -> bytes | None:
        """Server: accept a ``subscriptions/listen`` stream with the filter we honour.

        It must be the first message of the stream, and a subset of what the client
        asked for ("unsupported types omitted", 2026-07-28 basic/patterns/subscriptions).
        None if the client already cancelled the stream.
        """
        incoming = self._open_listen(request_id)
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
        incoming = self._open_listen(request_id)
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
        self._open_listen(request_id)
        return self.send_result(request_id, _listen.closing_result())

    def cancel_subscription(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Server: tear a listen stream down with ``notifications/cancelled`` (stdio).

        The schema says a server ending a stdio subscription MUST send this; the
        subscriptions page says it SHOULD send the result (`close_subscription`). A
        client must handle both (CHECKLIST gotcha G6). None if the client cancelled first.
        """
        self._open_listen(request_id)
        incoming = self._requests.close_incoming(request_id)
        return None if incoming.cancelled else _cancelled(request_id, reason)

    # ----------------------------------------------------------------- helpers

    def _advance_local(self, step: Step) -> None:
        """Apply a step our side asked for; illegal is our mistake."""
        phase = _state.next_phase(self._phase, step)
        if phase is None:
            raise LocalProtocolError(f"can't {step.value} in the {self._phase.value} phase")
        self._phase = phase

    def _require_role(self, role: Role, action: str) -> None:
        if self.our_role is not role:
            raise LocalProtocolError(f"{action}() is for the {role.value} side")

    def _request_envelope(self, version: str) -> dict[str, Any]:
        envelope = self._envelope
        if envelope is None or envelope[PROTOCOL_VERSION_META_KEY] != version:
            capabilities = self._capabilities
            if not isinstance(capabilities, ClientCapabilities):
                capabilities = ClientCapabilities()
            envelope = self._envelope = request_envelope(version, capabilities, self.implementation)
        return envelope

    def _spec_to_send(self, method: str, *, request: bool) -> MethodSpec:
        if self._phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")
        sendable = self._sendable_requests if request else self._sendable_notifications
        spec = sendable.get(method)
        if spec is None:
            raise self._unsendable(method, request=request)
        return spec

    def _unsendable(self, method: str, *, request: bool) -> LocalProtocolError:
        """Why ``method`` is not one of the requests (or notifications) we may send."""
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

    def _open_listen(self, request_id: RequestId) -> IncomingRequest:
        incoming = self._requests.open_incoming(request_id)
        if incoming.spec.name != _listen.LISTEN:
            raise LocalProtocolError(f"request {request_id!r} is not a subscriptions/listen")
        return incoming


def _cancelled(request_id: RequestId, reason: str | None) -> bytes:
    """A ``notifications/cancelled`` for ``request_id``."""
    params = CancelledNotificationParams(
        request_id=request_id, reason=UNSET if reason is None else reason
    )
    return jsonrpc.encode_notification("notifications/cancelled", params)
