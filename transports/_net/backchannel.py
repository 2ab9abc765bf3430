"""The resource server's own requests to its authorization server, shared by the verifiers.

A `BearerAuth` check may need the authorization server: `JwtVerifier` fetches its key
set and metadata, `IntrospectionVerifier` asks its introspection endpoint (RFC 7662).
Both run blocking `urllib` requests in a worker thread, under the same rules, kept here
(no JOSE: introspection needs neither PyJWT nor cryptography):

* only ``https://`` URLs, or ``http://`` to a loopback host for an authorization server
  on the same machine (`check_url`): tokens, keys and client secrets never cross a
  network in clear;
* a body is read one socket read at a time up to a size cap and a deadline
  (`read_bounded`), so a huge or dribbling answer costs a bounded time and memory;
* what goes wrong is told to the operator on the ``mcpcore.auth`` logger
  (`LOGGER_NAME`); the client only ever sees a 401.
"""

from __future__ import annotations

import http.client
import ipaddress
import time
import urllib.parse
from typing import Final

__all__ = [
    "CLOCK_LEEWAY",
    "LOGGER_NAME",
    "BodyRefusedError",
    "check_url",
    "is_loopback",
    "read_bounded",
]

#: Where a failed request to the authorization server is told (to the operator).
LOGGER_NAME: Final = "mcpcore.auth"
#: Seconds of clock skew forgiven on a token's ``exp``, ``nbf`` and ``iat``, whoever
#: checks it. Servers kept by NTP are within a second of each other; 30 s covers a badly
#: kept one while adding little to a token's life (access tokens live minutes to an hour).
CLOCK_LEEWAY: Final = 30.0
_LOOPBACK_NAMES: Final = frozenset({"localhost"})
#: Bytes asked of the socket per read: small answers in one read, large ones in steps.
_READ_SIZE: Final = 16 * 1024


class BodyRefusedError(ValueError):
    """An answer's body past its size cap, or not whole by its deadline."""


def check_url(url: str, what: str) -> None:
    """Refuse a URL that isn't HTTPS (or plain HTTP to a loopback host).

    Raises:
        ValueError: Naming ``what`` the URL is (``"the JWKS URL"``).
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return
    raise ValueError(f"{what} must be https:// (or http:// to loopback): {url!r}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address) is this machine's loopback."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_bounded(response: http.client.HTTPResponse, limit: int, deadline: float) -> bytes:
    """The body, read one socket read at a time within ``limit`` bytes and the deadline.

    A ``Content-Length`` past the limit is refused before anything is read.

    Raises:
        BodyRefusedError: The body is larger than ``limit``, or still arriving at
            ``deadline`` (`time.monotonic` seconds).
    """
    length = response.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise BodyRefusedError(f"the answer is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(_READ_SIZE):
        size += len(chunk)
        if size > limit:
            raise BodyRefusedError(f"the answer is larger than {limit} bytes")
        if time.monotonic() > deadline:
            raise BodyRefusedError("the answer took too long to arrive")
        chunks.append(chunk)
    return b"".join(chunks)
