"""The token endpoint, sans-IO: asking for tokens, reading them, refreshing them.

`request_tokens` POSTs a grant's form: the client authenticated as its registration
says (`ClientInfo`: ``client_secret_basic`` or ``_post``, RFC 6749 §2.3.1;
``private_key_jwt``, RFC 7523, signed by the driver on `SignAssertion`), with a DPoP
proof where the authorization server advertises DPoP (RFC 9449 §5; one retry with the
server's nonce, `_dpop`), and reads the answer into `Tokens` (RFC 6749 §5.1).
`refresh` sends a refresh token (RFC 6749 §6). The grants themselves are `_flow`'s
and `_grants`'.
"""

from __future__ import annotations

import base64
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias
from urllib.parse import quote, urlencode

from mcpcore.auth._discovery import decode_object, error_code
from mcpcore.auth._dpop import MAX_NONCE_RETRIES, SignProof, nonce_challenge
from mcpcore.auth._messages import (
    Fetch,
    Fetched,
    FlowInputs,
    OAuthError,
    SignAssertion,
    answered,
)

__all__ = [
    "ASSERTION_LIFETIME",
    "ClientInfo",
    "Tokens",
    "refresh",
    "request_tokens",
]

#: What a token request yields, and what it is sent back.
TokenRequest: TypeAlias = Fetch | SignAssertion | SignProof
Answer: TypeAlias = Fetched | str

#: Seconds a ``private_key_jwt`` assertion is valid: it is used at once, and RFC 7523 §3
#: wants "a limited time window"; five minutes absorbs clock skew between the hosts.
ASSERTION_LIFETIME: Final = 300
_FORM: Final = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
_JWT_BEARER: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# token_type values (RFC 6749 §7.1; RFC 9449 §5: "DPoP" for a DPoP-bound token).
_BEARER: Final = "Bearer"
_DPOP: Final = "DPoP"


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientInfo:
    """Our registration at one authorization server.

    Attributes:
        issuer: The authorization server it is valid at (and only there).
        client_id: The client id.
        client_secret: The secret, if any (never shown).
        auth_method: The token endpoint authentication method.
    """

    issuer: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str = "none"


@dataclass(frozen=True, kw_only=True, slots=True)
class Tokens:
    """What a token endpoint gave, and what is needed to refresh it.

    Attributes:
        access_token: The access token (never shown).
        refresh_token: The refresh token, if any (never shown).
        expires_at: When the access token expires (the `FlowInputs.now` clock), if known.
        scope: The scopes granted (or, when the server did not say, requested).
        issuer: The authorization server that issued them.
        token_endpoint: Where to refresh them.
        resource: The ``resource`` they were requested for.
        token_type: ``Bearer``, or ``DPoP`` for a token bound to our DPoP key (sent with
            a proof, RFC 9449 §7).
    """

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None
    issuer: str = ""
    token_endpoint: str = ""
    resource: str = ""
    token_type: str = _BEARER


def refresh(
    tokens: Tokens, client: ClientInfo, inputs: FlowInputs
) -> Generator[TokenRequest, Answer, Tokens | None]:
    """Refresh ``tokens`` (RFC 6749 §6); None when the server refused (go authorize)."""
    if not tokens.refresh_token or not tokens.token_endpoint:
        return None
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens.refresh_token,
        "resource": tokens.resource,
    }
    try:
        fresh = yield from request_tokens(
            tokens.token_endpoint, form, client, inputs, dpop=tokens.token_type == _DPOP
        )
    except OAuthError:
        return None  # (an expired or revoked refresh token: authorize anew)
    return replace(
        fresh,
        # "the authorization server MAY issue a new refresh token" (RFC 6749 §6)
        refresh_token=fresh.refresh_token or tokens.refresh_token,
        scope=fresh.scope if fresh.scope is not None else tokens.scope,
        issuer=tokens.issuer,
        token_endpoint=tokens.token_endpoint,
        resource=tokens.resource,
    )


def request_tokens(
    endpoint: str, form: dict[str, str], client: ClientInfo, inputs: FlowInputs, *, dpop: bool
) -> Generator[TokenRequest, Answer, Tokens]:
    """POST ``form`` to the token endpoint, authenticated as ``client``; the tokens.

    With ``dpop`` the request carries a proof (RFC 9449 §5), with the nonce remembered
    for ``endpoint`` if any, and goes again with the nonce of a ``use_dpop_nonce``
    refusal (`MAX_NONCE_RETRIES` times).

    Raises:
        OAuthError: The request was refused, or its answer is not a token response.
    """
    nonce = inputs.dpop_nonces.get(endpoint) if dpop else None
    for attempt in range(1 + (MAX_NONCE_RETRIES if dpop else 0)):
        # (Authenticated anew each time: a client assertion is not to be replayed.)
        headers, sent_form = yield from _client_authentication(
            endpoint, form, client, inputs, attempt
        )
        body = urlencode(sent_form).encode("ascii")
        sent = headers
        if dpop:
            # RFC 9449 §5: one proof in one DPoP header, for this POST to this endpoint.
            proof = yield SignProof(method="POST", url=endpoint, nonce=nonce)
            if not isinstance(proof, str):
                raise TypeError("a SignProof is answered with the signed JWT")
            sent = {**headers, "DPoP": proof}
        answer = yield Fetch(method="POST", url=endpoint, headers=sent, body=body)
        nonce = nonce_challenge(answer) if dpop and isinstance(answer, Fetched) else None
        if nonce is None:
            break
    return _read_tokens(answer, inputs, dpop=dpop)


def _client_authentication(
    endpoint: str, form: dict[str, str], client: ClientInfo, inputs: FlowInputs, attempt: int
) -> Generator[TokenRequest, Answer, tuple[dict[str, str], dict[str, str]]]:
    headers = dict(_FORM)
    method = client.auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        # RFC 6749 §2.3.1: each part form-encoded, then Basic.
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post" and client.client_secret is not None:
        form = {**form, "client_id": client.client_id, "client_secret": client.client_secret}
    elif method == "private_key_jwt":
        claims = _assertion_claims(client, endpoint, inputs, attempt)
        assertion = yield SignAssertion(claims=claims)
        if not isinstance(assertion, str):
            raise TypeError("a SignAssertion is answered with the signed JWT")
        form = {**form, "client_assertion_type": _JWT_BEARER, "client_assertion": assertion}
    else:
        form = {**form, "client_id": client.client_id}
    return headers, form


def _assertion_claims(
    client: ClientInfo, endpoint: str, inputs: FlowInputs, attempt: int
) -> dict[str, object]:
    # RFC 7523 §3: iss and sub are the client id; aud identifies the authorization
    # server (its issuer, RFC 7523 §3 item 3 and SEP-1046's profile). A retried request
    # (a DPoP nonce) gets a jti of its own: "the JWT MAY contain a jti ... [the AS] may
    # ensure that JWTs are not replayed" (RFC 7523 §3 item 7).
    now = int(inputs.now)
    jti = inputs.jti if attempt == 0 else f"{inputs.jti}.{attempt}"
    return {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": client.issuer or endpoint,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
        "jti": jti,
    }


def _read_tokens(answer: Answer, inputs: FlowInputs, *, dpop: bool) -> Tokens:
    fetched = answered(answer)
    status = fetched.status
    if status != 200:
        error = error_code(fetched.body)
        raise OAuthError(f"the token request was refused (HTTP {status}{error})")
    body = decode_object(fetched.body, "token response")
    access, kind = body.get("access_token"), body.get("token_type")
    if not isinstance(access, str) or not access or not isinstance(kind, str):
        raise OAuthError("the token response lacks access_token or token_type")
    # A DPoP-bound token only where we sent a proof; an authorization server that
    # advertises DPoP may still issue a Bearer token (RFC 9449 §5).
    if kind.lower() == "dpop" and dpop:
        token_type = _DPOP
    elif kind.lower() == "bearer":
        token_type = _BEARER
    else:
        raise OAuthError(f"the token type {kind[:40]!r} is not supported")
    expires_in, refresh_token = body.get("expires_in"), body.get("refresh_token")
    scope = body.get("scope")
    return Tokens(
        access_token=access,
        refresh_token=refresh_token if isinstance(refresh_token, str) else None,
        expires_at=inputs.now + expires_in if isinstance(expires_in, int | float) else None,
        scope=scope if isinstance(scope, str) else None,
        token_type=token_type,
    )
