"""DPoP (RFC 9449; MCP's ``io.modelcontextprotocol/auth/dpop`` extension, SEP-1932), sans-IO.

A DPoP proof is a JWT the client signs with its own key for one HTTP request: the
authorization server binds the access token to that key (``cnf.jkt``), and the resource
server accepts the token only with a fresh proof of the same key. Signing is the driver's
(a maintained JOSE library, one key pair per `transports.OAuth`); what goes in a proof,
when one is needed and what a nonce challenge means are decided here:

* `SignProof` asks the driver for a proof of one request; `SignProof.claims` builds the
  claims once the driver has drawn a ``jti`` and read the clock (RFC 9449 §4.2).
* `use_dpop` says whether to ask for DPoP-bound tokens (the server's metadata
  advertises ``dpop_signing_alg_values_supported`` with our algorithm, unless told).
* `nonce_challenge` reads an authorization server's ``use_dpop_nonce`` refusal (§8).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from mcpcore.auth._discovery import decode_object
from mcpcore.auth._messages import Fetched, OAuthError

__all__ = [
    "DPOP_ALGORITHM",
    "MAX_NONCE_RETRIES",
    "SignProof",
    "access_token_hash",
    "nonce_challenge",
    "proof_target",
    "use_dpop",
]

#: The JWS algorithm of our proofs: ES256 is the one every DPoP server supports (it is
#: the example of RFC 9449 §4.2 and the MCP extension's baseline).
DPOP_ALGORITHM: Final = "ES256"
#: Token requests sent again with a server's nonce after a ``use_dpop_nonce`` answer:
#: "the client ... retries the request with the supplied nonce" (RFC 9449 §8) — once;
#: a server refusing its own fresh nonce will refuse it again.
MAX_NONCE_RETRIES: Final = 1
_USE_DPOP_NONCE: Final = "use_dpop_nonce"
_NONCE_HEADER: Final = "dpop-nonce"


@dataclass(frozen=True, kw_only=True, slots=True)
class SignProof:
    """Sign a DPoP proof (RFC 9449 §4.2) of one request; answer the compact JWT.

    The driver signs `claims` with its key, the public key in the ``jwk`` header and
    ``typ`` ``dpop+jwt``.

    Attributes:
        method: The request's method (``htm``).
        url: The request's URL; its query and fragment are left out of ``htu``.
        nonce: The server's latest ``DPoP-Nonce``, if it gave one.
        access_token: The token the request carries, at a resource server (``ath``).
    """

    method: str
    url: str
    nonce: str | None = None
    access_token: str | None = field(default=None, repr=False)

    def claims(self, *, jti: str, now: float) -> dict[str, object]:
        """The proof's claims, given a fresh unguessable ``jti`` and the time."""
        claims: dict[str, object] = {
            "jti": jti,
            "htm": self.method,
            "htu": proof_target(self.url),
            "iat": int(now),
        }
        if self.nonce is not None:
            claims["nonce"] = self.nonce
        if self.access_token is not None:
            claims["ath"] = access_token_hash(self.access_token)
        return claims


def proof_target(url: str) -> str:
    """``htu``: the URL "without query and fragment parts" (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def access_token_hash(access_token: str) -> str:
    """``ath``: base64url of the SHA-256 of the token's ASCII, unpadded (RFC 9449 §4.2)."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def use_dpop(metadata: Mapping[str, Any], setting: bool | None) -> bool:
    """Whether to ask this authorization server for DPoP-bound tokens.

    ``setting`` None: when its metadata lists our algorithm in
    ``dpop_signing_alg_values_supported`` (RFC 9449 §5.1); True or False: as told.
    """
    if setting is not None:
        return setting
    advertised = metadata.get("dpop_signing_alg_values_supported")
    return isinstance(advertised, list) and DPOP_ALGORITHM in advertised


def nonce_challenge(answer: Fetched) -> str | None:
    """The nonce an authorization server's ``use_dpop_nonce`` answer supplies, else None.

    "the authorization server responds with an HTTP 400 ... error code use_dpop_nonce
    ... [and] a DPoP-Nonce HTTP header" (RFC 9449 §8).
    """
    nonce = answer.headers.get(_NONCE_HEADER)
    if answer.status != 400 or not nonce:
        return None
    try:
        error = decode_object(answer.body, "token error response").get("error")
    except OAuthError:
        return None
    return nonce if error == _USE_DPOP_NONCE else None
