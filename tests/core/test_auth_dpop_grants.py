"""mcpcore.auth: DPoP at the token endpoint, and the JWT-bearer grants, sans-IO.

The servers are test_auth_flow's tables; `Scripted` adds what these flows ask for (a
proof, a workload's JWT, an ID token) and answers the token endpoints from a script, so
each test reads the requests as the servers saw them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs

import pytest

from mcpcore.auth import (
    JWT_BEARER_GRANT,
    MAX_NONCE_RETRIES,
    Challenge,
    ClientConfig,
    Fetch,
    Fetched,
    Grant,
    IdentityProvider,
    OAuthError,
    ObtainAssertion,
    Request,
    SignAssertion,
    SignProof,
    access_token_hash,
    authorize,
    parse_challenge,
    proof_target,
)
from tests.core.test_auth_flow import (
    AS,
    INPUTS,
    MCP,
    PRM_URL,
    Servers,
    as_metadata,
    drive,
    prm,
)

IDP_TOKEN = "https://idp.example.com/token"
DPOP_METADATA = {"dpop_signing_alg_values_supported": ["ES256"]}
NONCE_REFUSAL = Fetched(
    status=400,
    headers={"dpop-nonce": "n-1"},
    body=json.dumps({"error": "use_dpop_nonce"}).encode(),
)


def ok(token_type: str = "Bearer", token: str = "at-1") -> Fetched:
    return Fetched(
        status=200, body=json.dumps({"access_token": token, "token_type": token_type}).encode()
    )


@dataclass
class Scripted(Servers):
    """`Servers` whose token endpoints answer from a script, and who sign and assert."""

    script: list[Fetched] = field(default_factory=list)

    def answer(self, request: Request) -> Fetched | str:
        if isinstance(request, SignProof):
            self.seen.append(request)
            return f"proof-{len([r for r in self.seen if isinstance(r, SignProof)])}"
        if isinstance(request, ObtainAssertion):
            self.seen.append(request)
            return f"{request.kind}-jwt"
        if isinstance(request, Fetch) and request.url.endswith("/token") and self.script:
            self.seen.append(request)
            return self.script.pop(0)
        return super().answer(request)

    def token_requests(self, url: str = f"{AS}/token") -> list[Fetch]:
        return [r for r in self.seen if isinstance(r, Fetch) and r.url == url]


def servers(*script: Fetched, **metadata: Any) -> Scripted:
    return Scripted(
        documents={
            PRM_URL: prm(),
            f"{AS}/.well-known/oauth-authorization-server": as_metadata(**metadata),
        },
        script=list(script),
    )


def run(found: Scripted, config: ClientConfig) -> Grant:
    flow = authorize(MCP, Challenge(resource_metadata=PRM_URL), config=config, inputs=INPUTS)
    grant = drive(flow, found)
    assert isinstance(grant, Grant)
    return grant


def form_of(request: Fetch) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.body.decode()).items()}


MACHINE = ClientConfig(grant_type="client_credentials", client_id="m", client_secret="s")


# -- DPoP proofs ----------------------------------------------------------------------


def test_a_proof_names_the_request_without_its_query_and_hashes_the_token() -> None:
    request = SignProof(
        method="GET", url="https://mcp.example.com/mcp?x=1#f", nonce="n-1", access_token="tok"
    )
    claims = request.claims(jti="j-1", now=1000.9)
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims == {
        "jti": "j-1",
        "htm": "GET",
        "htu": "https://mcp.example.com/mcp",
        "iat": 1000,
        "nonce": "n-1",
        "ath": digest,
    }
    assert access_token_hash("tok") == digest
    assert proof_target("https://as.example/token") == "https://as.example/token"
    # At the token endpoint: no token yet, no nonce yet, so neither claim.
    assert set(SignProof(method="POST", url=f"{AS}/token").claims(jti="j", now=0)) == {
        "jti",
        "htm",
        "htu",
        "iat",
    }
    assert "tok" not in repr(request)


def test_where_dpop_is_advertised_the_token_request_carries_a_proof() -> None:
    found = servers(ok("DPoP"), **DPOP_METADATA)
    grant = run(found, MACHINE)
    (proof,) = [r for r in found.seen if isinstance(r, SignProof)]
    assert proof == SignProof(method="POST", url=f"{AS}/token", nonce=None)
    (request,) = found.token_requests()
    assert request.headers["DPoP"] == "proof-1"
    assert grant.tokens.token_type == "DPoP"


def test_an_advertising_server_may_still_issue_a_bearer_token() -> None:
    grant = run(servers(ok("Bearer"), **DPOP_METADATA), MACHINE)
    assert grant.tokens.token_type == "Bearer"


@pytest.mark.parametrize(
    ("metadata", "setting"),
    [({}, None), ({"dpop_signing_alg_values_supported": ["RS256"]}, None), (DPOP_METADATA, False)],
)
def test_no_proof_unless_advertised_with_es256_or_asked(
    metadata: dict[str, Any], setting: bool | None
) -> None:
    found = servers(ok(), **metadata)
    config = ClientConfig(grant_type="client_credentials", client_id="m", dpop=setting)
    run(found, config)
    assert not [r for r in found.seen if isinstance(r, SignProof)]
    assert "DPoP" not in found.token_requests()[0].headers


def test_a_dpop_token_we_did_not_ask_for_is_refused() -> None:
    with pytest.raises(OAuthError, match="not supported"):
        run(servers(ok("DPoP")), MACHINE)


def test_the_authorization_servers_nonce_is_used_in_one_retry() -> None:
    found = servers(NONCE_REFUSAL, ok("DPoP"), **DPOP_METADATA)
    grant = run(found, MACHINE)
    proofs = [r for r in found.seen if isinstance(r, SignProof)]
    assert [p.nonce for p in proofs] == [None, "n-1"]
    first, second = found.token_requests()
    assert (first.headers["DPoP"], second.headers["DPoP"]) == ("proof-1", "proof-2")
    assert form_of(first) == form_of(second)
    assert grant.tokens.token_type == "DPoP"


def test_a_server_that_keeps_asking_for_a_nonce_gets_one_retry_then_an_error() -> None:
    found = servers(*[NONCE_REFUSAL] * 5, **DPOP_METADATA)
    with pytest.raises(OAuthError, match="use_dpop_nonce"):
        run(found, MACHINE)
    assert len(found.token_requests()) == 1 + MAX_NONCE_RETRIES


def test_a_nonce_refusal_without_dpop_is_an_ordinary_refusal() -> None:
    found = servers(NONCE_REFUSAL)
    with pytest.raises(OAuthError):
        run(found, MACHINE)
    assert len(found.token_requests()) == 1


def test_dpop_challenges_are_parsed_like_bearer_ones() -> None:
    header = 'DPoP error="use_dpop_nonce", resource_metadata="https://mcp.example.com/prm"'
    assert parse_challenge(header) == Challenge(
        resource_metadata="https://mcp.example.com/prm", error="use_dpop_nonce"
    )


# -- workload identity (SEP-1933) -----------------------------------------------------


WORKLOAD = ClientConfig(grant_type="jwt_bearer", client_id="workload", scope="mcp")


def test_a_workloads_jwt_is_the_jwt_bearer_grant() -> None:
    found = servers(ok(), grant_types_supported=[JWT_BEARER_GRANT])
    grant = run(found, WORKLOAD)
    assert [r for r in found.seen if isinstance(r, ObtainAssertion)] == [
        ObtainAssertion(kind="jwt_bearer")
    ]
    (request,) = found.token_requests()
    assert form_of(request) == {
        "grant_type": JWT_BEARER_GRANT,
        "assertion": "jwt_bearer-jwt",
        "client_id": "workload",
        "resource": MCP,
        "scope": "mcp",
    }
    assert "Authorization" not in request.headers
    assert grant.tokens.access_token == "at-1"


@pytest.mark.parametrize("error", ["invalid_grant", "invalid_scope", "unauthorized_client"])
def test_a_refused_workload_grant_is_surfaced_without_a_retry(error: str) -> None:
    refusal = Fetched(status=400, body=json.dumps({"error": error}).encode())
    found = servers(refusal, ok())
    with pytest.raises(OAuthError, match=error) as raised:
        run(found, WORKLOAD)
    assert len(found.token_requests()) == 1  # (no retry, no other grant type)
    assert "jwt_bearer-jwt" not in str(raised.value)


# -- enterprise-managed authorization (SEP-990) ---------------------------------------


ENTERPRISE = ClientConfig(
    grant_type="jwt_bearer",
    client_id="mcp-client",
    client_secret="mcp-secret",
    identity_provider=IdentityProvider(token_endpoint=IDP_TOKEN, client_id="idp-client"),
)
JAG = Fetched(
    status=200,
    body=json.dumps(
        {
            "access_token": "the-id-jag",
            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "token_type": "N_A",
        }
    ).encode(),
)


def enterprise_servers(idp_answer: Fetched) -> Scripted:
    found = servers(ok(), token_endpoint_auth_methods_supported=["client_secret_basic"])
    found.script.insert(0, idp_answer)  # (the identity provider's token endpoint is first)
    return found


def test_the_id_token_becomes_an_id_jag_then_an_access_token() -> None:
    found = enterprise_servers(JAG)
    grant = run(found, ENTERPRISE)
    assert [r for r in found.seen if isinstance(r, ObtainAssertion)] == [
        ObtainAssertion(kind="id_token")
    ]
    (exchange,) = found.token_requests(IDP_TOKEN)
    assert form_of(exchange) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "subject_token": "id_token-jwt",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "audience": AS,
        "resource": MCP,
        "client_id": "idp-client",
    }
    (request,) = found.token_requests()
    assert form_of(request) == {
        "grant_type": JWT_BEARER_GRANT,
        "assertion": "the-id-jag",
        "resource": MCP,
    }
    basic = base64.b64encode(b"mcp-client:mcp-secret").decode()
    assert request.headers["Authorization"] == f"Basic {basic}"
    assert grant.tokens.access_token == "at-1"


@pytest.mark.parametrize(
    "answer",
    [
        Fetched(status=400, body=b'{"error": "invalid_grant"}'),
        ok(),  # (an access token, not an ID-JAG)
    ],
)
def test_an_identity_provider_without_an_id_jag_stops_the_flow(answer: Fetched) -> None:
    found = enterprise_servers(answer)
    with pytest.raises(OAuthError, match="identity provider"):
        run(found, ENTERPRISE)
    assert not found.token_requests()


def test_a_nonce_retry_signs_a_new_client_assertion() -> None:
    found = servers(NONCE_REFUSAL, ok("DPoP"), **DPOP_METADATA)
    config = ClientConfig(grant_type="client_credentials", client_id="m", signing_algorithm="ES256")
    run(found, config)
    jtis = [r.claims["jti"] for r in found.seen if isinstance(r, SignAssertion)]
    assert len(jtis) == 2
    assert len(set(jtis)) == 2  # (an assertion is never replayed)


def test_a_remembered_nonce_goes_in_the_first_proof_and_a_stale_one_is_retried() -> None:
    inputs = replace(INPUTS, dpop_nonces={f"{AS}/token": "n-0", "https://other/token": "x"})
    for script, nonces in [((ok("DPoP"),), ["n-0"]), ((NONCE_REFUSAL, ok("DPoP")), ["n-0", "n-1"])]:
        found = servers(*script, **DPOP_METADATA)
        challenge = Challenge(resource_metadata=PRM_URL)
        grant = drive(authorize(MCP, challenge, config=MACHINE, inputs=inputs), found)
        assert [r.nonce for r in found.seen if isinstance(r, SignProof)] == nonces
        assert grant.tokens.token_type == "DPoP"
