"""The server's URL, split once into what each request needs (host, port, target, Host).

Only ``http`` and ``https`` URLs are accepted. The legacy HTTP+SSE transport names its
POST endpoint in an ``endpoint`` event; `HttpUrl.join` resolves it, and the client
refuses one on another origin: the endpoint comes from the server, and following it
elsewhere would send our messages (and our bearer token) to a host we never chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urljoin, urlsplit

__all__ = ["HttpUrl", "parse_url"]

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
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

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
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"the URL must be http or https, not {url!r}")
    if not parts.hostname:
        raise ValueError(f"the URL {url!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials in the URL are not supported; use headers= or auth=")
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return HttpUrl(
        text=url,
        scheme=scheme,
        host=parts.hostname,
        port=port if port is not None else _DEFAULT_PORTS[scheme],
        target=target,
    )
