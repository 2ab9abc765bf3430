"""Where a server listens, for the command lines: options, the URLs that reach it, who may.

``mcpcore serve`` and ``examples/everything.py`` share these options (`add_listening_options`):

* ``--host``: an address or a name that resolves (checked before anything starts);
  ``0.0.0.0`` or ``::`` listen on every IPv4 or IPv6 interface;
* ``--port``: 0 to 65535 (0: any free port);
* ``--allow-host NAME`` (repeatable): a ``Host`` served besides the loopback names
  (DNS-rebinding protection, `mcpcore.http.OriginPolicy`), as ``name``, ``name:port``
  or ``*``. A server bound to a specific address serves that address too, and one bound
  to every interface serves the machine's own addresses and name;
* ``--token`` (or the ``MCPCORE_TOKEN`` environment variable, which ``ps`` does not
  show): require it as a bearer token on every request.

`listening_urls` lists the URLs that reach a server (for a wildcard bind: the loopback
one, then one per address of the machine), each of which `allowed_hosts` allows, and
`exposure_warning` says when a server is reachable from other machines with no token.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hmac
import ipaddress
import os
import re
import socket
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from mcpcore.http import DEFAULT_ALLOWED_HOSTS, split_host
from transports import BearerAuth, Principal

__all__ = [
    "MAX_PORT",
    "TOKEN_VARIABLE",
    "WILDCARD_HOSTS",
    "add_listening_options",
    "allowed_hosts",
    "bearer_token",
    "exposure_warning",
    "first_url",
    "host_name",
    "host_pattern",
    "listening_urls",
    "machine_hosts",
    "port_number",
    "token_auth",
    "url_host",
]

#: The largest TCP port number (a 16-bit field, RFC 9293 §3.1).
MAX_PORT: Final = 65535
#: The environment variable holding the bearer token, so that it stays out of ``ps``.
TOKEN_VARIABLE: Final = "MCPCORE_TOKEN"
#: Binding these listens on every interface (IPv4, IPv6).
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::"})
#: Where a UDP socket is "connected" to learn the address this machine's route out uses
#: (no packet is sent): documentation ranges (RFC 5737, RFC 3849), routed like any.
_ROUTE_PROBES: Final = {socket.AF_INET: "198.51.100.1", socket.AF_INET6: "2001:db8::1"}
#: RFC 6750 §2.1: the characters of a bearer token (b64token).
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: Whom the shared token speaks for (sessions are bound to it).
_TOKEN_PRINCIPAL: Final = Principal("token")


def port_number(text: str) -> int:
    """A TCP port to listen on, 0 (any free port) to `MAX_PORT` (an argparse type)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"not a port: {text!r} (0 to {MAX_PORT}; 0 picks any free port)"
        )
    return port


def host_name(text: str) -> str:
    """An address or a name to listen on, resolved now (an argparse type).

    IPv6 addresses may come in brackets (``[::1]``); they are returned without.
    """
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        raise argparse.ArgumentTypeError("no address given (0.0.0.0 listens everywhere)")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        try:
            socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise argparse.ArgumentTypeError(f"can't resolve {host!r}: {reason}") from None
    return host


def host_pattern(text: str) -> str:
    """A ``Host`` to serve: ``name``, ``name:port``, an IP address or ``*`` (an argparse type)."""
    entry = text.strip().lower()
    with contextlib.suppress(ValueError):
        entry = f"[{ipaddress.IPv6Address(entry)}]"  # (a bare IPv6 address)
    if entry != "*" and (not split_host(entry)[0] or "/" in entry or " " in entry):
        raise argparse.ArgumentTypeError(
            f"not a host: {text!r} (say example.com, example.com:8000, 192.0.2.7 or *)"
        )
    return entry


def bearer_token(text: str) -> str:
    """A bearer token (RFC 6750 b64token: letters, digits, ``-._~+/``, then ``=``)."""
    if not _B64TOKEN.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"a token (--token or ${TOKEN_VARIABLE}) is letters, digits and -._~+/, then "
            "= signs (RFC 6750)"
        )
    return text


def add_listening_options(
    parser: argparse.ArgumentParser, *, default_host: str, default_port: int
) -> None:
    """Add ``--host``, ``--port``, ``--allow-host`` and ``--token`` to ``parser``."""
    parser.add_argument(
        "--host",
        type=host_name,
        default=default_host,
        help=f"the address to listen on (default {default_host}; 0.0.0.0 or :: for every "
        "interface, which also serves the machine's addresses and name)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=default_port,
        help=f"the port to listen on (default {default_port}; 0: any free port)",
    )
    parser.add_argument(
        "--allow-host",
        type=host_pattern,
        action="append",
        default=[],
        metavar="HOST",
        help="serve requests naming this Host too (name, name:port or *; repeatable): "
        "requests to other names are refused with 421 (DNS-rebinding protection)",
    )
    parser.add_argument(
        "--token",
        type=bearer_token,
        default=os.environ.get(TOKEN_VARIABLE),
        help=f"require this bearer token on every request (default: ${TOKEN_VARIABLE}, "
        "which ps does not show)",
    )


def token_auth(token: str | None) -> BearerAuth | None:
    """Bearer authorization accepting exactly ``token`` (None: no authorization)."""
    if token is None:
        return None
    expected = token.encode()

    def verify(offered: str) -> Principal | None:
        matches = hmac.compare_digest(offered.encode(), expected)  # (in constant time)
        return _TOKEN_PRINCIPAL if matches else None

    return BearerAuth(verify)


def url_host(host: str) -> str:
    """``host`` as a URL or a ``Host`` header writes it (IPv6 addresses in brackets)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    return f"[{address}]" if address.version == 6 else str(address)


def _loopback_of(host: str) -> str:
    return "[::1]" if host == "::" else "127.0.0.1"


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine only."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in found)


@functools.cache
def machine_hosts(wildcard: str) -> tuple[str, ...]:
    """This machine's addresses a wildcard bind (``0.0.0.0``, ``::``) is reached at.

    The addresses its name resolves to and the one its route out uses, in that
    family, loopback and link-local ones left out, as a ``Host`` header writes them.
    """
    family = socket.AF_INET6 if wildcard == "::" else socket.AF_INET
    found: dict[str, None] = {}
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, family, socket.SOCK_STREAM):
            found[str(info[4][0])] = None
    except (OSError, UnicodeError):
        pass
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((_ROUTE_PROBES[family], 9))
            found[str(probe.getsockname()[0])] = None
    except OSError:
        pass  # no route out: no network beyond this machine
    hosts = []
    for text in found:
        address = ipaddress.ip_address(text.split("%")[0])
        if not (address.is_loopback or address.is_link_local or address.is_unspecified):
            hosts.append(url_host(str(address)))
    return tuple(hosts)


def _machine_names() -> tuple[str, ...]:
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    return tuple(sorted(name for name in names if name))


def allowed_hosts(host: str, allow: Iterable[str] = ()) -> tuple[str, ...]:
    """The ``Host`` values a server bound to ``host`` serves (see the module docstring)."""
    hosts = [*DEFAULT_ALLOWED_HOSTS]
    if host in WILDCARD_HOSTS:
        hosts += [*machine_hosts(host), *_machine_names()]
    elif not _is_loopback(host):
        hosts.append(url_host(host))
    hosts += allow
    return tuple(dict.fromkeys(hosts))


def listening_urls(url: str, host: str) -> list[str]:
    """The URLs that reach a server bound to ``host``, ``url`` (its first one) first.

    For a wildcard bind, ``url`` names the loopback address; the same URL follows
    for each of the machine's addresses (`machine_hosts`).
    """
    if host not in WILDCARD_HOSTS:
        return [url]
    parts = urlsplit(url)
    return [
        url,
        *(
            urlunsplit(parts._replace(netloc=f"{other}:{parts.port}"))
            for other in machine_hosts(host)
        ),
    ]


def first_url(scheme: str, host: str, port: int, path: str) -> str:
    """The URL to print first for a server bound to ``host`` and ``port``."""
    named = _loopback_of(host) if host in WILDCARD_HOSTS else url_host(host)
    return f"{scheme}://{named}:{port}{path}"


def exposure_warning(host: str, auth: BearerAuth | None) -> str | None:
    """What to say when the server is reachable from other machines without a token."""
    if auth is not None or _is_loopback(host):
        return None
    where = "every interface" if host in WILDCARD_HOSTS else host
    return (
        f"warning: listening on {where}, beyond this machine, with no token: anyone who "
        f"can reach it can use it; set {TOKEN_VARIABLE} (or --token) to require one"
    )
