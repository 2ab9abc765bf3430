"""The checks every request to an MCP endpoint passes first, whatever it then asks for.

`serve_http`'s router and `serve_websocket`'s handshake both start here, in this order:

1. ``Host``, then ``Origin`` (DNS-rebinding protection, `mcpcore.http.OriginPolicy`:
   421 and 403), before anything else (CONFORMANCE §4.4);
2. the path: the endpoint, or the RFC 9728 protected-resource metadata when
   authorization with authorization servers is configured (public, no token
   needed), else 404;
3. the bearer token, when authorization is configured (401 and 403, with the
   ``WWW-Authenticate`` challenge).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgspec

from mcpcore.http import OriginPolicy
from transports._net.auth import PROTECTED_RESOURCE_PATH, AuthFailure, BearerAuth
from transports._net.reply import JSON_HEADERS, Reply
from transports._net.request import HttpRequest

__all__ = ["MAX_REMEMBERED_ORIGINS", "EndpointGate", "Passed"]

#: ``(Host, Origin)`` pairs whose verdict is remembered. A client sends the same pair on
#: every request, and checking one costs more than the rest of the routing; the memo is
#: emptied when full, so that clients sending ever new values can't grow it.
MAX_REMEMBERED_ORIGINS: Final = 256

_UNKNOWN: Final = -1
_ALLOW_GET: Final = [(b"allow", b"GET")]


@dataclass(frozen=True, slots=True)
class Passed:
    """A request that passed the gate.

    Attributes:
        principal: Whom the bearer token names, or None without authorization.
    """

    principal: str | None


_ANONYMOUS: Final = Passed(None)


class EndpointGate:
    """Checks a request to one endpoint, and answers it when it doesn't pass.

    Args:
        path: The endpoint's path.
        origins: The hosts and origins served.
        auth: Bearer-token authorization, or None.
    """

    def __init__(self, *, path: str, origins: OriginPolicy, auth: BearerAuth | None) -> None:
        self._path = path
        self._origins = origins
        self._auth = auth
        self._refusals: dict[tuple[str | None, str | None], int | None] = {}
        self._metadata_paths = frozenset(
            {PROTECTED_RESOURCE_PATH, PROTECTED_RESOURCE_PATH + path.rstrip("/")}
        )

    def passes(self, request: HttpRequest) -> Passed | None:
        """`Passed` for a request to the endpoint that needs no token and passes; else None.

        None does not refuse: `check` decides and answers (a request that needs a token, a
        refusal, the metadata). Most requests pass here, without a coroutine.
        """
        headers = request.headers
        if self.admits(request.path, headers.get("host"), headers.get("origin")):
            return _ANONYMOUS
        return None

    def admits(self, path: str, host: str | None, origin: str | None) -> bool:
        """Whether a request to ``path`` with this ``Host`` and ``Origin`` passes needing no token.

        False does not refuse: `check` decides and answers.
        """
        return self._auth is None and path == self._path and self._refusal(host, origin) is None

    async def check(self, request: HttpRequest, reply: Reply) -> Passed | None:
        """Whether ``request`` passes; None when it doesn't, and it has been answered."""
        headers = request.headers
        refusal = self._refusal(headers.get("host"), headers.get("origin"))
        if refusal is not None:
            reason = "Misdirected Request: unknown Host" if refusal == 421 else "Forbidden: Origin"
            await reply.refuse(refusal, reason)
            return None
        if request.path != self._path:
            auth = self._auth
            if request.path in self._metadata_paths and auth is not None and auth.has_metadata:
                await self._metadata(request, reply, auth)
            else:
                await reply.refuse(404, "Not Found")
            return None
        if self._auth is None:
            return _ANONYMOUS
        checked = await self._auth.check(
            headers.get("authorization"),
            headers.get("host", ""),
            request.root + self._path,
            root=request.root,
        )
        if isinstance(checked, AuthFailure):
            challenge = [(b"www-authenticate", checked.challenge.encode())]
            await reply.refuse(checked.status, checked.message, headers=challenge)
            return None
        return Passed(checked.subject)

    def _refusal(self, host: str | None, origin: str | None) -> int | None:
        """`OriginPolicy.refusal`, remembered (see `MAX_REMEMBERED_ORIGINS`)."""
        refusals = self._refusals
        key = (host, origin)
        refusal = refusals.get(key, _UNKNOWN)
        if refusal == _UNKNOWN:
            if len(refusals) >= MAX_REMEMBERED_ORIGINS:
                refusals.clear()
            refusal = refusals[key] = self._origins.refusal(host, origin)
        return refusal

    async def _metadata(self, request: HttpRequest, reply: Reply, auth: BearerAuth) -> None:
        """RFC 9728 protected-resource metadata (public, no token needed)."""
        if request.method != "GET":
            await reply.refuse(405, "Method Not Allowed", headers=_ALLOW_GET)
            return
        document = auth.metadata(request.headers.get("host", ""), request.root + self._path)
        await reply.respond(200, JSON_HEADERS, msgspec.json.encode(document))
