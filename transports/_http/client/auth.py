"""Bearer tokens: ``Authorization: Bearer <token>`` on every request.

"(C) MUST send Authorization: Bearer <token> on every HTTP request (including GET and
DELETE on legacy transports). Tokens MUST NOT go in the query string" (2025-03-26
basic/authorization). The token is a string, or comes from a callable (sync or async)
that is asked again when the server answers 401: a token that expired is replaced, and
the request is sent once more.

Getting a token in the first place (OAuth 2.1 discovery, dynamic registration, the
authorization code flow with PKCE, DPoP proofs) is `transports._http.client.oauth`'s:
both are an `Authenticator`, what the `Sender` asks for each request's headers and tells
about a 401 or 403.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Protocol, TypeAlias

import trio

__all__ = ["AuthHeaders", "Authenticator", "BearerAuth", "HttpAuth"]

#: A bearer token, or a callable (sync or async) returning the current one.
HttpAuth: TypeAlias = str | Callable[[], str | Awaitable[str]]
#: The headers an `Authenticator` adds to one request (names lower-case).
AuthHeaders: TypeAlias = Sequence[tuple[bytes, bytes]]

_AUTHORIZATION: Final = b"authorization"


class Authenticator(Protocol):
    """What puts ``Authorization`` on requests, and answers the server's refusals."""

    @property
    def generation(self) -> int:
        """Changes each time the headers do (a token; a DPoP nonce): who acts on a 401."""
        ...

    async def headers(self, method: bytes, target: bytes) -> AuthHeaders:
        """The headers for a ``method`` request to ``target`` (none before any token).

        ``Authorization``; with DPoP also the request's own ``DPoP`` proof.
        """
        ...

    async def challenged(
        self,
        status: int,
        challenge: str | None,
        seen: int,
        attempt: int,
        nonce: str | None,
        *,
        peer: str | None = None,
    ) -> bool:
        """The server answered ``status`` (401 or 403) to the headers of generation ``seen``.

        ``challenge`` is its ``WWW-Authenticate``, ``nonce`` its ``DPoP-Nonce``, ``peer``
        the IP address the refused connection reached, if known. Returns whether to send
        the request again (``attempt`` retries have been made).
        """
        ...

    def noticed_nonce(self, nonce: str) -> None:
        """Another response carried a ``DPoP-Nonce`` (RFC 9449 §9: use it from now on)."""
        ...


class BearerAuth:
    """The ``Authorization`` header of every request, refreshed on demand.

    Args:
        source: The token, or a callable that returns it.
    """

    def __init__(self, source: HttpAuth) -> None:
        self._source = source
        self._header: tuple[tuple[bytes, bytes]] | None = None
        self._lock = trio.Lock()
        self._generation = 0
        if isinstance(source, str):
            self._header = _header(source)

    @property
    def refreshable(self) -> bool:
        """Whether a 401 is worth a new token (the source is a callable)."""
        return not isinstance(self._source, str)

    @property
    def generation(self) -> int:
        """Changes each time the token is fetched (to tell who refreshes after a 401)."""
        return self._generation

    async def headers(self, method: bytes, target: bytes) -> AuthHeaders:
        """The ``Authorization`` header (any request), fetching the token the first time."""
        header = self._header
        if header is None:
            async with self._lock:
                if self._header is None:
                    await self._fetch()
            header = self._header
            assert header is not None
        return header

    async def challenged(
        self,
        status: int,
        challenge: str | None,
        seen: int,
        attempt: int,
        nonce: str | None,
        *,
        peer: str | None = None,
    ) -> bool:
        """On the first 401: a new token from the callable, and the request once more."""
        if status != 401 or not self.refreshable or attempt > 0:
            return False
        await self.refresh(seen)
        return True

    def noticed_nonce(self, nonce: str) -> None:
        """Nothing: bearer tokens carry no proof."""

    async def refresh(self, seen: int) -> None:
        """Fetch a new token, unless someone else did since generation ``seen``."""
        async with self._lock:
            if self._generation == seen:
                await self._fetch()

    async def _fetch(self) -> None:
        source = self._source
        if isinstance(source, str):
            return
        token = source()
        if inspect.isawaitable(token):
            token = await token
        if not isinstance(token, str):
            raise TypeError(f"the auth callable returned {type(token).__name__}, not a token")
        self._header = _header(token)
        self._generation += 1


def _header(token: str) -> tuple[tuple[bytes, bytes]]:
    # A token is visible ASCII (RFC 6750 b64token): anything else can't be a header.
    if not token or not token.isascii() or not all("!" <= char <= "~" for char in token):
        raise ValueError("a bearer token must be visible ASCII without spaces")
    return ((_AUTHORIZATION, b"Bearer " + token.encode("ascii")),)
