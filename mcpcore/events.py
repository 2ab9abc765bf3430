"""What `Connection.receive` reports: small frozen values, named for what happened.

Each event is the complete story of one incoming message (or, for a batch, of one
element). Events that need an answer the core can decide on its own carry the answer
ready to write (`InvalidMessage.reply`), as wsproto's events do.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpcore.types import ClientCapabilities, Error, LoggingLevel, ProgressToken, RequestId

__all__ = [
    "CancelRequested",
    "ErrorReceived",
    "Event",
    "InvalidMessage",
    "InvalidResponse",
    "NotificationReceived",
    "ProgressReceived",
    "RequestReceived",
    "ResponseReceived",
    "SubscriptionEnded",
]


class Event(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Base class of every event."""


class RequestReceived(Event, frozen=True, kw_only=True, gc=False):
    """The peer sent a request that passed every protocol check; answer it once.

    Answer with `Connection.send_result` or `Connection.send_error` (the core keeps the
    request in flight until then).

    Attributes:
        request_id: The id to answer; ``7`` and ``"7"`` are different requests.
        method: The method name.
        params: ``params`` decoded into the type the method table names.
        protocol_version: The revision this request is served under: the negotiated one
            in the legacy era, the request's own ``_meta`` version in 2026-07-28.
        client_capabilities: What the client declared: on this request in 2026-07-28, in
            ``initialize`` in the legacy era. None on the client side, or before a
            handshake.
        progress_token: The token to report progress against, if the peer asked for it.
        log_level: 2026-07-28 only: the request's ``_meta`` log level. None means the
            peer asked for no log messages for this request.
    """

    request_id: RequestId
    method: str
    params: Any
    protocol_version: str | None = None
    client_capabilities: ClientCapabilities | None = None
    progress_token: ProgressToken | None = None
    log_level: LoggingLevel | None = None


class NotificationReceived(Event, frozen=True, kw_only=True, gc=False):
    """The peer sent a notification (other than cancellation and progress, which have their own).

    Attributes:
        method: The method name.
        params: ``params`` decoded into the type the method table names.
        subscription_id: For a notification delivered on a 2026-07-28
            ``subscriptions/listen`` stream: the id of that listen request.
    """

    method: str
    params: Any
    subscription_id: RequestId | None = None


class ResponseReceived(Event, frozen=True, kw_only=True, gc=False):
    """A successful answer to one of our requests.

    Attributes:
        request_id: The id of our request.
        method: The method of our request.
        result: The result, decoded into the method's result type (or into
            `InputRequiredResult` when a 2026-07-28 server asks for more input).
    """

    request_id: RequestId
    method: str
    result: Any


class ErrorReceived(Event, frozen=True, kw_only=True, gc=False):
    """An error answer from the peer.

    Attributes:
        request_id: The id of our request, or None when the peer could not read which
            message it was answering (a parse error, for instance).
        method: The method of our request, when the id matched one.
        error: The error; ``error.data`` is decoded generically (any JSON).
    """

    request_id: RequestId | None
    method: str | None
    error: Error


class CancelRequested(Event, frozen=True, kw_only=True, gc=False):
    """The peer no longer wants the answer to a request it sent us.

    Stop the work. Whatever is later passed to `Connection.send_result` or
    `Connection.send_error` for this id is not sent ("receivers SHOULD NOT send a
    response for a cancelled request", 2025-11-25 basic/utilities/cancellation).
    """

    request_id: RequestId
    reason: str | None = None


class ProgressReceived(Event, frozen=True, kw_only=True, gc=False):
    """Progress on one of our requests.

    Attributes:
        request_id: The id of our request the token belongs to.
        progress_token: The token, as sent.
        progress: Strictly greater than the previous value for this token.
        total: The total, when known.
        message: A human-readable status (2025-03-26 and later).
    """

    request_id: RequestId
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None


class SubscriptionEnded(Event, frozen=True, kw_only=True, gc=False):
    """A 2026-07-28 server tore down one of our ``subscriptions/listen`` streams.

    On stdio the server signals this with ``notifications/cancelled`` for the listen
    request (2026-07-28 basic/patterns/cancellation). A graceful close arrives as a
    `ResponseReceived` for the listen request instead.
    """

    subscription_id: RequestId
    reason: str | None = None


class InvalidMessage(Event, frozen=True, kw_only=True, gc=False):
    """The peer sent something the protocol does not allow; the core decided the answer.

    Attributes:
        code: The JSON-RPC error code that describes the problem.
        message: A description, safe to show to the peer.
        reply: The error response to write, or None when none is due (a broken
            notification, a stray response: JSON-RPC never answers those).
        request_id: The id of the peer's request, when one was readable.
        method: The method involved, when known.
    """

    code: int
    message: str
    reply: bytes | None = None
    request_id: RequestId | None = None
    method: str | None = None


class InvalidResponse(Event, frozen=True, kw_only=True, gc=False):
    """The peer answered one of our requests with something unusable; the request is over.

    A malformed response, a result that does not decode into the method's result type,
    or a 2026-07-28 ``resultType`` we don't recognise ("MUST treat an unrecognized
    resultType as invalid"). Nothing is sent back: JSON-RPC never answers a response.
    This is a local judgement, not an error the peer sent, so it is never an
    `ErrorReceived`.

    Attributes:
        request_id: The id of our request.
        method: The method of our request.
        message: What was wrong.
    """

    request_id: RequestId
    method: str
    message: str
