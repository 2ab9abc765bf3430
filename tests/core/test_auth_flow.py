"""mcpcore.auth: the OAuth flow, sans-IO, against an authorization server made of dicts.

The flow yields what it needs; `Servers` answers each `Fetch` from a table of URLs (a
missing URL is a 404) and plays the user at the `Redirect` the way a real authorization
server does (the code, the ``state``, the ``iss`` it is told to send). What the flow sent
is recorded, so each test reads the requests as the servers saw them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore.auth import (
    MAX_METADATA_SIZE,
    Challenge,
    ClientConfig,
    ClientInfo,
    Fetch,
    Fetched,
    FlowInputs,
    Grant,
    OAuthError,
    Redirect,
    Request,
    SignAssertion,
    Tokens,
    as_metadata_urls,
    authorize,
    code_challenge,
    parse_challenge,
    prm_urls,
    resource_allowed,
)

MCP = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
PRM_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
INPUTS = FlowInputs(code_verifier="v" * 64, state="the-state", jti="jti-1", now=1000.0)
USER = ClientConfig(redirect_uri="http://127.0.0.1/callback")


def prm(**extra: Any) -> dict[str, Any]:
    return {"resource": MCP, "authorization_servers": [AS], **extra}


def as_metadata(issuer: str = AS, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        **extra,
    }


@dataclass
class Servers:
    """The resource and authorization servers: URL → JSON, and the user's redirect."""

    documents: dict[str, Any] = field(default_factory=dict)
    iss: str | None = AS  # what the authorization server puts in its redirect
    token: dict[str, Any] = field(
        default_factory=lambda: {"access_token": "at-1", "token_type": "Bearer"}
    )
    token_status: int = 200
    seen: list[Request] = field(default_factory=list)

    def answer(self, request: Request) -> Fetched | str:
        self.seen.append(request)
        if isinstance(request, Redirect):
            query = parse_qs(urlsplit(request.url).query)
            back = {"code": "the-code", "state": query["state"][0]}
            if self.iss is not None:
                back["iss"] = self.iss
            return f"{query['redirect_uri'][0]}?{urlencode(back)}"
        if isinstance(request, SignAssertion):
            return "signed." + ".".join(sorted(request.claims))
        assert isinstance(request, Fetch)  # (the plain flow asks for nothing else)
        if request.url.endswith("/token"):
            return Fetched(status=self.token_status, body=json.dumps(self.token).encode())
        if request.url.endswith("/register"):
            return Fetched(status=201, body=json.dumps({"client_id": "dcr-client"}).encode())
        if request.url in self.documents:
            return Fetched(status=200, body=json.dumps(self.documents[request.url]).encode())
        return Fetched(status=404)

    def fetched(self) -> list[str]:
        return [r.url for r in self.seen if isinstance(r, Fetch)]

    def one(self, predicate: Callable[[Request], bool]) -> Request:
        (found,) = [r for r in self.seen if predicate(r)]
        return found

    def authorization(self) -> dict[str, str]:
        request = self.one(lambda r: isinstance(r, Redirect))
        assert isinstance(request, Redirect)
        return {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}

    def token_request(self) -> tuple[Mapping[str, str], dict[str, str]]:
        request = self.one(lambda r: isinstance(r, Fetch) and r.url.endswith("/token"))
        assert isinstance(request, Fetch)
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        return request.headers, form


def standard() -> Servers:
    return Servers(
        documents={PRM_URL: prm(), f"{AS}/.well-known/oauth-authorization-server": as_metadata()}
    )


def drive(flow: Generator[Request, Fetched | str, Any], servers: Servers) -> Any:
    request = next(flow)
    while True:
        try:
            request = flow.send(servers.answer(request))
        except StopIteration as done:
            return done.value


def run(
    servers: Servers,
    challenge: Challenge | None = None,
    config: ClientConfig = USER,
    **kwargs: Any,
) -> Grant:
    flow = authorize(
        MCP,
        challenge or Challenge(resource_metadata=PRM_URL),
        config=config,
        inputs=INPUTS,
        **kwargs,
    )
    grant = drive(flow, servers)
    assert isinstance(grant, Grant)
    return grant


# -- the authorization code flow ----------------------------------------------------


def test_the_whole_flow_discovers_registers_and_exchanges_the_code_with_pkce() -> None:
    servers = standard()
    grant = run(servers, Challenge(resource_metadata=PRM_URL, scope="mcp:read"))
    assert servers.fetched() == [
        PRM_URL,
        f"{AS}/.well-known/oauth-authorization-server",
        f"{AS}/register",
        f"{AS}/token",
    ]
    query = servers.authorization()
    assert query["response_type"] == "code"
    assert query["client_id"] == "dcr-client"
    assert query["code_challenge"] == code_challenge(INPUTS.code_verifier)
    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == MCP
    assert query["scope"] == "mcp:read"
    assert query["state"] == INPUTS.state
    _, form = servers.token_request()
    assert form == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": USER.redirect_uri,
        "code_verifier": INPUTS.code_verifier,
        "resource": MCP,
        "scope": "mcp:read",
        "client_id": "dcr-client",
    }
    assert grant.tokens.access_token == "at-1"
    assert grant.tokens.issuer == AS
    assert grant.tokens.scope == "mcp:read"  # (requested: the server did not say)
    assert grant.client == ClientInfo(issuer=AS, client_id="dcr-client", auth_method="none")


def test_the_s256_challenge_is_rfc_7636s_example() -> None:
    # RFC 7636 Appendix B.
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert code_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_registration_says_what_the_client_is() -> None:
    servers = standard()
    run(servers)
    request = servers.one(lambda r: isinstance(r, Fetch) and r.url.endswith("/register"))
    assert isinstance(request, Fetch)
    body = json.loads(request.body)
    assert body["redirect_uris"] == [USER.redirect_uri]
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["application_type"] == "native"
    assert body["token_endpoint_auth_method"] == "none"


def test_without_a_challenge_url_the_path_based_location_comes_before_the_root() -> None:
    servers = standard()
    root = "https://mcp.example.com/.well-known/oauth-protected-resource"
    servers.documents[root] = servers.documents.pop(PRM_URL)
    run(servers, Challenge())
    assert servers.fetched()[:2] == [PRM_URL, root]


def test_the_well_known_urls_follow_2025_11_25() -> None:
    assert prm_urls("https://h/mcp/") == [
        "https://h/.well-known/oauth-protected-resource/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h") == ["https://h/.well-known/oauth-protected-resource"]
    assert as_metadata_urls("https://h/tenant1") == [
        "https://h/.well-known/oauth-authorization-server/tenant1",
        "https://h/.well-known/openid-configuration/tenant1",
        "https://h/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://h") == [
        "https://h/.well-known/oauth-authorization-server",
        "https://h/.well-known/openid-configuration",
    ]


def test_openid_configuration_is_the_fallback_for_metadata() -> None:
    servers = Servers(
        documents={PRM_URL: prm(), f"{AS}/.well-known/openid-configuration": as_metadata()}
    )
    assert run(servers).tokens.access_token == "at-1"


# -- refusals ---------------------------------------------------------------------


def test_metadata_for_another_resource_stops_the_flow() -> None:
    servers = standard()
    servers.documents[PRM_URL] = prm(resource="https://evil.example.com/mcp")
    with pytest.raises(OAuthError, match="evil"):
        run(servers)
    assert servers.fetched() == [PRM_URL]


@pytest.mark.parametrize(
    ("resource", "allowed"),
    [
        (MCP, True),
        ("https://mcp.example.com", True),
        ("https://mcp.example.com/", True),
        ("https://MCP.example.com/mcp", True),
        ("https://mcp.example.com/other", False),
        ("https://mcp.example.com/mc", False),
        ("http://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", False),
    ],
)
def test_which_resources_stand_for_the_server(resource: str, allowed: bool) -> None:
    assert resource_allowed(resource, MCP) is allowed


def test_metadata_under_another_issuer_is_refused() -> None:
    servers = standard()
    servers.documents[f"{AS}/.well-known/oauth-authorization-server"] = as_metadata(
        issuer="https://attacker.example.com"
    )
    with pytest.raises(OAuthError, match=r"not https://auth\.example\.com's"):
        run(servers)
    assert not [url for url in servers.fetched() if "attacker" in url]


@pytest.mark.parametrize(
    ("advertised", "iss", "accepted"),
    [
        (True, AS, True),
        (None, None, True),
        (True, None, False),  # promised, then missing
        (True, "https://evil.example.com", False),
        (None, "https://evil.example.com", False),  # compared even when not advertised
        (True, AS + "/", False),  # a plain string comparison: no normalisation
    ],
)
def test_the_redirects_iss_is_checked(
    advertised: bool | None, iss: str | None, accepted: bool
) -> None:
    servers = standard()
    extra: dict[str, Any] = {}
    if advertised:
        extra["authorization_response_iss_parameter_supported"] = True
    servers.documents[f"{AS}/.well-known/oauth-authorization-server"] = as_metadata(**extra)
    servers.iss = iss
    if accepted:
        run(servers)
    else:
        with pytest.raises(OAuthError, match="iss"):
            run(servers)
        assert not [url for url in servers.fetched() if url.endswith("/token")]


def test_a_redirect_with_another_state_is_refused() -> None:
    flow = authorize(MCP, Challenge(resource_metadata=PRM_URL), config=USER, inputs=INPUTS)
    servers = standard()
    request = next(flow)
    while not isinstance(request, Redirect):
        request = flow.send(servers.answer(request))
    with pytest.raises(OAuthError, match="state"):
        flow.send(f"{USER.redirect_uri}?code=c&state=forged&iss={AS}")


def test_a_server_without_s256_is_refused() -> None:
    servers = standard()
    servers.documents[f"{AS}/.well-known/oauth-authorization-server"] = as_metadata(
        code_challenge_methods_supported=["plain"]
    )
    with pytest.raises(OAuthError, match="PKCE"):
        run(servers)


def test_an_http_authorization_server_off_loopback_is_refused() -> None:
    servers = standard()
    servers.documents[PRM_URL] = prm(authorization_servers=["http://auth.example.com"])
    with pytest.raises(OAuthError, match="not HTTPS"):
        run(servers)


def test_an_oversized_document_is_refused() -> None:
    servers = standard()
    servers.documents[PRM_URL] = prm(padding="x" * MAX_METADATA_SIZE)
    with pytest.raises(OAuthError, match="exceeds"):
        run(servers)


def test_a_refused_token_request_names_the_error_not_the_secrets() -> None:
    servers = standard()
    servers.token_status = 400
    servers.token = {"error": "invalid_grant"}
    config = ClientConfig(client_id="pre", client_secret="s3cret")
    with pytest.raises(OAuthError) as caught:
        run(servers, config=config)
    assert "invalid_grant" in str(caught.value)
    assert "s3cret" not in str(caught.value)


# -- scopes -------------------------------------------------------------------------


def test_scope_comes_from_the_challenge_then_the_resource_then_nowhere() -> None:
    servers = standard()
    servers.documents[PRM_URL] = prm(scopes_supported=["a", "b"])
    run(servers, Challenge(resource_metadata=PRM_URL, scope="c"))
    assert servers.authorization()["scope"] == "c"
    servers.seen.clear()
    run(servers)
    assert servers.authorization()["scope"] == "a b"
    servers = standard()
    run(servers)
    assert "scope" not in servers.authorization()


def test_offline_access_only_where_the_authorization_server_lists_it() -> None:
    servers = standard()
    servers.documents[PRM_URL] = prm(scopes_supported=["mcp"])
    metadata_url = f"{AS}/.well-known/oauth-authorization-server"
    servers.documents[metadata_url] = as_metadata(scopes_supported=["mcp", "offline_access"])
    run(servers)
    assert servers.authorization()["scope"] == "mcp offline_access"
    servers.seen.clear()
    servers.documents[metadata_url] = as_metadata(scopes_supported=["mcp"])
    run(servers)
    assert servers.authorization()["scope"] == "mcp"


def test_a_step_up_asks_for_the_union_and_does_not_refresh() -> None:
    servers = standard()
    previous = Tokens(access_token="old", refresh_token="rt", scope="mcp:basic", issuer=AS)
    challenge = parse_challenge(
        f'Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{PRM_URL}"'
    )
    run(servers, challenge, previous=previous)
    assert servers.authorization()["scope"] == "mcp:basic mcp:write"
    _, form = servers.token_request()
    assert form["grant_type"] == "authorization_code"


# -- clients ------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_a_pre_registered_client_authenticates_as_the_server_supports(method: str) -> None:
    servers = standard()
    metadata_url = f"{AS}/.well-known/oauth-authorization-server"
    servers.documents[metadata_url] = as_metadata(token_endpoint_auth_methods_supported=[method])
    config = ClientConfig(client_id="pre id", client_secret="s:cret")
    grant = run(servers, config=config)
    assert not [url for url in servers.fetched() if url.endswith("/register")]
    headers, form = servers.token_request()
    if method == "client_secret_basic":
        pair = base64.b64decode(headers["Authorization"].removeprefix("Basic ")).decode()
        assert pair == "pre%20id:s%3Acret"  # RFC 6749 §2.3.1: form-encoded, then Basic
        assert "client_secret" not in form
    else:
        assert (form["client_id"], form["client_secret"]) == ("pre id", "s:cret")
    assert "s:cret" not in repr(grant)


def test_a_client_id_metadata_document_replaces_registration_where_supported() -> None:
    servers = standard()
    metadata_url = f"{AS}/.well-known/oauth-authorization-server"
    servers.documents[metadata_url] = as_metadata(client_id_metadata_document_supported=True)
    cimd = "https://client.example.com/metadata.json"
    run(servers, config=ClientConfig(client_metadata_url=cimd))
    assert servers.authorization()["client_id"] == cimd
    assert not [url for url in servers.fetched() if url.endswith("/register")]


def test_a_known_registration_is_reused_at_its_issuer_only() -> None:
    servers = standard()
    known = {AS: ClientInfo(issuer=AS, client_id="kept")}
    run(servers, clients=known)
    assert servers.authorization()["client_id"] == "kept"
    servers = standard()
    run(servers, clients={"https://other.example.com": ClientInfo(issuer="x", client_id="kept")})
    assert servers.authorization()["client_id"] == "dcr-client"


def test_no_registration_and_no_client_id_is_an_error() -> None:
    servers = standard()
    metadata = as_metadata()
    del metadata["registration_endpoint"]
    servers.documents[f"{AS}/.well-known/oauth-authorization-server"] = metadata
    with pytest.raises(OAuthError, match="pre-register"):
        run(servers)


# -- refresh, migration, client credentials, 2025-03-26 -------------------------------


def test_a_401_with_a_refresh_token_refreshes() -> None:
    servers = standard()
    servers.token = {"access_token": "at-2", "token_type": "bearer", "expires_in": 60}
    previous = Tokens(
        access_token="old",
        refresh_token="rt",
        issuer=AS,
        token_endpoint=f"{AS}/token",
        resource=MCP,
    )
    grant = run(servers, previous=previous, clients={AS: ClientInfo(issuer=AS, client_id="c")})
    assert not [r for r in servers.seen if isinstance(r, Redirect)]
    _, form = servers.token_request()
    assert form == {
        "grant_type": "refresh_token",
        "refresh_token": "rt",
        "resource": MCP,
        "client_id": "c",
    }
    assert grant.tokens.access_token == "at-2"
    assert grant.tokens.refresh_token == "rt"  # (kept: the server issued no new one)
    assert grant.tokens.expires_at == INPUTS.now + 60


def test_a_new_authorization_server_gets_nothing_of_the_old_one() -> None:
    servers = standard()
    previous = Tokens(
        access_token="old", refresh_token="rt", scope="s", issuer="https://old.example.com"
    )
    old_client = ClientInfo(issuer="https://old.example.com", client_id="old-client")
    grant = run(servers, previous=previous, clients={old_client.issuer: old_client})
    assert servers.authorization()["client_id"] == "dcr-client"
    assert "scope" not in servers.authorization()
    assert grant.client.issuer == AS


def test_client_credentials_with_a_private_key_jwt() -> None:
    servers = standard()
    config = ClientConfig(
        grant_type="client_credentials", client_id="machine", signing_algorithm="ES256"
    )
    run(servers, config=config)
    assertion = servers.one(lambda r: isinstance(r, SignAssertion))
    assert isinstance(assertion, SignAssertion)
    assert dict(assertion.claims) == {
        "iss": "machine",
        "sub": "machine",
        "aud": AS,
        "iat": 1000,
        "exp": 1300,
        "jti": "jti-1",
    }
    _, form = servers.token_request()
    assert form["grant_type"] == "client_credentials"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert form["client_assertion"].startswith("signed.")
    assert not [r for r in servers.seen if isinstance(r, Redirect)]


def test_a_2025_03_26_server_without_any_metadata_gets_the_default_endpoints() -> None:
    servers = Servers(iss=None)
    grant = run(servers, Challenge())
    origin = "https://mcp.example.com"
    assert servers.fetched()[-2:] == [f"{origin}/register", f"{origin}/token"]
    query = servers.authorization()
    assert query["resource"] == MCP
    assert grant.tokens.issuer == origin


def test_a_2025_03_26_server_publishes_metadata_at_its_root() -> None:
    origin = "https://mcp.example.com"
    metadata = as_metadata(issuer=f"{origin}/oauth")  # (an issuer of its choosing)
    servers = Servers(documents={f"{origin}/.well-known/oauth-authorization-server": metadata})
    servers.iss = f"{origin}/oauth"
    run(servers, Challenge())
    assert servers.fetched()[-1] == f"{origin}/oauth/token"


# -- challenges and what is shown -----------------------------------------------------


def test_challenges_are_parsed_as_rfc_9110_auth_params() -> None:
    header = (
        'Basic realm="x", Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="https://h/prm", error_description="say \\"hi\\""'
    )
    assert parse_challenge(header) == Challenge(
        resource_metadata="https://h/prm", scope="a b", error="insufficient_scope"
    )
    assert parse_challenge("Bearer") == Challenge()
    assert parse_challenge("Basic realm=x") == Challenge()
    assert parse_challenge(None) == Challenge()
    assert parse_challenge("Bearer error=invalid_token").error == "invalid_token"


@given(st.text(max_size=300))
def test_any_challenge_parses_or_is_empty(header: str) -> None:
    assert isinstance(parse_challenge(header), Challenge)


def test_secrets_stay_out_of_reprs() -> None:
    fetch = Fetch(
        method="POST",
        url=f"{AS}/token",
        headers={"Authorization": "Basic c2VjcmV0"},
        body=b"code=x",
    )
    assert "c2VjcmV0" not in repr(fetch)
    assert "code=x" not in repr(fetch)
    tokens = Tokens(access_token="at-secret", refresh_token="rt-secret")
    assert "secret" not in repr(tokens)
    assert "pw" not in repr(ClientConfig(client_secret="pw"))
    assert "pw" not in repr(ClientInfo(issuer=AS, client_id="c", client_secret="pw"))
    assert "v" * 10 not in repr(INPUTS)


# -- the fuzz invariant -------------------------------------------------------------

_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = [
    "resource",
    "authorization_servers",
    "scopes_supported",
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "client_id_metadata_document_supported",
    "client_id",
    "client_secret",
    "access_token",
    "token_type",
    "expires_in",
    "refresh_token",
    "scope",
]
# A document: the real one with some fields replaced by anything, or not JSON at all.
_DOCUMENT = st.one_of(
    st.dictionaries(st.sampled_from(_KEYS), _ANY_JSON, max_size=6),
    st.binary(max_size=40),
)


def _play(answers: list[tuple[int, dict[str, Any] | bytes] | None], redirect: str | None) -> object:
    """Drive the flow with ``answers`` (None: the real servers' answer); its value or error."""
    servers = standard()
    flow = authorize(MCP, Challenge(resource_metadata=PRM_URL), config=USER, inputs=INPUTS)
    scripted = iter(answers)
    try:
        request = next(flow)
        while True:
            answer: Fetched | str
            if isinstance(request, Redirect):
                answer = servers.answer(request) if redirect is None else redirect
            elif isinstance(request, SignAssertion):
                answer = "signed"
            else:
                found = next(scripted, None)
                if found is None:
                    answer = servers.answer(request)  # (the real servers take over)
                else:
                    status, document = found
                    body = document if isinstance(document, bytes) else json.dumps(document)
                    answer = Fetched(
                        status=status, body=body if isinstance(body, bytes) else body.encode()
                    )
            request = flow.send(answer)
    except StopIteration as done:
        return done.value
    except OAuthError as error:
        return error


@given(
    answers=st.lists(
        st.none() | st.tuples(st.sampled_from([200, 201, 400, 404, 500]), _DOCUMENT), max_size=8
    ),
    redirect=st.none() | st.text(max_size=60),
)
def test_any_server_answers_end_in_a_grant_or_an_oauth_error(
    answers: list[tuple[int, dict[str, Any] | bytes] | None], redirect: str | None
) -> None:
    # h11's fuzz invariant, for the flow: whatever the servers send, it completes or
    # raises OAuthError, never anything else. (None: the real servers' answer there.)
    assert isinstance(_play(answers, redirect), Grant | OAuthError)
