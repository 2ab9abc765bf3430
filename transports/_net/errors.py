"""What an HTTP client call raises when the server refuses it at the HTTP level."""

from __future__ import annotations

__all__ = ["HttpStatusError"]


class HttpStatusError(Exception):
    """The server answered with an HTTP error status and no JSON-RPC answer in it.

    401 (after one retry with a fresh token, when the token comes from a callable) and
    403 always come this way: they concern credentials, not the protocol. So do other
    error statuses without a JSON-RPC error in their body, except where the protocol
    gives them a meaning (era detection, an expired legacy session).

    Attributes:
        status: The HTTP status.
        reason: Its reason phrase, as the server sent it.
        method: The JSON-RPC method of the refused POST (None for a GET or DELETE).
        www_authenticate: The ``WWW-Authenticate`` challenge of a 401 or 403, if any
            (it names the protected-resource metadata an OAuth client starts from).
    """

    def __init__(
        self,
        status: int,
        reason: str,
        *,
        method: str | None = None,
        www_authenticate: str | None = None,
    ) -> None:
        what = f"{method}: " if method else ""
        super().__init__(f"{what}the server answered HTTP {status} {reason}".rstrip())
        self.status = status
        self.reason = reason
        self.method = method
        self.www_authenticate = www_authenticate
