"""The JWT-bearer grant (RFC 7523 §2.1), and the token exchange that may feed it, sans-IO.

Two MCP extensions present a JWT to the authorization server instead of a user's code:

* Workload identity federation (``io.modelcontextprotocol/auth/wif``, SEP-1933): the
  workload's own JWT (from its platform: a Kubernetes service account, a cloud's
  metadata server...) is the assertion. The flow asks the driver for it with
  `ObtainAssertion` (``kind="jwt_bearer"``), each time, so a short-lived one is fresh.
* Enterprise-managed authorization (``io.modelcontextprotocol/enterprise-managed-
  authorization``, SEP-990): the user's ID token from the enterprise identity provider
  (``kind="id_token"``) is exchanged there (RFC 8693) for an Identity Assertion JWT
  Authorization Grant (ID-JAG) addressed to the MCP server's authorization server; the
  ID-JAG is the assertion.

A refused grant is an `OAuthError` naming the server's error code (``invalid_grant``,
``invalid_scope``, ``unauthorized_client``...): never retried, never another grant type
(SEP-1933: the assertion will not get better by asking again).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlencode

from mcpcore.auth._discovery import check_endpoint, decode_object, error_code
from mcpcore.auth._messages import Fetch, Fetched, OAuthError

__all__ = [
    "JWT_BEARER_GRANT",
    "IdentityProvider",
    "ObtainAssertion",
    "jwt_bearer_form",
]

#: RFC 7523 §2.1's ``grant_type``.
JWT_BEARER_GRANT: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
_FORM: Final = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}


@dataclass(frozen=True, kw_only=True, slots=True)
class IdentityProvider:
    """The enterprise identity provider of SEP-990, where ID tokens become ID-JAGs.

    Attributes:
        token_endpoint: Its token endpoint (RFC 8693 token exchange).
        client_id: Our client id there.
        client_secret: Our secret there, if any (sent as ``client_secret_post``).
    """

    token_endpoint: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ObtainAssertion:
    """Get a JWT from the application; answer it (a ``str``).

    Attributes:
        kind: ``jwt_bearer``: the assertion for the JWT-bearer grant itself (a workload
            identity token); ``id_token``: the user's ID token from the
            `IdentityProvider`, to exchange for an ID-JAG.
    """

    kind: Literal["jwt_bearer", "id_token"]


def jwt_bearer_form(
    issuer: str, resource: str, scope: str | None, idp: IdentityProvider | None
) -> Generator[Fetch | ObtainAssertion, Fetched | str, dict[str, str]]:
    """The JWT-bearer grant's form (without ``resource``/``scope``: the caller adds them)."""
    if idp is None:
        assertion = yield ObtainAssertion(kind="jwt_bearer")
    else:
        id_token = yield ObtainAssertion(kind="id_token")
        assertion = yield from _exchange(idp, _string(id_token), issuer, resource, scope)
    return {"grant_type": JWT_BEARER_GRANT, "assertion": _string(assertion)}


def _exchange(
    idp: IdentityProvider, id_token: str, issuer: str, resource: str, scope: str | None
) -> Generator[Fetch, Fetched | str, str]:
    # SEP-990: "the client ... makes a Token Exchange request (RFC 8693) to the IdP",
    # the ID-JAG's audience the MCP authorization server's issuer, its resource the MCP
    # server's (from the protected-resource metadata).
    form = {
        "grant_type": _TOKEN_EXCHANGE,
        "requested_token_type": _ID_JAG,
        "subject_token": id_token,
        "subject_token_type": _ID_TOKEN,
        "audience": issuer,
        "resource": resource,
        "client_id": idp.client_id,
    }
    if scope:
        form["scope"] = scope
    if idp.client_secret is not None:
        form["client_secret"] = idp.client_secret
    answer = yield Fetch(
        method="POST",
        url=check_endpoint(idp.token_endpoint, "identity provider token endpoint"),
        headers=_FORM,
        body=urlencode(form).encode("ascii"),
    )
    if not isinstance(answer, Fetched):
        raise TypeError("a Fetch is answered with a Fetched")
    if answer.status != 200:
        raise OAuthError(
            f"the identity provider refused the token exchange "
            f"(HTTP {answer.status}{error_code(answer.body)})"
        )
    body = decode_object(answer.body, "token exchange response")
    jag, kind = body.get("access_token"), body.get("issued_token_type")
    # RFC 8693 §2.2.1: issued_token_type says what access_token really is.
    if not isinstance(jag, str) or not jag or kind != _ID_JAG:
        raise OAuthError("the identity provider's answer is not an ID-JAG")
    return jag


def _string(answer: Fetched | str) -> str:
    if not isinstance(answer, str) or not answer:
        raise TypeError("an ObtainAssertion is answered with the JWT (a non-empty str)")
    return answer
