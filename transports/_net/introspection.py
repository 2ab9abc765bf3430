"""A `TokenVerifier` for opaque access tokens, judged by the authorization server (RFC 7662).

Many authorization servers issue tokens only they can read. The resource server asks
their introspection endpoint: a POST of ``token=…&token_type_hint=access_token``
(RFC 7662 §2.1), authenticated as the resource server (§2.1 has the endpoint require
it, against token scanning), by its client id and secret
in HTTP Basic (``client_secret_basic``, the default) or in the form
(``client_secret_post``; RFC 6749 §2.3.1). The answer is a JSON object whose ``active``
says whether the token is valid at all (§2.2). A token is accepted when, and only when,

* ``active`` is ``true``;
* ``aud`` (a string or a list) holds this resource: "MCP servers MUST validate that
  access tokens were issued specifically for them as the intended audience" (2025-06-18
  basic/authorization, Token Handling; RFC 8707). An answer without ``aud`` can't show
  that, and is refused;
* ``iss``, when the answer has one and an issuer is configured, is that issuer (RFC 7662
  makes ``iss`` optional: the endpoint asked is the issuer's own);
* ``exp`` and ``nbf``, when present, put now inside the token's life, give or take
  `INTROSPECTION_LEEWAY` (the authorization server's ``active`` already says so by its
  clock; ours is checked too, for a cached answer and a server that forgets);
* it is not sender-constrained (``cnf``, or ``token_type`` ``DPoP``): a token bound to
  a DPoP key (RFC 9449) or a client certificate (RFC 8705) shown as a plain bearer
  token, without the proof its binding asks for, is likely a stolen one;
* it names a subject: ``sub``, or, for a token a client got for itself (the client
  credentials grant, where RFC 9068 §2.2 puts the client id in ``sub`` anyway),
  ``client_id``. Never ``username``: RFC 7662 calls it "human-readable", and sessions
  are bound to the subject, which must be stable.

The scopes are ``scope``'s (space-separated, §2.2); `BearerAuth` answers a token
without a required one with 403 ``insufficient_scope``. Any other answer is None (401),
and nothing about why reaches the client; the operator reads why on the
``mcpcore.auth`` logger: ``active: false`` (an expired or revoked token, the ordinary
end of every token) at info, the rest at warning (a token active for the authorization
server but refused here points to a misconfiguration or a misused token; an endpoint
that fails, to an outage). No log line, error or repr holds a token or the secret.

Each call is bounded (`INTROSPECTION_TIMEOUT`, `MAX_INTROSPECTION_SIZE`) and runs in a
worker thread, as `JwtVerifier`'s fetches do. Why not the project's async HTTP client
(`transports._net.pool`, which OAuth's ``_round_trip`` uses): it runs on trio only,
and `BearerAuth` also guards `AsgiApp` under asyncio; it also sits in the client
layer. Answers are cached by a keyed hash of the token, never the token itself:
accepted ones until ``exp`` but at most `INTROSPECTION_CACHE_TTL` (RFC 7662 §4: a
cached answer outlives a revocation by as long), refused ones `INTROSPECTION_REFUSAL_TTL`;
an endpoint that fails is not cached. Requests arriving together with one token share
one call.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import logging
import secrets
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeGuard

from transports._net.auth import Principal
from transports._net.backchannel import CLOCK_LEEWAY, LOGGER_NAME, check_url, read_bounded
from transports._runtime import primitives
from transports._runtime.primitives import AnyEvent

__all__ = [
    "INTROSPECTION_CACHE_SIZE",
    "INTROSPECTION_CACHE_TTL",
    "INTROSPECTION_LEEWAY",
    "INTROSPECTION_REFUSAL_CACHE_SIZE",
    "INTROSPECTION_REFUSAL_TTL",
    "INTROSPECTION_TIMEOUT",
    "MAX_INTROSPECTION_SIZE",
    "ClientAuthMethod",
    "IntrospectionVerifier",
]

#: Seconds an accepted answer is used before the endpoint is asked again (sooner when
#: the token expires). A token revoked at the authorization server keeps working here
#: this long at most (RFC 7662 §4 leaves the trade-off to the resource server); a
#: minute keeps the endpoint to one call per token per minute under any traffic.
INTROSPECTION_CACHE_TTL: Final = 60.0
#: Seconds a refused answer is used: a client retrying a bad token in a loop costs the
#: authorization server one call per 5 s, and a token refused because it was not yet
#: valid (``nbf``) is asked about again soon.
INTROSPECTION_REFUSAL_TTL: Final = 5.0
#: Accepted answers kept, least recently used dropped first. Each is a hash, a subject
#: and its scopes (a few hundred bytes): ~1 MiB for as many active users.
INTROSPECTION_CACHE_SIZE: Final = 4096
#: Refused answers kept, apart from the accepted ones, so that a flood of made-up
#: tokens can evict only other refusals, never the answers real users depend on.
INTROSPECTION_REFUSAL_CACHE_SIZE: Final = 1024
#: Seconds of clock skew forgiven on ``exp`` and ``nbf``: the same 30 s as `JWT_LEEWAY`
#: (`CLOCK_LEEWAY`).
INTROSPECTION_LEEWAY: Final = CLOCK_LEEWAY
#: Seconds a call may take: each step (connecting, TLS, each read) times out after as
#: long, and the body must be whole by then. The request being authorized waits for it,
#: so it is shorter than a key-set fetch: an endpoint slower than this is down.
INTROSPECTION_TIMEOUT: Final = 5.0
#: Bytes an answer may have. Real ones are a few hundred bytes (a few KiB with custom
#: claims); a body past this is refused, not read. As `mcpcore.auth.MAX_METADATA_SIZE`.
MAX_INTROSPECTION_SIZE: Final = 64 * 1024

#: How the resource server authenticates to the endpoint (RFC 7591 §2 method names).
ClientAuthMethod = Literal["client_secret_basic", "client_secret_post"]
_CLIENT_AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post")
#: Bytes of the keyed hash a token is cached under (BLAKE2b-256).
_DIGEST_SIZE: Final = 32
_log = logging.getLogger(LOGGER_NAME)


class IntrospectionFailedError(Exception):
    """The endpoint could not be asked, or its answer read (no token in the message)."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuses redirects: following one would send the token and our secret elsewhere."""

    def redirect_request(  # noqa: PLR0917 (urllib's signature)
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> None:
        return None  # (urllib then raises the 3xx as an HTTPError)


@dataclass(frozen=True, slots=True)
class _ClientCredentials:
    """The resource server's credentials at the endpoint (the secret kept out of repr)."""

    client_id: str
    secret: str = field(repr=False)
    method: ClientAuthMethod

    def apply(self, form: dict[str, str], headers: dict[str, str]) -> None:
        """Put the credentials in the form or in ``Authorization`` (RFC 6749 §2.3.1)."""
        if self.method == "client_secret_post":
            form["client_id"] = self.client_id
            form["client_secret"] = self.secret
            return
        # "The client identifier is encoded using the application/x-www-form-urlencoded
        # encoding algorithm ... the client password is encoded using the same
        # algorithm" before Basic (RFC 6749 §2.3.1).
        pair = f"{_form_encode(self.client_id)}:{_form_encode(self.secret)}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _form_encode(text: str) -> str:
    return urllib.parse.quote_plus(text, safe="")


def introspect(
    endpoint: str,
    token: str,
    credentials: _ClientCredentials,
    *,
    timeout: float,
    ssl_context: ssl.SSLContext | None,
) -> dict[str, Any]:
    """POST ``token`` to the endpoint (blocking: run it in a thread); its JSON answer.

    Raises:
        IntrospectionFailedError: Unreachable, not 200, too slow, too large, or not a
            JSON object.
    """
    deadline = time.monotonic() + timeout
    form = {"token": token, "token_type_hint": "access_token"}
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    }
    credentials.apply(form, headers)
    body = urllib.parse.urlencode(form).encode("ascii")
    request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=ssl_context), _NoRedirects()
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            if response.status != 200:  # (RFC 7662 §2.2: "200 OK")
                raise IntrospectionFailedError(f"the endpoint answered {response.status}")
            answer = json.loads(read_bounded(response, MAX_INTROSPECTION_SIZE, deadline))
    except (OSError, http.client.HTTPException, ValueError) as error:
        # (urllib's errors and timeouts are OSErrors; a bad JSON body or one past the cap
        # a ValueError; none of their messages holds the request's body)
        if isinstance(error, urllib.error.HTTPError):
            error.close()  # (it holds the response open)
        raise IntrospectionFailedError(f"the endpoint failed: {error}") from None
    if not isinstance(answer, dict):
        raise IntrospectionFailedError("the answer is not a JSON object")
    return answer


def _is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a JSON number (a bool is not one, though Python says so)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _audiences(claims: Mapping[str, Any]) -> list[str]:
    """``aud`` as a list (RFC 7662 §2.2: "a string ... or an array of strings")."""
    audience = claims.get("aud")
    if isinstance(audience, str):
        return [audience]
    if isinstance(audience, list):
        return [item for item in audience if isinstance(item, str)]
    return []


def _subject(claims: Mapping[str, Any]) -> str | None:
    """``sub``, or ``client_id`` for a token a client got for itself; None without."""
    for name in ("sub", "client_id"):
        value = claims.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    return frozenset(scope.split()) if isinstance(scope, str) else frozenset()


@dataclass(frozen=True, slots=True)
class _Entry:
    """A cached answer: the principal (None: refused) and when it stops being used."""

    principal: Principal | None
    expires_at: float


class _Answers:
    """Answers by token digest, each until its expiry, the least recently used dropped."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()

    def get(self, key: bytes, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if now >= entry.expires_at:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry

    def put(self, key: bytes, entry: _Entry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(slots=True)
class _Flight:
    """One call under way, which requests with the same token wait for."""

    done: AnyEvent
    answered: bool = False
    principal: Principal | None = None


class IntrospectionVerifier:
    """Checks opaque access tokens at the authorization server (RFC 7662): a `TokenVerifier`.

    Use it as `BearerAuth`'s ``verify`` (or let `BearerAuth.introspection` build both).
    A token the endpoint calls inactive, or that isn't for this resource, is None (401,
    and nothing about why reaches the client); the scopes of an accepted one are
    `BearerAuth`'s to check (403). See the module's docstring for every rule.

    Args:
        endpoint: The introspection endpoint (the authorization server's metadata's
            ``introspection_endpoint``, RFC 8414): ``https://``, or ``http://`` to a
            loopback host.
        client_id: The resource server's client id at the authorization server.
        client_secret: Its secret.
        audience: This resource's canonical URL (``https://host/mcp``), which ``aud``
            must hold; or several (tokens holding any one are accepted).
        issuer: The ``iss`` an answer naming one must name (None: not checked).
        client_auth: ``"client_secret_basic"`` (HTTP Basic, the default: RFC 6749 §2.3.1
            has every server support it) or ``"client_secret_post"`` (in the form).
        leeway: Seconds of clock skew forgiven (`INTROSPECTION_LEEWAY`).
        cache_ttl: Seconds at most an accepted answer is used (`INTROSPECTION_CACHE_TTL`).
        refusal_ttl: Seconds a refused one is (`INTROSPECTION_REFUSAL_TTL`).
        cache_size: Accepted answers kept (`INTROSPECTION_CACHE_SIZE`).
        refusal_cache_size: Refused ones kept (`INTROSPECTION_REFUSAL_CACHE_SIZE`).
        timeout: Seconds a call may take in all (`INTROSPECTION_TIMEOUT`).
        ssl_context: The TLS context of the calls (default: the system's trust store).
        clock: Monotonic seconds, for the cache (a test's own clock).
        wall_clock: Seconds since the epoch, for ``exp`` and ``nbf`` (a test's own).

    Raises:
        ValueError: An endpoint that isn't HTTPS or holds credentials, no audience, no
            client id or secret, or an unknown ``client_auth``.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        audience: str | Sequence[str],
        issuer: str | None = None,
        client_auth: ClientAuthMethod = "client_secret_basic",
        leeway: float = INTROSPECTION_LEEWAY,
        cache_ttl: float = INTROSPECTION_CACHE_TTL,
        refusal_ttl: float = INTROSPECTION_REFUSAL_TTL,
        cache_size: int = INTROSPECTION_CACHE_SIZE,
        refusal_cache_size: int = INTROSPECTION_REFUSAL_CACHE_SIZE,
        timeout: float = INTROSPECTION_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        _check_endpoint(endpoint)
        if client_auth not in _CLIENT_AUTH_METHODS:
            raise ValueError(f"client_auth must be one of {_CLIENT_AUTH_METHODS}")
        if not client_id or not client_secret:
            raise ValueError("the endpoint needs the resource server's client id and secret")
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        if not self.audience:
            raise ValueError("tokens must be checked for this resource's audience")
        self.endpoint = endpoint
        self.issuer = issuer
        self.leeway = leeway
        self.cache_ttl = cache_ttl
        self.refusal_ttl = refusal_ttl
        self.timeout = timeout
        self._credentials = _ClientCredentials(client_id, client_secret, client_auth)
        self._ssl_context = ssl_context
        self._clock = clock
        self._wall_clock = wall_clock
        # A per-verifier key: a memory dump's digests can't be checked against guesses.
        self._hash_key = secrets.token_bytes(_DIGEST_SIZE)
        self._accepted = _Answers(cache_size)
        self._refused = _Answers(refusal_cache_size)
        self._flights: dict[bytes, _Flight] = {}

    def __repr__(self) -> str:
        """The endpoint and client id (never the secret)."""
        client_id = self._credentials.client_id
        return f"IntrospectionVerifier({self.endpoint!r}, client_id={client_id!r})"

    @property
    def cached(self) -> int:
        """How many answers are cached, accepted and refused."""
        return len(self._accepted) + len(self._refused)

    async def __call__(self, token: str) -> Principal | None:
        """Who ``token`` speaks for and its scopes, or None when it is not accepted."""
        key = hashlib.blake2b(
            token.encode("utf-8", "surrogatepass"), key=self._hash_key, digest_size=_DIGEST_SIZE
        ).digest()
        while True:
            now = self._clock()
            entry = self._accepted.get(key, now) or self._refused.get(key, now)
            if entry is not None:
                return entry.principal
            flight = self._flights.get(key)
            if flight is None:
                return await self._ask(key, token)
            await flight.done.wait()
            if flight.answered:
                return flight.principal
            # (the request that asked was cancelled before the answer: ask again)

    async def _ask(self, key: bytes, token: str) -> Principal | None:
        """Call the endpoint for ``token`` (the one call its concurrent requests share)."""
        flight = self._flights[key] = _Flight(primitives.Event())
        try:
            try:
                claims = await primitives.run_sync_in_thread(
                    lambda: introspect(
                        self.endpoint,
                        token,
                        self._credentials,
                        timeout=self.timeout,
                        ssl_context=self._ssl_context,
                    )
                )
            except IntrospectionFailedError as error:
                # (not cached: the next request asks again)
                _log.warning("introspection at %s: %s (token refused)", self.endpoint, error)
                principal = None
            else:
                principal = self._judge(key, claims)
            flight.principal, flight.answered = principal, True
            return principal
        finally:
            del self._flights[key]
            flight.done.set()

    def _judge(self, key: bytes, claims: Mapping[str, Any]) -> Principal | None:
        """The principal of an answer, or None, and either cached for its time."""
        now = self._clock()
        if claims.get("active") is not True:
            _log.info("introspection at %s: the token is not active", self.endpoint)
            self._refused.put(key, _Entry(None, now + self.refusal_ttl))
            return None
        wall_now = self._wall_clock()
        refusal = self._refusal(claims, wall_now)
        subject = _subject(claims)
        if refusal is None and subject is None:
            refusal = "the answer names no sub or client_id"
        if refusal is not None or subject is None:
            _log.warning("introspection at %s: active token refused: %s", self.endpoint, refusal)
            self._refused.put(key, _Entry(None, now + self.refusal_ttl))
            return None
        principal = Principal(subject, _scopes(claims))
        lifetime = self.cache_ttl
        expires = claims.get("exp")
        if _is_number(expires):
            lifetime = min(lifetime, expires - wall_now)  # (exp: when the token ends)
        self._accepted.put(key, _Entry(principal, now + lifetime))
        return principal

    def _refusal(self, claims: Mapping[str, Any], now: float) -> str | None:
        """Why an active token's answer is refused here, or None when it is not."""
        audiences = _audiences(claims)
        if not any(audience in self.audience for audience in audiences):
            return f"aud {audiences} does not hold this resource"
        issuer = claims.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            return f"iss {issuer!r} is not {self.issuer!r}"
        if "cnf" in claims or str(claims.get("token_type", "")).lower() == "dpop":
            # (RFC 9449 §6.2 and RFC 8705 §3.2 tell the binding by ``cnf``: this check
            # has no DPoP proof or client certificate to hold it against)
            return "the token is sender-constrained (cnf), shown as a bearer token"
        return _time_refusal(claims, now, self.leeway)


def _time_refusal(claims: Mapping[str, Any], now: float, leeway: float) -> str | None:
    """Why ``exp`` or ``nbf`` refuse the token at ``now``, or None."""
    expires, not_before = claims.get("exp"), claims.get("nbf")
    if expires is not None and (not _is_number(expires) or expires <= now - leeway):
        return "the token has expired (exp)"
    if not_before is not None and (not _is_number(not_before) or not_before > now + leeway):
        return "the token is not valid yet (nbf)"
    return None


def _check_endpoint(endpoint: str) -> None:
    """Refuse an endpoint that isn't HTTPS, or that holds credentials (they'd be logged)."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.username is not None or parts.password is not None:
        raise ValueError("give the credentials as client_id and client_secret, not in the URL")
    check_url(endpoint, "the introspection endpoint")
