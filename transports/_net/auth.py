"""The authorization hook: bearer tokens checked by the embedder, and RFC 9728 metadata.

An MCP server "is an OAuth 2.1 resource server" (2025-06-18 basic/authorization): it
never issues tokens, it checks them. Checking is the embedder's callable (`BearerAuth`
``verify``): given the token, it returns who the token speaks for and its scopes
(`Principal`), or None for a token it does not accept (including one issued for
another audience: "MUST NOT accept or pass through other tokens"). Around it the
transport does what the spec fixes:

* no valid token → 401 with ``WWW-Authenticate: Bearer resource_metadata="…"`` (and
  the required ``scope``, which a server "SHOULD include", 2025-11-25);
* a valid token without a required scope → 403 with ``error="insufficient_scope"``,
  all the required scopes in one challenge;
* the protected-resource metadata (RFC 9728) at ``/.well-known/oauth-protected-resource``
  and at the path-inserted form ``/.well-known/oauth-protected-resource/<mcp path>``,
  which clients try in that order after the header (2025-11-25). Both are paths of the
  app: an app mounted under a prefix serves them below it, and its challenge names
  that copy (`BearerAuth.metadata_url`), since the host's root is not the app's.

Every MCP request is checked, GET and DELETE included; the metadata is public.
`BearerAuth.jwt` builds one whose check is a `JwtVerifier` (``jwt_verifier``): JWT
access tokens of one issuer, verified with its JWKS, for this resource.
`BearerAuth.introspection` builds one whose check is an `IntrospectionVerifier`
(``introspection``): opaque tokens, judged by the issuer's RFC 7662 endpoint.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from mcpcore import jsonrpc

if TYPE_CHECKING:
    from transports._net.introspection import ClientAuthMethod

__all__ = [
    "PROTECTED_RESOURCE_PATH",
    "AuthFailure",
    "BearerAuth",
    "Principal",
    "TokenVerifier",
]

#: RFC 9728 §3: the well-known path of protected-resource metadata.
PROTECTED_RESOURCE_PATH: Final = "/.well-known/oauth-protected-resource"
_BEARER: Final = "bearer "


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a valid token speaks for.

    Attributes:
        subject: A stable identifier of the user (sessions and 2026-07-28
            ``requestState`` are bound to it).
        scopes: The scopes the token grants.
    """

    subject: str
    scopes: frozenset[str] = field(default_factory=frozenset)


#: Checks a bearer token: the `Principal`, or None when the token is not accepted.
TokenVerifier = Callable[[str], "Principal | Awaitable[Principal | None] | None"]


@dataclass(frozen=True, slots=True)
class AuthFailure:
    """A request refused by `BearerAuth.check`: the status and its challenge."""

    status: int
    challenge: str
    message: str


@dataclass(frozen=True)
class BearerAuth:
    """Bearer-token authorization for `transports.serve_http`.

    Args:
        verify: The token check (sync or async); see `TokenVerifier`.
        authorization_servers: Issuer URLs of the authorization servers clients get
            tokens from, for the RFC 9728 metadata. None for a token handed out some other
            way (``mcpcore serve --token``): then no metadata is served (404) and the
            401 challenge names none.
        required_scopes: Scopes every request's token must carry.
        resource: The canonical URL of the MCP endpoint (``https://host/mcp``), the
            metadata's ``resource`` and the base of its URL. Default: built from each
            request's ``Host`` header and the endpoint path, over http (set it when a
            proxy terminates TLS in front of the server).
        scopes_supported: The metadata's ``scopes_supported`` (default: the required
            scopes; "SHOULD NOT list offline_access", 2026-07-28).
        resource_name: A human-readable name for the metadata.
    """

    verify: TokenVerifier
    authorization_servers: Sequence[str] = ()
    required_scopes: Sequence[str] = ()
    resource: str | None = None
    scopes_supported: Sequence[str] | None = None
    resource_name: str | None = None

    def __post_init__(self) -> None:
        if any(" " in scope or '"' in scope for scope in self.required_scopes):
            raise ValueError("a scope is a token without spaces or quotes (RFC 6749 §3.3)")

    def resource_url(self, host: str, path: str) -> str:
        """The canonical URL of the endpoint, as this request's ``Host`` names it."""
        return self.resource or f"http://{host}{path}"

    def metadata_url(self, host: str, path: str, *, root: str = "") -> str:
        """Where the metadata is, for the challenge's ``resource_metadata``.

        ``path`` is the endpoint's whole path. Served at the host's root, the metadata
        is at the resource's path-inserted well-known URL (RFC 9728 §3.1). Mounted
        under ``root`` (an ASGI app inside a framework, or behind ``--root-path``), the
        host's root is not the app's to serve: the URL names the copy the app serves
        below its mount, ``<root>/.well-known/oauth-protected-resource<endpoint>``.
        Clients try the challenge's URL first (2025-11-25 authorization: the header,
        then the path-inserted URI, then the root; 2025-06-18 servers MUST send it),
        and RFC 9728 §5.1 lets it be any URL.
        """
        resource = self.resource_url(host, path)
        scheme, _, rest = resource.partition("://")
        authority, slash, resource_path = rest.partition("/")
        resource_path = slash + resource_path
        endpoint = path[len(root) :] if root and path.startswith(root) else ""
        if endpoint and resource_path.endswith(endpoint):
            mount = resource_path[: len(resource_path) - len(endpoint)]
            return f"{scheme}://{authority}{mount}{PROTECTED_RESOURCE_PATH}{endpoint}".rstrip("/")
        return f"{scheme}://{authority}{PROTECTED_RESOURCE_PATH}{resource_path}".rstrip("/")

    def metadata(self, host: str, path: str) -> dict[str, object]:
        """The RFC 9728 protected-resource metadata document."""
        document: dict[str, object] = {
            "resource": self.resource_url(host, path),
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        scopes = self.required_scopes if self.scopes_supported is None else self.scopes_supported
        if scopes:
            document["scopes_supported"] = list(scopes)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        return document

    @classmethod
    def jwt(
        cls,
        *,
        issuer: str,
        jwks_url: str | None = None,
        resource: str,
        required_scopes: Sequence[str] = (),
        algorithms: Sequence[str] | None = None,
        leeway: float | None = None,
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
    ) -> BearerAuth:
        """Authorization by JWT access tokens of one issuer, checked with its JWKS.

        The verifier is a `transports.JwtVerifier` for ``issuer``, ``jwks_url`` (None:
        discovered from the issuer's metadata) and the audience ``resource`` (this
        endpoint's canonical URL, also the metadata's ``resource``); the issuer is the
        metadata's one authorization server. ``algorithms`` and ``leeway`` default to
        `JwtVerifier`'s. Needs the ``oauth`` extra (PyJWT and cryptography), imported
        here only.
        """
        from transports._net.jwt_verifier import DEFAULT_ALGORITHMS, JWT_LEEWAY, JwtVerifier

        verifier = JwtVerifier(
            jwks_url=jwks_url,
            issuer=issuer,
            audience=resource,
            algorithms=DEFAULT_ALGORITHMS if algorithms is None else algorithms,
            leeway=JWT_LEEWAY if leeway is None else leeway,
        )
        return cls(
            verifier,
            authorization_servers=[issuer],
            required_scopes=required_scopes,
            resource=resource,
            scopes_supported=scopes_supported,
            resource_name=resource_name,
        )

    @classmethod
    def introspection(
        cls,
        *,
        endpoint: str,
        client_id: str,
        client_secret: str,
        issuer: str,
        resource: str,
        required_scopes: Sequence[str] = (),
        client_auth: ClientAuthMethod = "client_secret_basic",
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
    ) -> BearerAuth:
        """Authorization by opaque access tokens, asked about at the issuer (RFC 7662).

        The verifier is a `transports.IntrospectionVerifier` of ``endpoint`` (the
        issuer's ``introspection_endpoint``), authenticated with ``client_id`` and
        ``client_secret`` (``client_auth``), for the audience ``resource`` (this
        endpoint's canonical URL, also the metadata's ``resource``) and the ``iss``
        ``issuer``, the metadata's one authorization server. Its other settings are
        `IntrospectionVerifier`'s defaults: build one yourself to change them. Needs no
        extra: the standard library does the HTTP.
        """
        from transports._net.introspection import IntrospectionVerifier

        verifier = IntrospectionVerifier(
            endpoint,
            client_id=client_id,
            client_secret=client_secret,
            audience=resource,
            issuer=issuer,
            client_auth=client_auth,
        )
        return cls(
            verifier,
            authorization_servers=[issuer],
            required_scopes=required_scopes,
            resource=resource,
            scopes_supported=scopes_supported,
            resource_name=resource_name,
        )

    @property
    def has_metadata(self) -> bool:
        """Whether the RFC 9728 metadata is served (there are authorization servers)."""
        return bool(self.authorization_servers)

    async def check(
        self, authorization: str | None, host: str, path: str, *, root: str = ""
    ) -> Principal | AuthFailure:
        """Authorize a request by its ``Authorization`` header.

        ``path`` is the endpoint's whole path, ``root`` the mount point it starts with
        (see `metadata_url`).
        """
        url = self.metadata_url(host, path, root=root)
        metadata = f'resource_metadata="{url}"' if self.has_metadata else ""
        scope = f'scope="{" ".join(self.required_scopes)}"' if self.required_scopes else ""
        if authorization is None or authorization[: len(_BEARER)].lower() != _BEARER:
            # RFC 6750 §3.1: no credentials → a challenge without an error code.
            challenge = _challenge(metadata, scope)
            return AuthFailure(401, challenge, "Unauthorized: a bearer token is required")
        token = authorization[len(_BEARER) :].strip()
        principal = self.verify(token) if token else None
        if inspect.isawaitable(principal):
            principal = await principal
        if principal is None:
            challenge = _challenge('error="invalid_token"', metadata, scope)
            return AuthFailure(401, challenge, "Unauthorized: the token is not valid")
        missing = [s for s in self.required_scopes if s not in principal.scopes]
        if missing:
            # "Insufficient scope at runtime → 403 with WWW-Authenticate: Bearer
            # error="insufficient_scope", scope=..., resource_metadata=..." (2025-11-25).
            challenge = _challenge('error="insufficient_scope"', scope, metadata)
            return AuthFailure(403, challenge, "Forbidden: insufficient scope")
        return principal


def _challenge(*parameters: str) -> str:
    """A ``WWW-Authenticate`` Bearer challenge with the non-empty ``parameters``."""
    given = ", ".join(parameter for parameter in parameters if parameter)
    return f"Bearer {given}" if given else "Bearer"


#: The JSON-RPC code of an authorization refusal's body (there is no request id to echo).
AUTH_ERROR_CODE: Final = jsonrpc.INVALID_REQUEST
