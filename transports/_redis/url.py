"""Where a Redis server is and how to log in: `RedisAddress`, from a URL.

A deployment names its Redis with one URL in its configuration, as every Redis client
takes it (``redis://``, ``rediss://``, ``unix://``), so this module reads the common
forms and refuses the rest with a message that says what is wrong. URLs carry passwords:
neither `RedisAddress`'s repr nor any error message shows one (it is masked as ``***``),
since both end up in logs.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

__all__ = ["DEFAULT_PORT", "MASK", "RedisAddress", "mask_url", "parse_redis_url"]

#: Redis's registered port, for URLs that name none.
DEFAULT_PORT: Final = 6379
#: What stands for a password in reprs and error messages.
MASK: Final = "***"
#: The schemes `parse_redis_url` reads, and whether each uses TLS.
SCHEMES: Final = {"redis": False, "rediss": True, "unix": False}
#: A ``password=`` query parameter's value (refused, but masked in the message).
_PASSWORD_PARAMETER: Final = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, repr=False)
class RedisAddress:
    """A Redis server's address and the login its connections start with.

    Attributes:
        host: Host name or IP address (ignored when ``unix_path`` is set).
        port: TCP port (ignored when ``unix_path`` is set).
        unix_path: The path of a Unix socket to connect to instead of TCP, or None.
        username: The ACL user to ``AUTH`` as (Redis 6+), or None for the default user.
        password: The password to ``AUTH`` with, or None to send no ``AUTH``.
        db: The database to ``SELECT`` (0: none is sent).
        tls: Whether to speak TLS (``rediss://``), verifying the server's certificate.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    unix_path: str | None = None
    username: str | None = None
    password: str | None = None
    db: int = 0
    tls: bool = False

    @property
    def where(self) -> str:
        """The server, as error messages name it: ``host:port`` or ``unix:/path``."""
        if self.unix_path is not None:
            return f"unix:{self.unix_path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __repr__(self) -> str:
        fields = [
            f"{field.name}={MASK!r}"
            if field.name == "password" and self.password is not None
            else f"{field.name}={getattr(self, field.name)!r}"
            for field in dataclasses.fields(self)
        ]
        return f"RedisAddress({', '.join(fields)})"


def mask_url(url: str) -> str:
    """``url`` with whatever could be a password replaced by `MASK`.

    Everything between ``//`` and the last ``@`` of the authority is the user info; the
    part after its first colon is the password. User info without a colon is masked
    whole, since it is often a password given where the user name goes. A ``password=``
    query parameter (which other clients read) is masked too.
    """
    url = _PASSWORD_PARAMETER.sub(rf"\g<1>{MASK}", url)
    scheme, slashes, rest = url.partition("//")
    if not slashes:
        return url
    authority_end = len(rest)
    for stop in "/?#":
        if stop in rest:
            authority_end = min(authority_end, rest.index(stop))
    authority, tail = rest[:authority_end], rest[authority_end:]
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        return url
    user, colon, _ = userinfo.partition(":")
    masked = f"{user}:{MASK}" if colon else MASK
    return f"{scheme}//{masked}@{hostport}{tail}"


def parse_redis_url(url: str) -> RedisAddress:
    """The `RedisAddress` a Redis URL names.

    Reads ``redis://[[user]:password@]host[:port][/db]``, the same with ``rediss://``
    for TLS, and ``unix://[[user]:password@]/path[?db=N]``. Percent-escapes in the user
    name and password are decoded.

    Raises:
        ValueError: The URL is not one of those forms; the message says why and shows
            the URL with its password masked.
    """
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise _UrlError(f"scheme {parts.scheme!r} is not redis://, rediss:// or unix://")
        if parts.fragment:
            raise _UrlError("a URL fragment ('#...') means nothing here")
        username, password = _login(parts)
        if scheme == "unix":
            return _unix_address(parts, username, password)
        host, port = _host_and_port(parts)
        return RedisAddress(
            host=host,
            port=port,
            username=username,
            password=password,
            db=_db(parts.path.removeprefix("/"), parts.query),
            tls=SCHEMES[scheme],
        )
    except _UrlError as refused:
        raise ValueError(f"invalid Redis URL {mask_url(url)!r}: {refused}") from None
    except ValueError:  # (urlsplit's own, e.g. an unclosed '[': its message may quote it)
        raise ValueError(f"invalid Redis URL {mask_url(url)!r}") from None


class _UrlError(Exception):
    """Why a URL is refused, in words that never quote its user info."""


def _login(parts: SplitResult) -> tuple[str | None, str | None]:
    """The URL's (user name, password), percent-decoded; None where absent."""
    userinfo, at, _ = parts.netloc.rpartition("@")
    if not at:
        return None, None
    user, colon, password = userinfo.partition(":")
    if not colon:
        # AUTH needs a password; a lone name is most often a password put where the
        # user name goes, which would then be sent as a user name (and logged as one).
        raise _UrlError("user info without a password: write redis://:PASSWORD@host")
    return (unquote(user) or None), unquote(password)


def _host_and_port(parts: SplitResult) -> tuple[str, int]:
    """The URL's host and port (`DEFAULT_PORT` when it names none)."""
    host = parts.hostname
    if not host:
        raise _UrlError("no host")
    try:
        port = parts.port
    except ValueError:
        raise _UrlError("the port is not a number from 1 to 65535") from None
    if port == 0:
        raise _UrlError("the port is not a number from 1 to 65535")
    return host, DEFAULT_PORT if port is None else port


def _unix_address(parts: SplitResult, username: str | None, password: str | None) -> RedisAddress:
    """The address of a ``unix://`` URL: the path is the socket's."""
    if parts.netloc.rpartition("@")[2]:
        raise _UrlError("a unix:// URL names no host: write unix:///path/to/redis.sock")
    if not parts.path:
        raise _UrlError("no socket path")
    return RedisAddress(
        unix_path=unquote(parts.path),
        username=username,
        password=password,
        db=_db("", parts.query),
    )


def _db(path: str, query: str) -> int:
    """The database number: the path's (``/N``) or the query's (``?db=N``), else 0."""
    texts = [path] if path else []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name != "db":
            raise _UrlError(f"unknown query parameter {name!r} (only db= is read)")
        texts.append(value)
    if len(texts) > 1:
        raise _UrlError("the database is given twice")
    if not texts:
        return 0
    if not (texts[0].isascii() and texts[0].isdigit()):
        raise _UrlError(f"the database {texts[0]!r} is not a number")
    return int(texts[0])
