"""A `TokenVerifier` for JWT access tokens, checked against the issuer's JWKS.

"MCP servers MUST validate that access tokens were issued specifically for them as
the intended audience" (2025-06-18 basic/authorization, Token Handling): a token is
accepted when, and only when,

* its signature verifies with a key of the issuer's JSON Web Key Set (RFC 7517), under
  one of the asymmetric algorithms allowed (never ``none``, never an HMAC one: a public
  key is public, and taking it as an HMAC secret is the classic confusion);
* ``iss`` is the issuer, ``aud`` holds this resource (RFC 8707: the canonical URL of
  the MCP endpoint), ``exp`` is in the future and ``nbf`` in the past, give or take
  `JWT_LEEWAY`, and ``sub`` names the subject (RFC 9068 §2.2);
* it is not sender-constrained (no ``cnf``: a DPoP- or mTLS-bound token is good only
  with its holder's proof, which a bearer check can't see; RFC 9449 §6.1, RFC 8705 §3.1).

The scopes come from ``scope`` (a space-separated string, RFC 9068 / RFC 8693) or
``scp`` (a list, as Entra ID and Okta send it); `BearerAuth` answers a token without a
required one with 403 ``insufficient_scope``. PyJWT and cryptography do every JOSE
step; this module only picks the key and the rules.

The key set is fetched over HTTPS (plain HTTP only on a loopback host, for an
authorization server on the same machine), at most `MAX_JWKS_SIZE` bytes within
`JWKS_FETCH_TIMEOUT` seconds, in a worker thread so that the event loop never waits on
it; it is kept `JWKS_CACHE_TTL` seconds, and fetched again early for a token naming an
unknown key (the issuer rotated its keys), but never more often than every
`JWKS_REFETCH_INTERVAL` seconds: tokens with made-up ``kid`` values can't make us flood
the issuer. A fetch that fails keeps the keys already known.
"""

from __future__ import annotations

import http.client
import json
import logging
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import jwt

from mcpcore.auth import as_metadata_urls
from transports._net.auth import Principal
from transports._net.backchannel import CLOCK_LEEWAY, LOGGER_NAME, check_url, read_bounded
from transports._runtime import primitives

__all__ = [
    "DEFAULT_ALGORITHMS",
    "JWKS_CACHE_TTL",
    "JWKS_FETCH_TIMEOUT",
    "JWKS_REFETCH_INTERVAL",
    "JWT_LEEWAY",
    "MAX_JWKS_SIZE",
    "JwtVerifier",
    "discover_jwks_url",
]

#: The algorithms accepted unless told otherwise: RS256 is the one every OAuth/OIDC
#: provider supports (OIDC Core §15.1 makes it mandatory), ES256 the common elliptic one.
DEFAULT_ALGORITHMS: Final = ("RS256", "ES256")
#: The asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037) and the JWK key type
#: (``kty``) each needs. What is not here (``none``, ``HS*``) can't be allowed.
KEY_TYPES: Final = {
    "RS256": "RSA",
    "RS384": "RSA",
    "RS512": "RSA",
    "PS256": "RSA",
    "PS384": "RSA",
    "PS512": "RSA",
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
#: Seconds of clock skew forgiven on ``exp``, ``nbf`` and ``iat`` (`CLOCK_LEEWAY`: 30 s).
JWT_LEEWAY: Final = CLOCK_LEEWAY
#: Seconds a fetched key set is used before it is fetched again. PyJWT's `PyJWKClient`
#: keeps one 300 s too: keys rotate over days, and a removed key stops working within
#: five minutes.
JWKS_CACHE_TTL: Final = 300.0
#: Seconds at least between two fetches of the key set (a token naming a key not in it
#: asks for one): one round trip to the issuer per 10 s at worst, however many tokens
#: with made-up ``kid`` values arrive, and a new key is found within 10 s.
JWKS_REFETCH_INTERVAL: Final = 10.0
#: Seconds a fetch may take: each step (connecting, TLS, each read) times out after as
#: long, and the body must be whole by then, so that a dribbling issuer holds a worker
#: thread twice this at most.
JWKS_FETCH_TIMEOUT: Final = 10.0
#: Bytes a key set may have. The large real ones (with ``x5c`` certificate chains, and
#: several keys during a rotation) are tens of KiB; a body past this is refused, not read.
MAX_JWKS_SIZE: Final = 256 * 1024

#: Claims a token must carry (RFC 9068 §2.2 requires them of JWT access tokens).
_REQUIRED_CLAIMS: Final = ["exp", "iss", "aud", "sub"]
_log = logging.getLogger(LOGGER_NAME)


class JwksUnavailableError(Exception):
    """The key set could not be fetched or read (the reason stays in this process)."""


@dataclass(frozen=True, slots=True)
class _Key:
    """One verification key of the set."""

    key_type: str
    #: The one algorithm the key may be used with (its ``alg``, or what its curve fixes),
    #: or None when its type's algorithms are all allowed (an RSA key without ``alg``).
    algorithm: str | None
    key: Any


def _check_url(url: str) -> None:
    """Refuse a key-set URL that isn't HTTPS (or plain HTTP to a loopback host)."""
    check_url(url, "the JWKS URL")


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects only to where the key set could have been configured (no downgrade)."""

    def redirect_request(  # noqa: PLR0917 (urllib's signature)
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        _check_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_jwks(
    url: str, *, timeout: float, ssl_context: ssl.SSLContext | None
) -> Mapping[str, Any]:
    """GET the key set at ``url`` (blocking: run it in a thread); its JSON object.

    Raises:
        JwksUnavailableError: The fetch failed, took too long, or the body is too
            large or not a JSON object.
    """
    document = _fetch_json(url, "the key set", timeout=timeout, ssl_context=ssl_context)
    if not isinstance(document.get("keys"), list):
        raise JwksUnavailableError("the key set is not a JWK Set (RFC 7517 §5)")
    return document


def discover_jwks_url(issuer: str, *, timeout: float, ssl_context: ssl.SSLContext | None) -> str:
    """The issuer's ``jwks_uri``, from its metadata (blocking: run it in a thread).

    The metadata is looked for where 2025-11-25 basic/authorization has clients look
    (RFC 8414 then OpenID Connect Discovery, path-inserted for an issuer with a path);
    the first document found must name ``issuer`` as its ``issuer`` ("MUST be
    identical", RFC 8414 §3.3), or a server could hand us another issuer's keys.

    Raises:
        JwksUnavailableError: No metadata found, or it is not the issuer's, or its
            ``jwks_uri`` is missing or not HTTPS.
    """
    for url in as_metadata_urls(issuer):
        try:
            document = _fetch_json(url, "the metadata", timeout=timeout, ssl_context=ssl_context)
        except JwksUnavailableError:
            continue  # (a 404 here: the next location may have it)
        if document.get("issuer") != issuer:
            raise JwksUnavailableError(f"the metadata at {url} is not the issuer's")
        jwks_url = document.get("jwks_uri")
        if not isinstance(jwks_url, str):
            raise JwksUnavailableError(f"the metadata at {url} has no jwks_uri")
        try:
            _check_url(jwks_url)
        except ValueError as error:
            raise JwksUnavailableError(str(error)) from None
        return jwks_url
    raise JwksUnavailableError("the issuer publishes no metadata (RFC 8414 / OIDC)")


def _fetch_json(
    url: str, what: str, *, timeout: float, ssl_context: ssl.SSLContext | None
) -> dict[str, Any]:
    """GET the JSON object at ``url``, bounded in size (`MAX_JWKS_SIZE`) and time."""
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=ssl_context), _CheckedRedirects()
    )
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with opener.open(request, timeout=timeout) as response:
            body = read_bounded(response, MAX_JWKS_SIZE, deadline)
        document = json.loads(body)
    except (OSError, http.client.HTTPException, ValueError) as error:
        # (urllib's errors and timeouts are OSErrors, a bad JSON body or one past the
        # cap a ValueError)
        if isinstance(error, urllib.error.HTTPError):
            error.close()  # (it holds the response open)
        raise JwksUnavailableError(f"{what} could not be fetched: {error}") from error
    if not isinstance(document, dict):
        raise JwksUnavailableError(f"{what} is not a JSON object")
    return document


def parse_jwks(document: Mapping[str, Any]) -> dict[str | None, _Key]:
    """The usable signature keys of a JWK Set, by ``kid`` (None: the one key without).

    Keys for encryption (``use`` other than ``sig``), symmetric keys and keys PyJWT
    can't load are left out, as RFC 7517 §5 lets a reader do with keys it doesn't
    understand.
    """
    keys: dict[str | None, _Key] = {}
    for data in document["keys"]:
        if not isinstance(data, dict) or data.get("use", "sig") != "sig":
            continue
        key_type = data.get("kty")
        algorithm = data.get("alg")
        if not isinstance(key_type, str) or key_type not in KEY_TYPES.values():
            continue
        if algorithm not in (None, *KEY_TYPES):
            continue
        try:
            loaded = jwt.PyJWK(data)
        except (jwt.PyJWTError, ValueError, TypeError):
            continue
        if algorithm is None and key_type != "RSA":
            algorithm = loaded.algorithm_name  # (an EC key's curve fixes its algorithm)
        kid = data.get("kid")
        keys[kid if isinstance(kid, str) else None] = _Key(key_type, algorithm, loaded.key)
    return keys


class _KeyCache:
    """The key set, fetched when stale or missing a key, shared by threads."""

    def __init__(
        self,
        fetch: Callable[[], Mapping[str, Any]],
        *,
        ttl: float,
        refetch_interval: float,
        clock: Callable[[], float],
    ) -> None:
        self._fetch = fetch
        self._ttl = ttl
        self._refetch_interval = refetch_interval
        self._clock = clock
        self._lock = threading.Lock()  # (one fetch at a time: the others wait for it)
        self._keys: dict[str | None, _Key] = {}
        self._fetched_at = -float("inf")
        self._tried_at = -float("inf")

    def key(self, kid: str | None) -> _Key | None:
        """The key named ``kid`` (a key set of one key serves a token naming none)."""
        keys = self._keys
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        return keys.get(kid)

    def wants_fetch(self, kid: str | None) -> bool:
        """Whether to fetch before checking a token naming ``kid``."""
        now = self._clock()
        if now - self._tried_at < self._refetch_interval:
            return False
        return now - self._fetched_at >= self._ttl or self.key(kid) is None

    def refresh(self, kid: str | None) -> None:
        """Fetch the key set if still wanted (blocking: call it in a worker thread)."""
        with self._lock:
            if not self.wants_fetch(kid):
                return  # (another thread fetched it meanwhile)
            self._tried_at = self._clock()
            try:
                keys = parse_jwks(self._fetch())
            except JwksUnavailableError:
                return  # (the keys known are kept; another try after the interval)
            self._keys = keys
            self._fetched_at = self._tried_at


class JwtVerifier:
    """Checks JWT access tokens against an issuer's JWKS: a `TokenVerifier`.

    Use it as `BearerAuth`'s ``verify`` (or let `BearerAuth.jwt` build both). An
    invalid token of any kind is None (401, and nothing about why reaches the client);
    the scopes a valid one grants are `BearerAuth`'s to check (403).

    Args:
        jwks_url: The issuer's key set (its metadata's ``jwks_uri``): ``https://``, or
            ``http://`` to a loopback host. None (the default): read from the issuer's
            metadata (`discover_jwks_url`) at the first fetch, and again at each
            fetch until found.
        issuer: The ``iss`` tokens must carry (the authorization server's issuer URL;
            ``https://``, or ``http://`` to a loopback host, when the key set is
            discovered from it).
        audience: This resource's canonical URL (``https://host/mcp``), which ``aud``
            must hold; or several (tokens holding any one are accepted).
        algorithms: The JWS algorithms accepted, asymmetric ones only (`KEY_TYPES`).
        leeway: Seconds of clock skew forgiven (`JWT_LEEWAY`).
        cache_ttl: Seconds the key set is used before it is fetched again.
        refetch_interval: Seconds at least between two fetches.
        fetch_timeout: Seconds a fetch may take in all.
        ssl_context: The TLS context of the fetch (default: the system's trust store).
        clock: Monotonic seconds, for the cache (a test's own clock).

    Raises:
        ValueError: An algorithm that isn't asymmetric, no audience, or a URL that isn't
            HTTPS.
    """

    def __init__(
        self,
        *,
        jwks_url: str | None = None,
        issuer: str,
        audience: str | Sequence[str],
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = JWT_LEEWAY,
        cache_ttl: float = JWKS_CACHE_TTL,
        refetch_interval: float = JWKS_REFETCH_INTERVAL,
        fetch_timeout: float = JWKS_FETCH_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_url(issuer if jwks_url is None else jwks_url)
        self.algorithms = frozenset(algorithms)
        unsafe = sorted(self.algorithms - KEY_TYPES.keys())
        if unsafe or not self.algorithms:
            raise ValueError(f"only asymmetric JWS algorithms can be allowed, not {unsafe}")
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        if not self.audience:
            raise ValueError("tokens must be checked for this resource's audience")
        #: The key set's URL: None until discovered, when not given.
        self.jwks_url = jwks_url
        self.issuer = issuer
        self.leeway = leeway

        def fetch() -> Mapping[str, Any]:
            # (in a worker thread, under the key cache's lock: one fetch at a time)
            url = self.jwks_url
            try:
                if url is None:
                    url = issuer
                    url = self.jwks_url = discover_jwks_url(
                        issuer, timeout=fetch_timeout, ssl_context=ssl_context
                    )
                return fetch_jwks(url, timeout=fetch_timeout, ssl_context=ssl_context)
            except JwksUnavailableError as error:
                _log.warning("JWKS %s: %s (the keys known are kept)", url, error)
                raise

        self._keys = _KeyCache(fetch, ttl=cache_ttl, refetch_interval=refetch_interval, clock=clock)

    async def __call__(self, token: str) -> Principal | None:
        """Who ``token`` speaks for and its scopes, or None when it is not accepted."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm = header.get("alg")
        kid = header.get("kid")
        if algorithm not in self.algorithms or not isinstance(kid, (str, type(None))):
            return None  # (before any fetch: ``none`` and HS256 stop here)
        keys = self._keys
        if keys.wants_fetch(kid):
            await primitives.run_sync_in_thread(lambda: keys.refresh(kid))
        key = keys.key(kid)
        if key is None or KEY_TYPES[algorithm] != key.key_type:
            return None
        if key.algorithm not in (None, algorithm):
            return None
        return self._principal(token, key.key, algorithm)

    def _principal(self, token: str, key: Any, algorithm: str) -> Principal | None:
        """Verify the signature and the claims with ``key``; the `Principal`."""
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": _REQUIRED_CLAIMS, "enforce_minimum_key_length": True},
            )
        except jwt.PyJWTError:
            return None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            return None
        if "cnf" in claims:
            # Sender-constrained (RFC 9449 §6.1 DPoP's cnf.jkt, RFC 8705 §3.1 mTLS's
            # cnf.x5t#S256): only its holder's proof makes it good, and a bearer check
            # can't see one. Shown as a bearer token, it is likely stolen.
            return None
        return Principal(subject, _scopes(claims))


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes of ``scope`` (space-separated) and ``scp`` (a list, or a string)."""
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(item for item in value if isinstance(item, str))
    return frozenset(found)
