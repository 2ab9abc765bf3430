"""``private_key_jwt`` client assertions (RFC 7523 §2.2), signed by PyJWT.

JOSE is a maintained library's job, never ours: PyJWT (with cryptography for the EC, RSA
and EdDSA keys) signs the claims `mcpcore.auth` chose. Needs the ``oauth`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping

import jwt

from mcpcore.auth import OAuthError

__all__ = ["sign_assertion"]


def sign_assertion(claims: Mapping[str, object], private_key: str, algorithm: str) -> str:
    """The compact JWS of ``claims``, signed with the PEM ``private_key``.

    Raises:
        OAuthError: The key or the algorithm is unusable (the key is never shown).
    """
    try:
        return jwt.encode(dict(claims), private_key, algorithm=algorithm)
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise OAuthError(
            f"signing the client assertion with {algorithm} failed ({type(exc).__name__})"
        ) from None
