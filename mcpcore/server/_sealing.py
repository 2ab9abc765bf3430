"""Integrity protection for what the client echoes back: pagination cursors and MRTR state.

"(S) MUST treat requestState as attacker-controlled. If it influences authorization,
resource access or business logic, (S) MUST integrity-protect it (HMAC or AEAD) and MUST
reject state that fails verification" (2026-07-28 basic/patterns/mrtr); cursors must
not let a client "forge" another position. Both are sealed the same way:
``base64url(payload) "." base64url(HMAC-SHA256(key, purpose NUL payload))``, with a
separate purpose string for each use so that a cursor can never pass as a state.

Sealing is not encryption: the payload is readable. Nothing secret goes into it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Final

__all__ = ["MAX_SEALED_SIZE", "MIN_SECRET_SIZE", "Sealer", "TamperedError"]

#: The longest sealed token accepted. A request state carries the answers of earlier
#: rounds (elicitation forms, sampled messages), so it must hold a few KiB; anything
#: beyond this is refused before any work is done on it.
MAX_SEALED_SIZE: Final = 256 * 1024
#: A shorter key would make the HMAC guessable; 32 bytes matches SHA-256.
MIN_SECRET_SIZE: Final = 32


_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]*")


class TamperedError(ValueError):
    """A sealed token failed verification: malformed, too long, or not ours."""


class Sealer:
    """Seals and opens payloads with one secret key."""

    __slots__ = ("_key",)

    def __init__(self, secret: bytes) -> None:
        if len(secret) < MIN_SECRET_SIZE:
            raise ValueError(f"the secret must be at least {MIN_SECRET_SIZE} bytes")
        self._key = secret

    def seal(self, purpose: bytes, payload: bytes) -> str:
        """The token carrying ``payload``, valid for ``purpose`` only."""
        digest = hmac.digest(self._key, purpose + b"\0" + payload, hashlib.sha256)
        return f"{_b64(payload)}.{_b64(digest)}"

    def open(self, purpose: bytes, token: str) -> bytes:
        """The payload of a token sealed for ``purpose``; `TamperedError` otherwise."""
        if len(token) > MAX_SEALED_SIZE or token.count(".") != 1:
            raise TamperedError("malformed token")
        encoded_payload, encoded_digest = token.split(".")
        try:
            payload = _unb64(encoded_payload)
            digest = _unb64(encoded_digest)
        except ValueError:
            raise TamperedError("malformed token") from None
        expected = hmac.digest(self._key, purpose + b"\0" + payload, hashlib.sha256)
        if not hmac.compare_digest(digest, expected):
            raise TamperedError("token failed verification")
        return payload


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    # The decoder silently skips characters outside the alphabet; refuse them instead.
    if _BASE64URL.fullmatch(text) is None:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
