"""The OAuth 2.1 client flow an MCP client runs on a 401 or a 403, sans-IO.

`authorize` is a generator: it yields `Fetch`, `Redirect` and `SignAssertion` requests and
is sent their answers; it returns a `Grant` (tokens, and the registration they came
from) or raises `OAuthError`. It reads no clock and draws no randomness: the PKCE
verifier, the ``state``, the assertion's ``jti`` and the time come in `FlowInputs`.

The steps, as 2025-11-25 basic/authorization orders them (2026-07-28 keeps them):

1. Protected-resource metadata (RFC 9728): the ``resource_metadata`` of the challenge,
   else the path-based then the root well-known URL; its ``resource`` must match the
   server ("MUST validate", 2026-07-28). None found: a 2025-03-26 server, whose
   authorization server is the MCP server's origin.
2. Authorization-server metadata (RFC 8414 / OIDC Discovery), its ``issuer`` equal to
   the one the URL was built from (RFC 8414 §3.3); none at a 2025-03-26 server: the
   default ``/authorize``, ``/token``, ``/register`` (2025-03-26, Fallbacks).
3. The client: pre-registered, else a Client ID Metadata Document URL when the server
   advertises ``client_id_metadata_document_supported``, else dynamic registration
   (RFC 7591) — each bound to its issuer, never reused at another (SEP-2352).
4. The grant: authorization code with PKCE S256 and ``resource`` (RFC 8707), the
   redirect's ``state`` and ``iss`` checked (RFC 9207); or ``client_credentials``; or
   the JWT-bearer grant of workload identity and enterprise-managed authorization
   (`_grants`).
5. The token request, with a DPoP proof where the authorization server advertises DPoP
   (`_dpop`; one retry with its nonce when it asks for one): `_tokens`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import msgspec

from mcpcore.auth._discovery import (
    Challenge,
    as_metadata_urls,
    canonical_resource,
    check_endpoint,
    decode_object,
    prm_urls,
    resource_allowed,
)
from mcpcore.auth._dpop import SignProof, use_dpop
from mcpcore.auth._grants import (
    JWT_BEARER_GRANT,
    IdentityProvider,
    ObtainAssertion,
    jwt_bearer_form,
)
from mcpcore.auth._messages import (
    Fetch,
    Fetched,
    FlowInputs,
    OAuthError,
    Redirect,
    SignAssertion,
    answered,
)
from mcpcore.auth._tokens import ClientInfo, Tokens, refresh, request_tokens

__all__ = [
    "ClientConfig",
    "Grant",
    "GrantType",
    "Request",
    "authorize",
    "code_challenge",
]

GrantType: TypeAlias = Literal["authorization_code", "client_credentials", "jwt_bearer"]
#: What the flow yields, and what it is sent back.
Request: TypeAlias = Fetch | Redirect | SignAssertion | SignProof | ObtainAssertion
Answer: TypeAlias = Fetched | str
Flow: TypeAlias = Generator[Request, Answer, Any]

_OFFLINE_ACCESS: Final = "offline_access"
_JSON: Final = {"Accept": "application/json"}
# Client authentication we can do, in our order of preference when we may choose:
# a public client needs no secret (OAuth 2.1 §2.1: native apps are public clients).
_DCR_METHODS: Final = ("none", "client_secret_basic", "client_secret_post")
_SECRET_METHODS: Final = ("client_secret_basic", "client_secret_post")
# "If omitted, the default is client_secret_basic" (RFC 8414 §2).
_DEFAULT_AUTH_METHODS: Final = ("client_secret_basic",)
# The grant_types value a registration names for each grant (RFC 7591 §2).
_GRANT_NAMES: Final = {"jwt_bearer": JWT_BEARER_GRANT}


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientConfig:
    """Who we are to authorization servers.

    Attributes:
        redirect_uri: Where the authorization server sends the user back.
        client_name: Shown to the user at registration and consent.
        grant_type: ``authorization_code`` (a user), ``client_credentials`` (a machine
            with a secret or a key), or ``jwt_bearer`` (RFC 7523: a workload's JWT, or
            with ``identity_provider`` an ID-JAG, asked for with `ObtainAssertion`).
        client_id: A pre-registered client id (used with every authorization server).
        client_secret: Its secret, if it has one.
        client_metadata_url: An HTTPS URL of our Client ID Metadata Document.
        token_endpoint_auth_method: Force one (else chosen from what the server supports).
        signing_algorithm: Set for ``private_key_jwt`` (e.g. ``ES256``): assertions are
            asked for with `SignAssertion`.
        scope: Scopes to ask for, overriding the spec's selection.
        want_refresh_token: Ask for refresh tokens (``offline_access`` when supported).
        dpop: Ask for DPoP-bound tokens (RFC 9449): None when the authorization server
            advertises ES256 for DPoP, else always (True) or never (False).
        identity_provider: With ``jwt_bearer``: exchange the user's ID token there for
            the assertion (SEP-990, enterprise-managed authorization).
    """

    redirect_uri: str = "http://127.0.0.1/callback"
    client_name: str = "mcpcore"
    grant_type: GrantType = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None
    token_endpoint_auth_method: str | None = None
    signing_algorithm: str | None = None
    scope: str | None = None
    want_refresh_token: bool = True
    dpop: bool | None = None
    identity_provider: IdentityProvider | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Grant:
    """The outcome of `authorize`: tokens, and the registration that got them."""

    tokens: Tokens
    client: ClientInfo


@dataclass(frozen=True, kw_only=True, slots=True)
class _Server:
    """The authorization server, as discovery found it."""

    issuer: str
    metadata: Mapping[str, Any]
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    resource: str
    scopes_supported: tuple[str, ...] | None  # the resource's (PRM)
    discovered: bool  # metadata was found (not the 2025-03-26 defaults)


def code_challenge(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorize(
    server_url: str,
    challenge: Challenge,
    *,
    config: ClientConfig,
    inputs: FlowInputs,
    clients: Mapping[str, ClientInfo] | None = None,
    previous: Tokens | None = None,
) -> Generator[Request, Answer, Grant]:
    """Get tokens for ``server_url`` after it answered 401 or 403 with ``challenge``.

    Args:
        server_url: The MCP endpoint.
        challenge: Its ``WWW-Authenticate`` challenge (`parse_challenge`).
        config: Who we are.
        inputs: The verifier, ``state``, ``jti`` and time.
        clients: Registrations kept from earlier flows, by issuer.
        previous: The tokens the server just refused, if any: refreshed when the
            refusal was a 401 at the same issuer, their scopes kept on a step-up.

    Raises:
        OAuthError: A step failed, or was refused (metadata that does not match, a
            redirect without the right ``state`` or ``iss``...).
    """
    server = yield from _discover(server_url, challenge)
    if previous is not None and previous.issuer != server.issuer:
        previous = None  # another authorization server: nothing of the old one counts
    client = (clients or {}).get(server.issuer)
    if client is None:
        client = yield from _client_for(server, config)
    step_up = challenge.error == "insufficient_scope"
    if previous is not None and previous.refresh_token and not step_up:
        tokens = yield from refresh(previous, client, inputs)
        if tokens is not None:
            return Grant(tokens=tokens, client=client)
    scope = _select_scope(server, challenge, config, previous)
    form = yield from _grant_form(server, client, config, inputs, scope)
    form["resource"] = server.resource
    if scope:
        form["scope"] = scope
    dpop = use_dpop(server.metadata, config.dpop)
    tokens = yield from request_tokens(server.token_endpoint, form, client, inputs, dpop=dpop)
    return Grant(tokens=_bind(tokens, server, scope), client=client)


# -- discovery ------------------------------------------------------------------------


def _discover(server_url: str, challenge: Challenge) -> Flow:
    prm = yield from _protected_resource(server_url, challenge)
    if prm is None:  # a 2025-03-26 server: "the authorization base URL" is its origin
        parts = urlsplit(server_url)
        issuer = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        resource, scopes = canonical_resource(server_url), None
    else:
        issuer, resource, scopes = _read_prm(prm, server_url)
    metadata = yield from _as_metadata(issuer, strict=prm is not None)
    if metadata is None:
        if prm is not None:
            raise OAuthError(f"no authorization server metadata found for {issuer}")
        return _fallback(issuer, resource)
    if prm is None and isinstance(metadata.get("issuer"), str):
        issuer = metadata["issuer"]  # (what the redirect's iss is compared with)
    return _server(issuer, metadata, resource, scopes)


def _protected_resource(server_url: str, challenge: Challenge) -> Flow:
    if challenge.resource_metadata:
        urls = [check_endpoint(challenge.resource_metadata, "resource metadata")]
    else:
        urls = prm_urls(server_url)
    for url in urls:
        answer = yield Fetch(method="GET", url=url, headers=_JSON)
        if _status(answer) == 200:
            return decode_object(_body(answer), "protected resource metadata")
    return None


def _read_prm(prm: Mapping[str, Any], server_url: str) -> tuple[str, str, tuple[str, ...] | None]:
    resource = prm.get("resource")
    if not isinstance(resource, str) or not resource_allowed(resource, server_url):
        # "MUST validate that the resource ... matches" (2026-07-28; RFC 9728 §3.3): a
        # token for another resource would be sent to this server, or this one's to it.
        raise OAuthError(f"the protected resource metadata is for {resource!r}, not this server")
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise OAuthError("the protected resource metadata names no authorization server")
    scopes = prm.get("scopes_supported")
    chosen = tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else None
    return check_endpoint(servers[0], "authorization server"), resource, chosen


def _as_metadata(issuer: str, *, strict: bool) -> Flow:
    for url in as_metadata_urls(issuer):
        answer = yield Fetch(method="GET", url=url, headers=_JSON)
        if _status(answer) != 200:
            continue
        metadata = decode_object(_body(answer), "authorization server metadata")
        # "The issuer value returned MUST be identical to the authorization server's
        # issuer identifier value into which the well-known URI string was inserted"
        # (RFC 8414 §3.3): else the metadata may be an attacker's (2026-07-28). A
        # 2025-03-26 server publishes its metadata at its own origin, under an issuer
        # of its choosing (the official suite's has a path): the MCP server vouches.
        if strict and metadata.get("issuer") != issuer:
            raise OAuthError(f"the authorization server metadata at {url} is not {issuer}'s")
        return metadata
    return None


def _server(
    issuer: str, metadata: Mapping[str, Any], resource: str, scopes: tuple[str, ...] | None
) -> _Server:
    endpoints = [metadata.get(name) for name in ("authorization_endpoint", "token_endpoint")]
    if not all(isinstance(url, str) for url in endpoints):
        raise OAuthError(f"the metadata of {issuer} lacks an endpoint")
    registration = metadata.get("registration_endpoint")
    return _Server(
        issuer=issuer,
        metadata=metadata,
        authorization_endpoint=check_endpoint(str(endpoints[0]), "authorization endpoint"),
        token_endpoint=check_endpoint(str(endpoints[1]), "token endpoint"),
        registration_endpoint=(
            check_endpoint(registration, "registration endpoint")
            if isinstance(registration, str)
            else None
        ),
        resource=resource,
        scopes_supported=scopes,
        discovered=True,
    )


def _fallback(issuer: str, resource: str) -> _Server:
    # "Clients MUST use the default endpoints ... /authorize, /token, /register"
    # relative to the authorization base URL (2025-03-26 basic/authorization, Fallbacks).
    return _Server(
        issuer=issuer,
        metadata={},
        authorization_endpoint=issuer + "/authorize",
        token_endpoint=issuer + "/token",
        registration_endpoint=issuer + "/register",
        resource=resource,
        scopes_supported=None,
        discovered=False,
    )


# -- the client -----------------------------------------------------------------------


def _client_for(server: _Server, config: ClientConfig) -> Flow:
    supported = _strings(server.metadata.get("token_endpoint_auth_methods_supported"))
    supported = supported or _DEFAULT_AUTH_METHODS
    if config.client_id is not None:
        method = config.token_endpoint_auth_method or _preregistered_method(config, supported)
        return ClientInfo(
            issuer=server.issuer,
            client_id=config.client_id,
            client_secret=config.client_secret,
            auth_method=method,
        )
    cimd = server.metadata.get("client_id_metadata_document_supported") is True
    if cimd and config.client_metadata_url:
        # "Clients ... SHOULD use Client ID Metadata Documents when the server supports
        # them" (2025-11-25 basic/authorization, Client Registration Approaches).
        return ClientInfo(issuer=server.issuer, client_id=config.client_metadata_url)
    if server.registration_endpoint is None:
        raise OAuthError(f"{server.issuer} offers no client registration: pre-register a client id")
    return (yield from _register(server, config, supported))


def _preregistered_method(config: ClientConfig, supported: tuple[str, ...]) -> str:
    if config.signing_algorithm is not None:
        return "private_key_jwt"
    if config.client_secret is None:
        return "none"
    return next((m for m in _SECRET_METHODS if m in supported), _SECRET_METHODS[0])


def _register(server: _Server, config: ClientConfig, supported: tuple[str, ...]) -> Flow:
    method = config.token_endpoint_auth_method or next(
        (m for m in _DCR_METHODS if m in supported), "none"
    )
    grant_types: list[str] = [_GRANT_NAMES.get(config.grant_type, config.grant_type)]
    if config.want_refresh_token and config.grant_type == "authorization_code":
        grant_types.append("refresh_token")  # (SEP-2207: say we will refresh)
    request = {
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        # SEP-837 (2026-07-28): "MUST specify an appropriate application_type";
        # a client that redirects to the loopback interface is a native one.
        "application_type": "native",
    }
    answer = yield Fetch(
        method="POST",
        url=server.registration_endpoint or "",
        headers={"Accept": "application/json", "Content-Type": "application/json"},
        body=msgspec.json.encode(request),
    )
    if _status(answer) not in (200, 201):
        raise OAuthError(f"dynamic client registration failed (HTTP {_status(answer)})")
    registered = decode_object(_body(answer), "registration response")
    client_id, secret = registered.get("client_id"), registered.get("client_secret")
    if not isinstance(client_id, str) or not client_id:
        raise OAuthError("the registration response has no client_id")
    granted = registered.get("token_endpoint_auth_method")
    return ClientInfo(
        issuer=server.issuer,
        client_id=client_id,
        client_secret=secret if isinstance(secret, str) else None,
        auth_method=granted if isinstance(granted, str) else method,
    )


# -- the grant ------------------------------------------------------------------------


def _grant_form(
    server: _Server,
    client: ClientInfo,
    config: ClientConfig,
    inputs: FlowInputs,
    scope: str | None,
) -> Generator[Request, Answer, dict[str, str]]:
    if config.grant_type == "client_credentials":
        return {"grant_type": "client_credentials"}
    if config.grant_type == "jwt_bearer":
        return (
            yield from jwt_bearer_form(
                server.issuer, server.resource, scope, config.identity_provider
            )
        )
    return (yield from _authorization_code(server, client, config, inputs, scope))


def _select_scope(
    server: _Server, challenge: Challenge, config: ClientConfig, previous: Tokens | None
) -> str | None:
    # "Use scope parameter from the initial WWW-Authenticate header ... if provided;
    # if scope is not available, use all scopes defined in scopes_supported from the
    # Protected Resource Metadata document, omitting the scope parameter if
    # scopes_supported is undefined" (2025-11-25 basic/authorization, Scope Selection).
    if config.scope is not None:
        wanted = config.scope.split()
    elif challenge.scope:
        wanted = challenge.scope.split()
    else:
        wanted = list(server.scopes_supported or ())
    if previous is not None and previous.scope:
        # SEP-2350 (2026-07-28): re-authorize with the union of what was granted before
        # and what the challenge asks, so a step-up loses nothing.
        wanted = previous.scope.split() + wanted
    as_scopes = _strings(server.metadata.get("scopes_supported"))
    if (
        config.want_refresh_token
        and config.grant_type == "authorization_code"
        and _OFFLINE_ACCESS in as_scopes
    ):
        # SEP-2207: offline_access only where the authorization server lists it.
        wanted.append(_OFFLINE_ACCESS)
    unique = list(dict.fromkeys(wanted))
    return " ".join(unique) if unique else None


def _authorization_code(
    server: _Server,
    client: ClientInfo,
    config: ClientConfig,
    inputs: FlowInputs,
    scope: str | None,
) -> Generator[Request, Answer, dict[str, str]]:
    methods = _strings(server.metadata.get("code_challenge_methods_supported"))
    if server.discovered and "S256" not in methods:
        # "If code_challenge_methods_supported is absent, ... MCP clients MUST refuse
        # to proceed" (2025-11-25 basic/authorization, Authorization Code Protection).
        raise OAuthError(f"{server.issuer} does not support PKCE with S256")
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": config.redirect_uri,
        "state": inputs.state,
        "code_challenge": code_challenge(inputs.code_verifier),
        "code_challenge_method": "S256",
        "resource": server.resource,
    }
    if scope:
        query["scope"] = scope
    endpoint = server.authorization_endpoint
    joiner = "&" if urlsplit(endpoint).query else "?"
    redirected = yield Redirect(url=endpoint + joiner + urlencode(query, quote_via=quote))
    if not isinstance(redirected, str):
        raise TypeError("a Redirect is answered with the redirect URL")
    code = _check_redirect(redirected, server, inputs)
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": config.redirect_uri,
        "code_verifier": inputs.code_verifier,
    }


def _check_redirect(redirected: str, server: _Server, inputs: FlowInputs) -> str:
    params = {k: v[0] for k, v in parse_qs(urlsplit(redirected).query).items()}
    if params.get("state") != inputs.state:
        raise OAuthError("the redirect's state is not ours (a forged or stale redirect)")
    iss = params.get("iss")
    advertised = server.metadata.get("authorization_response_iss_parameter_supported") is True
    # RFC 9207 §2.4: compare iss, when present, by simple string comparison with the
    # issuer recorded at discovery; when the server advertised it, it must be present
    # (SEP-2468, 2026-07-28). A mix-up attack shows as another issuer here.
    if iss is None and advertised:
        raise OAuthError("the redirect lacks the iss its authorization server promised")
    if iss is not None and server.discovered and iss != server.issuer:
        raise OAuthError(f"the redirect's iss {iss!r} is not {server.issuer!r}")
    if "error" in params:
        raise OAuthError(f"the authorization server refused: {params['error'][:200]}")
    code = params.get("code")
    if not code:
        raise OAuthError("the redirect carries no authorization code")
    return code


def _bind(tokens: Tokens, server: _Server, requested: str | None) -> Tokens:
    return replace(
        tokens,
        scope=tokens.scope if tokens.scope is not None else requested,
        issuer=server.issuer,
        token_endpoint=server.token_endpoint,
        resource=server.resource,
    )


# -- small readers --------------------------------------------------------------------


def _status(answer: Answer) -> int:
    return answered(answer).status


def _body(answer: Answer) -> bytes:
    return answered(answer).body


def _strings(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()
