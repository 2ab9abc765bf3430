"""`transports.OAuth` in `open_http_client`, over real sockets.

One scripted HTTP server plays both parts: the MCP endpoint (`McpScript`, behind a bearer
check that answers 401 with ``resource_metadata``) and the authorization server
(metadata, registration, token endpoint). ``on_redirect`` plays the user: it reads the
authorization URL and returns the redirect the server would send. The full conformance
flows, against the official suite's authorization server, are
`tests/conformance/test_client_suite.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpcore.auth import ClientInfo, OAuthError, Tokens
from tests.transports.http_mcp_script import McpScript
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.trio_helpers import trio_test
from transports import HttpStatusError, InMemoryTokenStorage, OAuth, open_http_client
from transports._http.client.assertion import sign_assertion
from transports._http.client.oauth import MAX_REMEMBERED_CLIENTS


@dataclass
class AuthServer:
    """The authorization server's and the resource's behaviour, and what they saw."""

    base: str = ""
    resource: str | None = None  # (None: the MCP URL)
    expires_in: int = 3600
    refresh_token: str | None = "rt-1"
    forbid: str | None = None  # a 403 error for every authorized request
    issued: list[str] = field(default_factory=list)
    token_forms: list[dict[str, str]] = field(default_factory=list)
    mcp: McpScript = field(default_factory=lambda: McpScript("legacy"))

    async def __call__(self, request: Received, reply: Reply) -> None:
        path = urlsplit(request.target).path
        if path == "/mcp":
            await self.protected(request, reply)
        elif path == "/.well-known/oauth-protected-resource/mcp":
            resource = self.resource or f"{self.base}/mcp"
            await reply.json({"resource": resource, "authorization_servers": [self.base]})
        elif path == "/.well-known/oauth-authorization-server":
            await reply.json(self.metadata())
        elif path == "/register":
            await reply.json({"client_id": "registered"}, status=201)
        elif path == "/token":
            await self.token(request, reply)
        else:
            await reply.status(404)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True,
        }

    async def protected(self, request: Received, reply: Reply) -> None:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if request.method == "POST" and token not in self.issued:
            challenge = (
                f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            )
            await reply.json({"error": "invalid_token"}, 401, [("www-authenticate", challenge)])
        elif self.forbid is not None:
            await reply.json({}, 403, [("www-authenticate", f'Bearer error="{self.forbid}"')])
        else:
            await self.mcp(request, reply)

    async def token(self, request: Received, reply: Reply) -> None:
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        self.token_forms.append(form)
        token = f"at-{len(self.issued) + 1}"
        self.issued.append(token)
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if self.refresh_token is not None:
            answer["refresh_token"] = self.refresh_token
        await reply.json(answer)

    def user(self, authorization_url: str) -> str:
        """The user signs in: the redirect the authorization endpoint answers with."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()}
        back = {"code": "the-code", "state": query["state"], "iss": self.base}
        return f"{query['redirect_uri']}?{urlencode(back)}"


@trio_test
async def test_a_401_runs_the_flow_and_the_request_goes_again_with_the_token() -> None:
    auth = AuthServer()
    async with scripted_server(auth) as server:
        auth.base = server.url.removesuffix("/mcp")
        storage = InMemoryTokenStorage()
        oauth = OAuth(on_redirect=auth.user, storage=storage)
        async with open_http_client(server.url, auth=oauth, mode="legacy") as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]
        assert auth.token_forms[0]["grant_type"] == "authorization_code"
        assert auth.token_forms[0]["resource"] == server.url
        kept = await storage.get_tokens()
        assert kept is not None
        assert kept.access_token == "at-1"
        # A second client with the same storage starts with the token: no 401, no flow.
        refused = len([r for r in server.requests if r.target == "/token"])
        async with open_http_client(
            server.url, auth=OAuth(on_redirect=auth.user, storage=storage), mode="legacy"
        ) as client:
            await client.list_tools()
        assert len([r for r in server.requests if r.target == "/token"]) == refused


@trio_test
async def test_an_expiring_token_is_refreshed_before_it_is_sent() -> None:
    auth = AuthServer(expires_in=0)
    async with scripted_server(auth) as server:
        auth.base = server.url.removesuffix("/mcp")
        async with open_http_client(
            server.url, auth=OAuth(on_redirect=auth.user), mode="legacy"
        ) as client:
            await client.list_tools()
        grants = [form["grant_type"] for form in auth.token_forms]
        assert grants[0] == "authorization_code"
        assert "refresh_token" in grants[1:]
        refresh = next(f for f in auth.token_forms if f["grant_type"] == "refresh_token")
        assert refresh["refresh_token"] == "rt-1"
        assert refresh["resource"] == server.url


@trio_test
async def test_metadata_for_another_resource_fails_the_connection() -> None:
    auth = AuthServer(resource="https://evil.example.com/mcp")
    async with scripted_server(auth) as server:
        auth.base = server.url.removesuffix("/mcp")
        with pytest.raises(OAuthError, match="evil"):
            async with open_http_client(
                server.url, auth=OAuth(on_redirect=auth.user), mode="legacy"
            ):
                pass
        assert not auth.token_forms


@trio_test
async def test_a_403_that_is_not_about_scope_is_returned_as_it_is() -> None:
    auth = AuthServer(forbid="access_denied")
    async with scripted_server(auth) as server:
        auth.base = server.url.removesuffix("/mcp")
        with pytest.raises(HttpStatusError) as caught:
            async with open_http_client(
                server.url, auth=OAuth(on_redirect=auth.user), mode="legacy"
            ):
                pass
        assert caught.value.status == 403
        assert len(auth.token_forms) == 1  # (the 401's flow, and no other)


def test_the_oauth_settings_are_checked_and_keep_secrets_out_of_reprs() -> None:
    with pytest.raises(ValueError, match="on_redirect"):
        OAuth()
    with pytest.raises(ValueError, match="client_id"):
        OAuth(grant_type="client_credentials")
    oauth = OAuth(grant_type="client_credentials", client_id="machine", client_secret="pw-123")
    assert "pw-123" not in repr(oauth)
    assert "pw-123" not in repr(oauth.config)
    assert "at-secret" not in repr(Tokens(access_token="at-secret"))


def test_a_private_key_jwt_assertion_verifies_with_the_public_key() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    claims = {"iss": "c", "sub": "c", "aud": "https://as", "iat": 1, "exp": 2**31, "jti": "j"}
    token = sign_assertion(claims, pem, "ES256")
    decoded = jwt.decode(token, key.public_key(), algorithms=["ES256"], audience="https://as")
    assert decoded == claims
    with pytest.raises(OAuthError) as caught:
        sign_assertion(claims, "not a key", "ES256")
    assert "not a key" not in str(caught.value)


@trio_test
async def test_the_memory_storage_keeps_a_bounded_number_of_registrations() -> None:
    storage = InMemoryTokenStorage()
    for n in range(MAX_REMEMBERED_CLIENTS + 5):
        await storage.set_client(ClientInfo(issuer=f"https://as{n}.example.com", client_id="c"))
    clients = await storage.get_clients()
    assert len(clients) == MAX_REMEMBERED_CLIENTS
    assert "https://as0.example.com" not in clients
    assert f"https://as{MAX_REMEMBERED_CLIENTS + 4}.example.com" in clients
