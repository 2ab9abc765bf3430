"""What the OAuth flow asks its driver for, and what it gets back.

The flow (`mcpcore.auth.authorize`) is a generator: it yields one of these requests at a
time and is sent the answer (h11's rule, kept: the core decides, the driver does the IO).

* `Fetch` → a `Fetched`: one HTTP request, no redirect followed.
* `Redirect` → the redirect URL (a ``str``): the user-facing step of the authorization
  code grant; the driver shows `Redirect.url` and returns where the browser landed.
* `SignAssertion` → a ``str``: a JWT signed with the client's key (``private_key_jwt``,
  RFC 7523 §2.2), signed in the driver by a maintained JOSE library, never here.

The flow starts with `FlowInputs`: the randomness and the clock the driver drew.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "MAX_METADATA_SIZE",
    "Fetch",
    "Fetched",
    "FlowInputs",
    "OAuthError",
    "Redirect",
    "SignAssertion",
    "answered",
]

#: Bytes of a metadata document, registration or token response read at most. Real ones
#: are a few kilobytes (Keycloak's and Okta's AS metadata are under 8 KB); anything
#: bigger is not metadata, and a hostile server gets no more memory than this.
MAX_METADATA_SIZE: Final = 64 * 1024


class OAuthError(Exception):
    """The authorization failed, or was refused for the user's safety.

    The message names the step and the reason; it never carries a secret (a client
    secret, a code, a token) — only what the servers published.
    """


@dataclass(frozen=True, kw_only=True, slots=True)
class Fetch:
    """An HTTP request to make (redirects are not followed).

    Attributes:
        method: ``"GET"`` or ``"POST"``.
        url: The absolute URL.
        headers: Request headers (``Accept``, ``Content-Type``, ``Authorization``).
        body: The request body.
    """

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def __repr__(self) -> str:
        # (The body and headers may hold a client secret or a code: never shown.)
        return f"Fetch({self.method} {self.url})"


@dataclass(frozen=True, kw_only=True, slots=True)
class Fetched:
    """The answer to a `Fetch`.

    Attributes:
        status: The HTTP status.
        headers: Response headers, names lower-case.
        body: The body, at most `MAX_METADATA_SIZE` bytes (the driver's limit).
    """

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def __repr__(self) -> str:
        return f"Fetched({self.status})"


@dataclass(frozen=True, kw_only=True, slots=True)
class Redirect:
    """Send the user to ``url``; answer with the redirect URL the browser came back to.

    Attributes:
        url: The authorization request (RFC 6749 §4.1.1), with PKCE and ``resource``.
    """

    url: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SignAssertion:
    """Sign a client assertion (RFC 7523 §3) for ``private_key_jwt``; answer the JWT.

    Attributes:
        claims: The JWT claims (``iss``, ``sub``, ``aud``, ``iat``, ``exp``, ``jti``).
    """

    claims: Mapping[str, object]


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowInputs:
    """The flow's randomness and clock, drawn by the driver.

    Attributes:
        code_verifier: PKCE verifier: 43 to 128 unreserved characters of high entropy
            (RFC 7636 §4.1; ``secrets.token_urlsafe(48)``).
        state: The ``state`` value, unguessable.
        jti: A unique id for a client assertion.
        now: Seconds since the epoch.
        dpop_nonces: The latest ``DPoP-Nonce`` each authorization server gave, by token
            endpoint: the first proof of a token request carries it ("the client uses
            the new nonce value ... for subsequent requests", RFC 9449 §8), so a server
            that wants nonces does not refuse every token request once.
    """

    code_verifier: str = field(repr=False)
    state: str = field(repr=False)
    jti: str = ""
    now: float = 0.0
    dpop_nonces: Mapping[str, str] = field(default_factory=dict)


def answered(answer: Fetched | str) -> Fetched:
    """``answer`` as the `Fetched` a `Fetch` is answered with (a driver's bug, else)."""
    if not isinstance(answer, Fetched):
        raise TypeError("a Fetch is answered with a Fetched")
    return answer
