"""The MCP revisions we know, their eras, and legacy version negotiation.

Version strings are opaque identifiers: they are compared through the tables here,
never lexically (2026-07-28 basic/versioning). A string missing from the tables is
"not at least" any revision.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = [
    "ALL_VERSIONS",
    "BATCH_VERSIONS",
    "LATEST_LEGACY_VERSION",
    "LATEST_MODERN_VERSION",
    "LATEST_VERSION",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Era",
    "era_of",
    "is_at_least",
    "negotiate_legacy_version",
]


class Era(enum.Enum):
    """How a peer speaks MCP.

    ``LEGACY`` is 2024-11-05 … 2025-11-25: an ``initialize`` handshake scopes a session.
    ``MODERN`` is 2026-07-28 and later: no handshake, every request carries its own
    version and capabilities in ``params._meta``.
    """

    LEGACY = "legacy"
    MODERN = "modern"


#: Revisions reachable through the ``initialize`` handshake, oldest first.
LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Stateless revisions, oldest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Every revision, oldest first: the order `is_at_least` compares by.
ALL_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS

LATEST_LEGACY_VERSION = LEGACY_VERSIONS[-1]
LATEST_MODERN_VERSION = MODERN_VERSIONS[-1]
LATEST_VERSION = ALL_VERSIONS[-1]

#: JSON-RPC batches exist only in 2025-03-26: added then, removed by 2025-06-18.
BATCH_VERSIONS: frozenset[str] = frozenset({"2025-03-26"})

_ORDER = {version: index for index, version in enumerate(ALL_VERSIONS)}
_ERA = dict.fromkeys(LEGACY_VERSIONS, Era.LEGACY) | dict.fromkeys(MODERN_VERSIONS, Era.MODERN)


def era_of(version: str) -> Era | None:
    """The era of a known revision, or None for a string we don't know."""
    return _ERA.get(version)


def is_at_least(version: str, minimum: str) -> bool:
    """Whether ``version`` is ``minimum`` or newer. Unknown strings are never at least anything."""
    position = _ORDER.get(version)
    return position is not None and position >= _ORDER[minimum]


def negotiate_legacy_version(requested: str, supported: Iterable[str]) -> str | None:
    """The version a server answers an ``initialize`` with.

    "If the server supports the requested protocol version, it MUST respond with the
    same version. Otherwise, the server MUST respond with another protocol version it
    supports. This SHOULD be the latest version supported by the server."
    (2024-11-05 basic/lifecycle). None when we support no handshake revision at all.
    """
    legacy = [version for version in supported if era_of(version) is Era.LEGACY]
    if requested in legacy:
        return requested
    return max(legacy, key=_ORDER.__getitem__, default=None)
