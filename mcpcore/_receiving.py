"""Reading the peer: one message in, the events it makes and the state it changes.

Every check a peer's message goes through, in order: how deeply it nests
(`jsonrpc.nests_too_deeply`, before anything decodes it), the envelope (`jsonrpc`),
the method table, the params, the era rules (`_admission`), the request table. Input
that can be answered becomes an `InvalidMessage` carrying the reply; an unusable answer
to one of our requests becomes an `InvalidResponse`; nothing else escapes.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import _listen, jsonrpc
from mcpcore._admission import (
    Admission,
    admit_on_client,
    admit_on_server,
    reject_unknown_method,
)
from mcpcore._conversation import ConversationState
from mcpcore._envelope import Rejection, meta_of, progress_token_in
from mcpcore._inflight import IncomingRequest
from mcpcore._results import decode_result
from mcpcore._state import Phase, Role, Step
from mcpcore.errors import RemoteProtocolError
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
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    CancelledNotificationParams,
    Error,
    InitializeResult,
    ProgressNotificationParams,
    RequestId,
)
from mcpcore.versions import BATCH_VERSIONS, Era, era_of

__all__ = ["Receiving"]

# How messages begin when written in the usual key order: results (and requests, which
# carry an id too), and notifications.
_RESULT_OR_REQUEST: Final = b'{"jsonrpc":"2.0","id":'
_NOTIFICATION: Final = b'{"jsonrpc":"2.0","method":'

# A message no longer than this can't nest too deeply: one comparison on the hot path.
_SHALLOW_SIZE: Final = jsonrpc.SHALLOW_SIZE
_BATCH_DECODER: Final = msgspec.json.Decoder(list[Raw])
_ANY_DECODER: Final = msgspec.json.Decoder()


class Receiving(ConversationState):
    """The half of `Connection` that reads the peer."""

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
        if len(data) > _SHALLOW_SIZE and jsonrpc.nests_too_deeply(data):
            self._receive_too_deep(data, events)
        elif data[:1] == b"[" or (data[:1].isspace() and data.lstrip()[:1] == b"["):
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
            reason = f"Malformed response: {too_deep.message}"
            self._complete(request_id, outgoing.spec, reason, events)
        elif not self._requests.gave_up_on(request_id):
            reason = f"Response to an unknown request {request_id!r}, nested too deeply"
            events.append(self._ignored(None, reason))

    def _receive_message(self, data: bytes, events: list[Event]) -> None:
        if not data.isascii() and not jsonrpc.is_valid_utf8(data):
            events.append(self._invalid(jsonrpc.PARSE_ERROR, jsonrpc.INVALID_UTF8.message))
            return
        # The one-pass paths (mcpcore._onepass): a server mostly receives calls, a
        # client mostly results, so each tries its likely kind first, judging by the
        # first bytes where it can. Whatever they refuse goes down the general path.
        if not self._one_pass:
            pass
        elif self.our_role is Role.SERVER:
            if self._receive_call_in_one_pass(data, events):
                return
        elif data.startswith(_RESULT_OR_REQUEST):
            if self._receive_result_in_one_pass(data, events):
                return
            if data.find(b'"method"') >= 0 and self._receive_call_in_one_pass(data, events):
                return  # a legacy server's request
        elif (
            data.startswith(_NOTIFICATION) or data.find(b'"method"') >= 0
        ) and self._receive_call_in_one_pass(data, events):
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
            reason = (
                'Invalid Request: "jsonrpc" must be "2.0"'
                if message.jsonrpc != "2.0"
                else "Invalid Request: not a request, notification or response"
            )
            readable = request_id if isinstance(request_id, (int, str)) else None
            events.append(self._invalid(jsonrpc.INVALID_REQUEST, reason, request_id=readable))
        elif request_id is UNSET:
            self._receive_notification(method, message.params, events)
        elif request_id is None:
            events.append(
                self._invalid(jsonrpc.INVALID_REQUEST, "Invalid Request: id must not be null")
            )
        else:
            self._receive_request(request_id, method, message.params, events)

    def _receive_request(
        self, request_id: RequestId, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self.methods.get(method)
        if spec is None or not spec.is_request or method not in self._receivable:
            is_server = self.our_role is Role.SERVER
            rejection = reject_unknown_method(self, method, raw_params, is_server=is_server)
            events.append(self._reject(request_id, method, rejection))
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
        if self.our_role is Role.CLIENT:
            admission = admit_on_client(self, spec)
        else:
            admission = self._admit(spec, params, meta)
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
        refusal = self._requests.refusal(request_id, method == _listen.LISTEN)
        if refusal is not None:
            events.append(
                self._reject(request_id, method, Rejection(jsonrpc.INVALID_REQUEST, refusal))
            )
            return
        version, capabilities, log_level = admission
        record = IncomingRequest(spec, version, capabilities, token, log_level)
        if method == _listen.LISTEN:
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

    def _receive_notification(
        self, method: str, raw_params: Raw | UnsetType, events: list[Event]
    ) -> None:
        spec = self.methods.get(method)
        if spec is None or spec.is_request or method not in self._receivable:
            events.append(self._ignored(method, f"Unknown notification: {method}"))
            return
        params = spec.read_params(raw_params)
        if params is None:
            events.append(self._ignored(method, f"Invalid params for {method}"))
        else:
            self._accept_notification(spec, params, events)

    def _admit(
        self, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
    ) -> Admission | Rejection:
        """`admit_on_server`, remembered while the state and the envelope stay the same.

        Its answer depends on nothing but the method, the state (phase, version, both
        sides' capabilities) and the request's ``_meta``, except for ``initialize``. A
        client asks the same few methods over and over with the same ``_meta`` (none in
        the legacy era; the same 2026-07-28 envelope, read whole each time otherwise),
        so the answers are kept until either changes. (A shallow copy of ``_meta`` is
        kept: the request's own may be modified by its handler.)
        """
        state = (self._phase, self._version, self._their_capabilities, self._capabilities, meta)
        if state == self._admitted_state:
            remembered = self._admitted.get(spec)
            if remembered is not None:
                return remembered
        admission = admit_on_server(self, spec, params, meta)
        if spec.name != "initialize" and not isinstance(admission, Rejection):
            if state != self._admitted_state:
                if meta is not None:
                    state = (*state[:-1], dict(meta))
                self._admitted, self._admitted_state = {}, state
            self._admitted[spec] = admission
        return admission

    def _accept_notification(self, spec: MethodSpec, params: Any, events: list[Event]) -> None:
        """Act on a notification whose params decoded."""
        method = spec.name
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
            self._receive_stream_notification(method, params, events)
        elif self.era is Era.LEGACY and self._version not in spec.versions:
            events.append(self._ignored(method, f"{method} does not exist in {self._version}"))
        else:
            events.append(NotificationReceived(method=method, params=params))

    def _receive_cancel(self, params: CancelledNotificationParams, events: list[Event]) -> None:
        request_id = params.request_id
        if request_id is UNSET:
            # Only task-augmented requests (2025-11-25) omit it, and those are cancelled
            # with tasks/cancel: nothing to do.
            return
        reason = None if params.reason is UNSET else params.reason
        incoming = self._requests.incoming.get(request_id)
        if incoming is not None:
            # "The client MUST NOT attempt to cancel its initialize request", and invalid
            # cancellations SHOULD be ignored (2025-11-25 basic/utilities/cancellation).
            if incoming.spec.name != "initialize" and not incoming.cancelled:
                incoming.cancelled = True
                events.append(CancelRequested(request_id=request_id, reason=reason))
            return
        outgoing = self._requests.outgoing.get(request_id)
        if outgoing is not None and outgoing.spec.name == _listen.LISTEN:
            # 2026-07-28: the one thing a server may cancel is a listen stream.
            self._requests.finish(request_id, gave_up=True)
            events.append(SubscriptionEnded(subscription_id=request_id, reason=reason))
        # Anything else refers to a request already answered: a harmless race.

    def _receive_progress(self, params: ProgressNotificationParams, events: list[Event]) -> None:
        if self._phase is Phase.MODERN and self.our_role is Role.SERVER:
            # "Progress is server → client only" in 2026-07-28.
            events.append(self._ignored("notifications/progress", "Clients do not send progress"))
            return
        request_id = self._requests.for_token(params.progress_token)
        if request_id is None:
            return  # progress for a request that already completed: a harmless race
        outgoing = self._requests.outgoing[request_id]
        if outgoing.last_progress is not None and params.progress <= outgoing.last_progress:
            # "The progress value MUST increase with each notification" (2024-11-05).
            events.append(self._ignored("notifications/progress", "Progress must increase"))
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

    def _receive_stream_notification(self, method: str, params: Any, events: list[Event]) -> None:
        """A 2026-07-28 client: check a notification against the listen stream it names."""
        subscription_id = _listen.subscription_id_of(params)
        if subscription_id is None:
            # Not on a listen stream: a request's log message, say.
            events.append(NotificationReceived(method=method, params=params))
            return
        stream = self._requests.outgoing.get(subscription_id)
        problem = _listen.received_problem(stream, method)
        if problem is not None:
            events.append(self._ignored(method, problem))
            return
        if method == _listen.LISTEN_ACKNOWLEDGED:
            assert stream is not None  # checked by received_problem
            stream.honoured_filter = params.notifications
        events.append(
            NotificationReceived(method=method, params=params, subscription_id=subscription_id)
        )

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
        spec = outgoing.spec
        outcome: Any
        if message.result is not UNSET and message.error is UNSET and message.jsonrpc == "2.0":
            outcome = decode_result(spec, message.result, modern=self._phase is Phase.MODERN)
        else:
            error = self._read_error(message)
            outcome = "Malformed response" if error is None else error
        self._complete(request_id, spec, outcome, events)

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
                self._phase is Phase.MODERN
                and getattr(result, "result_type", UNSET) not in (UNSET, "complete")
            )
        ):
            return False  # not ours, not that method, or a resultType to examine
        self._requests.finish(request_id)
        self._complete(request_id, spec, result, events)
        return True

    def _complete(
        self, request_id: RequestId, spec: MethodSpec, outcome: Any, events: list[Event]
    ) -> None:
        """Report how one of our requests ended: a result, an error, or unusable."""
        if isinstance(outcome, str):
            if spec.name == "initialize":
                self._initialize_failed()
            events.append(InvalidResponse(request_id=request_id, method=spec.name, message=outcome))
        elif isinstance(outcome, Error):
            if spec.name == "initialize":
                self._initialize_failed()
            events.append(ErrorReceived(request_id=request_id, method=spec.name, error=outcome))
        else:
            if spec.name == "initialize":
                self._accept_initialize_result(outcome)
            elif spec.name == "server/discover":
                self._their_capabilities = outcome.capabilities
            events.append(ResponseReceived(request_id=request_id, method=spec.name, result=outcome))

    def _read_error(self, message: jsonrpc.WireMessage) -> Error | None:
        """The error of a well-formed error response, or None."""
        if message.jsonrpc != "2.0" or message.result is not UNSET or message.error is UNSET:
            return None
        wire = jsonrpc.decode_error(message.error)
        if wire is None:
            return None
        data = UNSET if wire.data is UNSET else _ANY_DECODER.decode(wire.data)
        return Error(code=wire.code, message=wire.message, data=data)

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

    # ----------------------------------------------------------------- helpers

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
