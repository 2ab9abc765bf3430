"""What the OAuth flow asks its driver for, and what it gets back.

The flow (`mcpcore.auth.authorize`) is a generator: it yields one of these requests at a
time and is sent the answer (h11's rule, kept: the core decides, the driver does the IO).

* `Fetch` → a `Fetched`: one HTTP request, no redirect followed.
* `Redirect` → the redirect URL (a ``str``): the user-facing step of the authorization
  code grant; the driver shows `Redirect.url` and returns where the browser landed.
* `SignAssertion` → a ``str``: a JWT signed with the client's key (``private_key_jwt``,
  RFC 7523 §2.2), signed in the driver by a maintained JOSE library, never here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "MAX_METADATA_SIZE",
    "Fetch",
    "Fetched",
    "OAuthError",
    "Redirect",
    "SignAssertion",
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
