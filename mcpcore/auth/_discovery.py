"""Finding the authorization server: challenges, well-known URLs, metadata checks.

Pure functions over strings and decoded JSON; the flow (`_flow`) fetches. Rules cited from
the 2025-11-25 basic/authorization section unless said otherwise (2026-07-28 keeps them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import msgspec

from mcpcore.auth._messages import MAX_METADATA_SIZE, OAuthError

__all__ = [
    "Challenge",
    "as_metadata_urls",
    "canonical_resource",
    "check_endpoint",
    "decode_object",
    "error_code",
    "parse_challenge",
    "prm_urls",
    "resource_allowed",
]

# RFC 9110 §11.2 auth-param: token BWS "=" BWS ( token / quoted-string ).
_AUTH_PARAM: Final = re.compile(r'([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)')
_ESCAPE: Final = re.compile(r"\\(.)")
#: Characters of a ``WWW-Authenticate`` value looked at: a real challenge is a few
#: hundred; the header came from a server we do not trust yet.
MAX_CHALLENGE_SIZE: Final = 8 * 1024
#: Hosts an ``http`` (not ``https``) endpoint may be on: "all authorization server
#: endpoints MUST be served over HTTPS" (2025-11-25 basic/authorization, Communication
#: Security), and OAuth 2.1 §1.5 allows loopback redirects; a local development server
#: (and the conformance suite's) is the one exception we make.
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_PRM_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
_OAUTH_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
_OIDC_WELL_KNOWN: Final = "/.well-known/openid-configuration"


@dataclass(frozen=True, slots=True)
class Challenge:
    """A ``Bearer`` or ``DPoP`` challenge of ``WWW-Authenticate``.

    RFC 6750 §3 and RFC 9728 §5.1; RFC 9449 §7.1 gives ``DPoP`` the same parameters, and
    ``use_dpop_nonce`` for an ``error``.

    Attributes:
        resource_metadata: The protected-resource metadata URL, if given.
        scope: The scopes the server asks for, if given.
        error: ``invalid_token``, ``insufficient_scope``..., if given.
    """

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None


def parse_challenge(header: str | None) -> Challenge:
    """The first ``Bearer`` or ``DPoP`` challenge's parameters (empty when there is none)."""
    if not header:
        return Challenge()
    header = header[:MAX_CHALLENGE_SIZE]
    found = re.search(r"(?:^|,)\s*(?:bearer|dpop)(?:\s+|$)", header, re.I)
    if found is None:
        return Challenge()
    params: dict[str, str] = {}
    for name, raw in _AUTH_PARAM.findall(header, found.end()):
        value = _ESCAPE.sub(r"\1", raw[1:-1]) if raw.startswith('"') else raw
        params.setdefault(name.lower(), value)
    return Challenge(
        resource_metadata=params.get("resource_metadata") or None,
        scope=params.get("scope") or None,
        error=params.get("error") or None,
    )


def check_endpoint(url: str, what: str) -> str:
    """``url`` if it is HTTPS (or HTTP on a loopback host), else `OAuthError`."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        raise OAuthError(f"the {what} URL is malformed") from None
    if parts.fragment or not host:
        raise OAuthError(f"the {what} URL {url!r} has no host, or a fragment")
    if parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK_HOSTS):
        return url
    raise OAuthError(f"the {what} URL {url!r} is not HTTPS")


def _split_origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), parts.path.rstrip("/")


def prm_urls(server_url: str) -> list[str]:
    """Where protected-resource metadata may be, in order, when no challenge names it.

    "Clients MUST ... try ... the well-known URI with the path component of the MCP
    server URL, then ... at the root" (2025-11-25 basic/authorization, Protected Resource
    Metadata Discovery Requirements; RFC 9728 §3.1).
    """
    origin, path = _split_origin(server_url)
    root = origin + _PRM_WELL_KNOWN
    return [root + path, root] if path else [root]


def as_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order 2025-11-25 prescribes.

    With a path: RFC 8414 path insertion, OIDC path insertion, OIDC path appending;
    without: RFC 8414, then OIDC (2025-11-25 basic/authorization, Authorization Server
    Metadata Discovery).
    """
    origin, path = _split_origin(issuer)
    if path:
        return [
            origin + _OAUTH_WELL_KNOWN + path,
            origin + _OIDC_WELL_KNOWN + path,
            origin + path + _OIDC_WELL_KNOWN,
        ]
    return [origin + _OAUTH_WELL_KNOWN, origin + _OIDC_WELL_KNOWN]


def canonical_resource(server_url: str) -> str:
    """The MCP server's canonical URI (RFC 8707 §2): lower-case scheme and host, no fragment.

    Used as ``resource`` when no protected-resource metadata names one (2025-03-26
    servers); otherwise the metadata's ``resource`` is sent exactly as published.
    """
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_allowed(resource: str, server_url: str) -> bool:
    """Whether metadata's ``resource`` may stand for ``server_url``.

    "Clients MUST validate that the resource ... matches the MCP server" (2026-07-28
    basic/authorization; RFC 9728 §3.3): same origin, and the server's path within the
    resource's path (a resource at the root covers ``/mcp``).
    """
    try:
        ours, theirs = urlsplit(canonical_resource(server_url)), urlsplit(resource)
        same_origin = (ours.scheme, ours.hostname, ours.port) == (
            theirs.scheme.lower(),
            theirs.hostname,
            theirs.port,
        )
    except ValueError:
        return False
    path = theirs.path.rstrip("/") + "/"
    return same_origin and (ours.path.rstrip("/") + "/").startswith(path)


def decode_object(body: bytes, what: str) -> Mapping[str, Any]:
    """A JSON object of at most `MAX_METADATA_SIZE` bytes, or `OAuthError`."""
    if len(body) > MAX_METADATA_SIZE:
        raise OAuthError(f"the {what} exceeds {MAX_METADATA_SIZE} bytes")
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise OAuthError(f"the {what} is not JSON") from None
    if not isinstance(value, dict):
        raise OAuthError(f"the {what} is not a JSON object")
    return value


def error_code(body: bytes) -> str:
    """``": <error>"`` of an RFC 6749 §5.2 error response, else ``""``.

    The code is an ASCII token the server chose to publish (cut at 80 characters).
    """
    try:
        found = decode_object(body, "error response").get("error")
    except OAuthError:
        return ""
    return f": {found[:80]}" if isinstance(found, str) else ""
