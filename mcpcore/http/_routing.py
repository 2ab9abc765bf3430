"""Which era an HTTP request belongs to, read from its ``MCP-Protocol-Version`` header.

A dual-era server serves both on one endpoint and routes "as the Python SDK does"
(CHECKLIST §6.1): a missing header or one of the handshake revisions goes to the
legacy session transport; any other value goes to the stateless 2026-07-28 handler,
unknown strings such as ``v999.0.0`` included, so that the handler answers them with
the structured -32022 rejection instead of a legacy 400 (CONFORMANCE §4.2, trap 10.2-7).
"""

from __future__ import annotations

from typing import Final

from mcpcore.versions import LEGACY_VERSIONS, Era

__all__ = ["DEFAULT_LEGACY_VERSION", "legacy_version", "route_for"]

#: "If it is absent and there is no other signal, (S) SHOULD assume 2025-03-26"
#: (2025-06-18 basic/transports).
DEFAULT_LEGACY_VERSION: Final = "2025-03-26"
_LEGACY_HEADER_VALUES: Final = frozenset(LEGACY_VERSIONS)
# Optional whitespace around a field value is not part of it (RFC 9110 §5.5).
_OWS: Final = " \t"


def route_for(protocol_version: str | None) -> Era:
    """The era that serves a request whose ``MCP-Protocol-Version`` header is this value.

    Args:
        protocol_version: The header's value, or None when the request had none.
    """
    if protocol_version is None:
        return Era.LEGACY
    value = protocol_version.strip(_OWS)
    return Era.LEGACY if value in _LEGACY_HEADER_VALUES else Era.MODERN


def legacy_version(protocol_version: str | None) -> str:
    """The revision a legacy request speaks: its header, or `DEFAULT_LEGACY_VERSION`."""
    if protocol_version is None:
        return DEFAULT_LEGACY_VERSION
    return protocol_version.strip(_OWS)
