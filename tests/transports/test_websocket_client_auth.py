"""`open_websocket_client(auth=...)`: a refused handshake is authorized, then made again.

A real `serve_websocket` requires a token (`BearerAuth`: 401 with ``resource_metadata``,
and the protected-resource metadata over HTTP on the same port); a scripted HTTP server
plays the authorization server (metadata and token endpoint). `OAuth` runs its flow on
the handshake's 401 and the client connects with the token it got.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.transports.http_raw import build_test_server
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.test_websocket_client import SIMPLE_TEXT, text_of
from tests.transports.trio_helpers import trio_test
from tests.transports.ws_raw import running_ws
from transports import BearerAuth, HttpStatusError, OAuth, Principal, open_websocket_client

TOKEN = "issued-token"


def verify(token: str) -> Principal | None:
    return Principal("workload") if token == TOKEN else None


@trio_test
async def test_oauth_authorizes_a_refused_handshake_and_connects() -> None:
    token_forms: list[dict[str, str]] = []
    base = ""

    async def authorization_server(request: Received, reply: Reply) -> None:
        path = urlsplit(request.target).path
        if path == "/.well-known/oauth-authorization-server":
            await reply.json(
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token",
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                }
            )
        elif path == "/token":
            token_forms.append({k: v[0] for k, v in parse_qs(request.body.decode()).items()})
            await reply.json({"access_token": TOKEN, "token_type": "Bearer"})
        else:
            await reply.status(404)

    async with scripted_server(authorization_server, path="") as issuer:
        base = issuer.url
        server, _ = build_test_server()
        async with running_ws(server, auth=BearerAuth(verify, [base])) as port:
            url = f"ws://127.0.0.1:{port}/ws"
            oauth = OAuth(grant_type="client_credentials", client_id="ws-client", client_secret="s")
            async with open_websocket_client(url, auth=oauth, mode="modern") as client:
                assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
            # The next connection starts with the token: no second flow.
            async with open_websocket_client(url, auth=oauth, mode="modern") as client:
                assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
    (form,) = token_forms
    assert form["grant_type"] == "client_credentials"
    assert form["resource"] == f"http://127.0.0.1:{port}/ws"
    assert form["client_id"] == "ws-client"


@trio_test
async def test_a_token_callable_is_asked_again_after_a_refused_handshake() -> None:
    tokens = iter(["stale", TOKEN, "never-asked"])
    server, _ = build_test_server()
    async with running_ws(server, auth=BearerAuth(verify, ["https://as.example"])) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url, auth=lambda: next(tokens), mode="modern") as client:
            assert text_of(await client.call_tool("test_simple_text")) == SIMPLE_TEXT
        # A fixed wrong token: refused once, and the refusal is the caller's to see.
        with pytest.raises(HttpStatusError) as refused:
            async with open_websocket_client(url, auth="wrong"):
                pass
        assert refused.value.status == 401
        with pytest.raises(ValueError, match="not both"):
            async with open_websocket_client(
                url, auth=TOKEN, headers={"Authorization": f"Bearer {TOKEN}"}
            ):
                pass
