"""DNS-rebinding protection: is a request's ``Host``, and its ``Origin`` if any, one we serve?

A web page on ``evil.example`` can make a browser send requests to a local MCP server
once its DNS name resolves to 127.0.0.1 (DNS rebinding). Two checks stop it:

* ``Origin``: "(S) MUST validate Origin on every incoming connection; a present and
  invalid Origin → MUST return 403" (2025-11-25 and 2026-07-28 basic/transports). A
  missing ``Origin`` is a non-browser client and is allowed.
* ``Host``: the rebound request still names the attacker's host, so a server that only
  answers to its own names is safe even from pages that send no ``Origin``. The Python
  SDK answers a bad ``Host`` with 421 Misdirected Request, and so do we.

By default only the loopback names are served, on any port: ``localhost``,
``127.0.0.1`` and ``[::1]`` (CONFORMANCE trap 10.2-6). An allowed host is a name (any
port) or ``name:port`` (that port only); ``*`` allows every host (for servers behind
a proxy that checks it). Allowed origins are exact ``scheme://host[:port]`` strings;
an ``Origin`` whose host is an allowed host is allowed too, on http and https.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "MISDIRECTED_STATUS",
    "ORIGIN_REJECTED_STATUS",
    "OriginPolicy",
    "split_host",
]

#: The loopback names, on any port.
DEFAULT_ALLOWED_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
#: A ``Host`` we do not serve (RFC 9110 §15.5.20; the Python SDK's choice).
MISDIRECTED_STATUS: Final = 421
#: "A present-and-invalid Origin → MUST return 403" (2025-11-25 basic/transports).
ORIGIN_REJECTED_STATUS: Final = 403
_ANY: Final = "*"
_WEB_SCHEMES: Final = ("http://", "https://")


def split_host(authority: str) -> tuple[str, str | None]:
    """``host[:port]`` → (lower-cased host, port or None); IPv6 hosts keep their brackets.

    A malformed authority comes back as a host that matches nothing (``""``).
    """
    authority = authority.strip().lower()
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return "", None
        host, rest = authority[: end + 1], authority[end + 1 :]
        if not rest:
            return host, None
        if not rest.startswith(":"):
            return "", None
        port = rest[1:]
    else:
        host, colon, port = authority.partition(":")
        if not colon:
            return host, None
    if not port.isdigit():
        return "", None
    return host, port


def _authority_allowed(authority: str, hosts: frozenset[str], ports: frozenset[str]) -> bool:
    host, port = split_host(authority)
    if not host:
        return False
    return host in hosts or (port is not None and f"{host}:{port}" in ports)


class OriginPolicy:
    """The hosts and origins a server answers to (see the module docstring).

    Immutable: the entries are normalised once, here, and only read afterwards.

    Args:
        allowed_hosts: Host names (any port) or ``name:port`` entries; ``"*"`` allows
            every ``Host``.
        allowed_origins: Exact ``Origin`` values allowed besides those on an allowed host.
    """

    __slots__ = (
        "_allowed_hosts",
        "_allowed_origins",
        "_any_host",
        "_host_ports",
        "_hosts",
        "_origins",
    )

    def __init__(
        self,
        allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS,
        allowed_origins: Iterable[str] = (),
    ) -> None:
        entries = tuple(entry.strip().lower() for entry in allowed_hosts)
        self._allowed_hosts: Final = entries
        self._allowed_origins: Final = tuple(allowed_origins)
        self._any_host: Final = _ANY in entries
        self._hosts: Final = frozenset(e for e in entries if split_host(e)[1] is None)
        self._host_ports: Final = frozenset(e for e in entries if split_host(e)[1] is not None)
        self._origins: Final = frozenset(
            origin.strip().lower().rstrip("/") for origin in self._allowed_origins
        )

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        """The allowed host entries, lower-cased and stripped."""
        return self._allowed_hosts

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        """The allowed ``Origin`` values, as given."""
        return self._allowed_origins

    def __repr__(self) -> str:
        return (
            f"OriginPolicy(allowed_hosts={self._allowed_hosts!r}, "
            f"allowed_origins={self._allowed_origins!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OriginPolicy):
            return NotImplemented
        return (self._allowed_hosts, self._allowed_origins) == (
            other._allowed_hosts,
            other._allowed_origins,
        )

    def __hash__(self) -> int:
        return hash((self._allowed_hosts, self._allowed_origins))

    def host_allowed(self, host: str | None) -> bool:
        """Whether a request with this ``Host`` header is for us (None: it had none)."""
        if self._any_host:
            return True
        return host is not None and _authority_allowed(host, self._hosts, self._host_ports)

    def origin_allowed(self, origin: str | None) -> bool:
        """Whether a request with this ``Origin`` header may be served (None: none sent)."""
        if origin is None:
            return True
        value = origin.strip().lower()
        if value in self._origins:
            return True
        for scheme in _WEB_SCHEMES:
            if value.startswith(scheme):
                authority = value[len(scheme) :]
                if "/" in authority:  # an Origin is scheme://host[:port], nothing more
                    return False
                return self._any_host or _authority_allowed(
                    authority, self._hosts, self._host_ports
                )
        return False  # "null", or a scheme no page of ours has

    def refusal(self, host: str | None, origin: str | None) -> int | None:
        """The status refusing the request (421 bad Host, 403 bad Origin), or None."""
        if not self.host_allowed(host):
            return MISDIRECTED_STATUS
        if not self.origin_allowed(origin):
            return ORIGIN_REJECTED_STATUS
        return None
