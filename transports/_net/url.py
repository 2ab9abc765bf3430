"""The server's URL, split once into what each request needs (host, port, target, Host).

Only ``http`` and ``https`` URLs are accepted. The legacy HTTP+SSE transport names its
POST endpoint in an ``endpoint`` event; `HttpUrl.join` resolves it, and the client
refuses one on another origin: the endpoint comes from the server, and following it
elsewhere would send our messages (and our bearer token) to a host we never chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple
from urllib.parse import urljoin, urlsplit

__all__ = ["HttpUrl", "UrlParts", "host_header", "parse_url", "split_url"]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class HttpUrl:
    """An ``http`` or ``https`` URL, split for the requests made to it.

    Attributes:
        text: The URL as given.
        scheme: ``"http"`` or ``"https"``.
        host: The host name or IP address (an IPv6 address without brackets).
        port: The port, the scheme's default when the URL names none.
        target: The request target: the path (``/`` when empty) and the query.
    """

    text: str
    scheme: str
    host: str
    port: int
    target: str

    @property
    def is_tls(self) -> bool:
        """Whether requests go over TLS (``https``)."""
        return self.scheme == "https"

    @property
    def authority(self) -> str:
        """The ``Host`` header's value: the host, and the port unless it is the default."""
        return host_header(self.host, self.port, _DEFAULT_PORTS[self.scheme])

    @property
    def origin(self) -> tuple[str, str, int]:
        """The URL's origin (RFC 6454): scheme, lower-cased host, port."""
        return (self.scheme, self.host.lower(), self.port)

    def join(self, reference: str) -> HttpUrl:
        """Resolve ``reference`` (absolute or relative) against this URL.

        Raises:
            ValueError: It is not an ``http(s)`` URL, or not on this URL's origin.
        """
        joined = parse_url(urljoin(self.text, reference))
        if joined.origin != self.origin:
            raise ValueError(f"{reference!r} is not on the server's origin")
        return joined


def parse_url(url: str) -> HttpUrl:
    """Split an ``http`` or ``https`` URL.

    Raises:
        ValueError: Another scheme, no host, a bad port, or user info (credentials in
            a URL are refused: pass them as ``headers`` or ``auth``).
    """
    parts = split_url(url, _DEFAULT_PORTS, credentials_go_in="headers= or auth=")
    return HttpUrl(
        text=url, scheme=parts.scheme, host=parts.host, port=parts.port, target=parts.target
    )


class UrlParts(NamedTuple):
    """What `split_url` found in a URL."""

    scheme: str
    host: str
    port: int
    target: str
    fragment: str


def split_url(url: str, default_ports: Mapping[str, int], *, credentials_go_in: str) -> UrlParts:
    """Split a URL whose scheme is one of ``default_ports``' (HTTP's, or WebSocket's).

    The target is the path (``/`` when empty) and the query; the port is the scheme's
    default when the URL names none.

    Raises:
        ValueError: Another scheme, no host, a bad port, or user info (the message says
            to pass credentials in ``credentials_go_in``).
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in default_ports:
        raise ValueError(f"the URL must be {' or '.join(default_ports)}, not {url!r}")
    if not parts.hostname:
        raise ValueError(f"the URL {url!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"credentials in the URL are not supported; use {credentials_go_in}")
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    port = port if port is not None else default_ports[scheme]
    return UrlParts(scheme, parts.hostname, port, target, parts.fragment)


def host_header(host: str, port: int, default_port: int) -> str:
    """The ``Host`` header's value: ``host``, and ``port`` unless it is the default.

    An IPv6 address goes in brackets.
    """
    bracketed = f"[{host}]" if ":" in host else host
    return bracketed if port == default_port else f"{bracketed}:{port}"
