"""Client: what an HTTP response to a POST means, before any JSON-RPC is read from it.

A Streamable HTTP server answers a POST with 200 and a JSON body or an event stream,
202 for a notification, or an error status. The error statuses carry decisions a
client must get right, and none of them involves IO, so they live here:

* 401 and 403 come "before any JSON-RPC processing": they are about credentials, never
  evidence of an era ("era detection must not treat 401 or 403 as legacy server",
  CHECKLIST §15). A 401 is worth one retry with a fresh token.
* Legacy sessions: "(S) MAY terminate the session, after which it MUST return 404 for
  that id. On a 404, (C) MUST re-initialize without a session id" (2025-03-26
  basic/transports).
* Backwards compatibility: a dual-era client's ``initialize`` POST that "fails with
  400, 404 or 405 AND carries no recognized modern JSON-RPC error → GET the URL and
  expect an ``endpoint`` event": the server speaks the 2024-11-05 HTTP+SSE transport
  (CHECKLIST §14.1 and §14.3, 2025-11-25 basic/transports).
* Otherwise a JSON-RPC error in the body is the answer ("a 404 with a -32601 body =
  modern server, unknown method"; a -32020/-32021/-32022 at 400 is a 2026-07-28
  refusal, CHECKLIST G8); without one, the status is all there is to report.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from mcpcore import jsonrpc
from mcpcore.types import Error, RequestId

__all__ = [
    "MAX_SESSION_ID_LENGTH",
    "MODERN_ERROR_CODES",
    "BodyError",
    "Refusal",
    "error_in_body",
    "judge_refusal",
    "media_type",
    "valid_session_id",
]

#: The "recognized modern JSON-RPC errors": a refusal carrying one comes from a server
#: that speaks JSON-RPC over Streamable HTTP at this URL, so no HTTP+SSE fallback follows
#: it. -32020/-32021/-32022 are 2026-07-28's own (at 400); -32602 stands for "a missing
#: required per-request _meta field → -32602, HTTP 400", and -32601 for "an unknown
#: method → 404 + -32601; the JSON-RPC body is what tells it apart from a legacy 404"
#: (2026-07-28 basic/transports, CHECKLIST G8).
MODERN_ERROR_CODES: Final = frozenset(
    {
        jsonrpc.HEADER_MISMATCH,
        jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
        jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
        jsonrpc.INVALID_PARAMS,
        jsonrpc.METHOD_NOT_FOUND,
    }
)
#: The longest ``Mcp-Session-Id`` accepted. The spec sets no length; ids are random
#: tokens (the SDKs send 32-36 characters), and one we echo on every request should not
#: be allowed to grow each request by kilobytes.
MAX_SESSION_ID_LENGTH: Final = 1024
#: Statuses that make a refused ``initialize`` look like a 2024-11-05 HTTP+SSE server
#: (2025-11-25 basic/transports; 2025-03-26 said any 4xx, later revisions narrowed it).
_HTTP_SSE_STATUSES: Final = frozenset({400, 404, 405})
_INITIALIZE: Final = "initialize"


class Refusal(enum.Enum):
    """What to do about an error status answering a POST."""

    #: 401: get a fresh token, and send the request once more.
    REAUTHENTICATE = "reauthenticate"
    #: 401 again, or 403: report it; credentials are the user's business.
    FORBIDDEN = "forbidden"
    #: Legacy 404 on a request that carried a session: re-initialize, then retry.
    SESSION_EXPIRED = "session-expired"
    #: ``initialize`` refused without a modern error: try the 2024-11-05 HTTP+SSE transport.
    TRY_HTTP_SSE = "try-http-sse"
    #: The body holds the JSON-RPC error that answers the request.
    JSONRPC_ERROR = "jsonrpc-error"
    #: Nothing to learn but the status.
    HTTP_ERROR = "http-error"


@dataclass(frozen=True, slots=True)
class BodyError:
    """A JSON-RPC error response found in an HTTP error body.

    Attributes:
        request_id: The id it names; None when the server could not say (``"id":
            null``, as servers answer header problems found before the body was read).
        error: The error.
    """

    request_id: RequestId | None
    error: Error


class _ErrorResponse(msgspec.Struct, gc=False):
    error: Error
    id: int | str | None = None
    jsonrpc: Any = None


_ERROR_DECODER: Final = msgspec.json.Decoder(_ErrorResponse)


def error_in_body(body: bytes) -> BodyError | None:
    """The JSON-RPC error response an HTTP error body holds, or None if it holds none.

    None too for a body nested past `jsonrpc.MAX_JSON_DEPTH` (never decoded).
    """
    if jsonrpc.nests_too_deeply(body):
        return None
    try:
        response = _ERROR_DECODER.decode(body)
    except jsonrpc.DECODE_ERRORS:
        return None
    return BodyError(response.id, response.error)


def judge_refusal(
    status: int,
    *,
    method: str | None,
    had_session: bool,
    error_code: int | None,
    reauthenticated: bool,
) -> Refusal:
    """Decide what an error status (4xx, 5xx) answering a POST means.

    Args:
        status: The HTTP status.
        method: The method of the request or notification POSTed (None for a response).
        had_session: Whether the POST carried an ``Mcp-Session-Id``.
        error_code: The code of the JSON-RPC error in the body (`error_in_body`), if any.
        reauthenticated: Whether this POST already went out again with a fresh token.
    """
    if status == 401:
        return Refusal.FORBIDDEN if reauthenticated else Refusal.REAUTHENTICATE
    if status == 403:
        return Refusal.FORBIDDEN
    if (
        status == 404
        and had_session
        and method != _INITIALIZE
        and error_code != jsonrpc.METHOD_NOT_FOUND
    ):
        return Refusal.SESSION_EXPIRED
    if (
        method == _INITIALIZE
        and status in _HTTP_SSE_STATUSES
        and error_code not in MODERN_ERROR_CODES
    ):
        return Refusal.TRY_HTTP_SSE
    return Refusal.HTTP_ERROR if error_code is None else Refusal.JSONRPC_ERROR


def media_type(content_type: bytes | str | None) -> str:
    """The media type of a ``Content-Type`` value, lower-cased, parameters dropped."""
    if content_type is None:
        return ""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    return content_type.partition(";")[0].strip().lower()


def valid_session_id(value: bytes | str) -> str | None:
    """The session id a server issued, or None when it is not one.

    "The id is visible ASCII 0x21-0x7E" (2025-03-26 basic/transports); a longer one than
    `MAX_SESSION_ID_LENGTH` is refused too.
    """
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            return None
    if not value or len(value) > MAX_SESSION_ID_LENGTH:
        return None
    if not all("!" <= char <= "~" for char in value):
        return None
    return value
