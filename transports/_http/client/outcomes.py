"""Ending a request without the server's answer: the outcomes and errors a driver makes up.

When HTTP itself fails a request (an error status without JSON-RPC in it, a stream
that ended early, a body too large), the request must still end, in the `Connection`
(which would otherwise keep it in flight for ever) and for the caller: with an
`InvalidResponse` (a local verdict, never mistakable for an error the server sent),
or an exception.
"""

from __future__ import annotations

from typing import Final

import trio

from mcpcore import Connection, InvalidResponse, Phase
from mcpcore.types import RequestId
from transports._client.errors import ConnectionClosedError
from transports._http.client.exchange import Response
from transports._net.errors import HttpStatusError

__all__ = ["close_request", "give_up_reason", "invalid", "status_error"]

_WWW_AUTHENTICATE: Final = b"www-authenticate"


def close_request(connection: Connection, request_id: RequestId) -> None:
    """Forget one of our requests in the Connection: no answer will come for it.

    A failed ``initialize`` can't be cancelled ("the client MUST NOT attempt to cancel
    its initialize request"): the handshake has failed, and the Connection is closed.
    """
    if request_id not in connection.pending_requests:
        return
    if connection.phase is Phase.INITIALIZING:
        connection.close()
    else:
        connection.cancel(request_id)  # (the bytes are not sent: there is nothing to cancel)


def invalid(
    connection: Connection, request_id: RequestId, method: str | None, why: str
) -> InvalidResponse:
    """End ``request_id`` with an unusable answer."""
    close_request(connection, request_id)
    return InvalidResponse(request_id=request_id, method=method or "", message=why)


def status_error(response: Response, method: str | None) -> HttpStatusError:
    """The `HttpStatusError` of an error response."""
    challenge = response.header(_WWW_AUTHENTICATE)
    return HttpStatusError(
        response.status,
        response.head.reason,
        method=method,
        www_authenticate=None if challenge is None else challenge.decode("latin-1"),
    )


def give_up_reason(exc: BaseException) -> str:
    """Why a call stopped waiting, for a ``notifications/cancelled`` or an error."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, trio.Cancelled):
        return "cancelled by the client"
    if isinstance(exc, ConnectionClosedError):
        return exc.reason
    return f"the client gave up ({type(exc).__name__})"
