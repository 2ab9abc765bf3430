"""`transports.OAuth` with DPoP (RFC 9449): the proofs it signs, and a resource's nonces.

The proofs are checked the way a server checks them: PyJWT verifies each signature with
the public key its own ``jwk`` header carries. The nonce handling is `OAuthSession`'s,
given a DPoP-bound token from storage and the refusals a resource server sends; the
whole flow against the official suite's servers is `tests/conformance/
test_client_suite.py`'s (``auth/dpop``, ``auth/dpop-nonce``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from jwt.algorithms import ECAlgorithm

from mcpcore.auth import SignProof, Tokens, access_token_hash
from tests.transports.http_scripted_server import Received, Reply, scripted_server
from tests.transports.test_http_client_oauth import AuthServer
from tests.transports.trio_helpers import trio_test
from transports import InMemoryTokenStorage, OAuth
from transports._http.client.auth import AuthHeaders
from transports._http.client.oauth import MAX_CHALLENGE_RETRIES, OAuthSession

URL = "http://127.0.0.1:8000/mcp"
NONCE_CHALLENGE = 'DPoP error="use_dpop_nonce", resource_metadata="http://127.0.0.1:8000/prm"'


def verified(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and the claims of a proof whose signature its own jwk verifies."""
    header = jwt.get_unverified_header(proof)
    key = ECAlgorithm.from_jwk(header["jwk"])
    return header, jwt.decode(proof, key, algorithms=["ES256"])  # type: ignore[arg-type]


def machine() -> OAuth:
    return OAuth(grant_type="client_credentials", client_id="m", client_secret="s")


def test_a_proof_verifies_with_its_public_jwk_and_each_one_is_fresh() -> None:
    oauth = machine()
    request = SignProof(method="POST", url=URL + "?q=1", nonce="n-1", access_token="tok")
    before = int(time.time())
    first, second = oauth.sign_proof(request), oauth.sign_proof(request)
    after = int(time.time())
    header, claims = verified(first)
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # (no "d": the public key only)
    assert claims["htm"] == "POST"
    assert claims["htu"] == URL
    assert claims["nonce"] == "n-1"
    assert claims["ath"] == access_token_hash("tok")
    assert before <= claims["iat"] <= after  # (the signing moment: no duration measured)
    assert verified(second)[1]["jti"] != claims["jti"]
    # One key per OAuth instance; another instance has another.
    assert verified(second)[0]["jwk"] == header["jwk"]
    assert verified(machine().sign_proof(request))[0]["jwk"] != header["jwk"]


async def dpop_session() -> OAuthSession:
    storage = InMemoryTokenStorage()
    await storage.set_tokens(Tokens(access_token="the-token", token_type="DPoP"))
    oauth = OAuth(
        grant_type="client_credentials", client_id="m", client_secret="s", storage=storage
    )
    session = oauth.session(URL)
    await session.headers(b"POST", b"/mcp")  # (the first request: the token is loaded)
    return session


def proof_of(headers: AuthHeaders) -> dict[str, Any]:
    found = dict(headers)
    assert found[b"authorization"] == b"DPoP the-token"
    return verified(found[b"dpop"].decode())[1]


@trio_test
async def test_every_request_carries_the_dpop_scheme_and_its_own_proof() -> None:
    session = await dpop_session()
    post = proof_of(await session.headers(b"POST", b"/mcp?x=1"))
    get = proof_of(await session.headers(b"GET", b"/mcp"))
    assert (post["htm"], post["htu"]) == ("POST", URL)
    assert (get["htm"], get["htu"]) == ("GET", URL)
    assert post["ath"] == access_token_hash("the-token")
    assert post["jti"] != get["jti"]
    assert "nonce" not in post


@trio_test
async def test_a_resource_servers_nonce_challenge_is_retried_once_with_its_nonce() -> None:
    session = await dpop_session()
    seen = session.generation
    assert await session.challenged(401, NONCE_CHALLENGE, seen, 0, "n-1")
    assert proof_of(await session.headers(b"POST", b"/mcp"))["nonce"] == "n-1"
    # Refused again with the nonce it just gave: retrying would not help.
    assert not await session.challenged(401, NONCE_CHALLENGE, session.generation, 1, "n-1")
    # A new nonce is used, and kept for the requests after.
    assert await session.challenged(401, NONCE_CHALLENGE, session.generation, 1, "n-2")
    assert proof_of(await session.headers(b"GET", b"/mcp"))["nonce"] == "n-2"


@trio_test
async def test_a_server_naming_new_nonces_forever_gets_a_bounded_number_of_retries() -> None:
    session = await dpop_session()
    retried = 0
    for attempt in range(3 * MAX_CHALLENGE_RETRIES):
        if not await session.challenged(
            401, NONCE_CHALLENGE, session.generation, attempt, f"n-{attempt}"
        ):
            break
        retried += 1
    assert retried == MAX_CHALLENGE_RETRIES


@trio_test
async def test_a_request_sent_before_a_new_nonce_goes_again_with_it() -> None:
    session = await dpop_session()
    stale = session.generation
    assert await session.challenged(401, NONCE_CHALLENGE, stale, 0, "n-1")
    # Another request, sent with the old (nonce-less) proof, meets the same challenge.
    assert await session.challenged(401, NONCE_CHALLENGE, stale, 0, "n-1")


@trio_test
async def test_bearer_tokens_get_one_header_and_no_proof() -> None:
    storage = InMemoryTokenStorage()
    await storage.set_tokens(Tokens(access_token="the-token"))
    oauth = OAuth(
        grant_type="client_credentials", client_id="m", client_secret="s", storage=storage
    )
    session = oauth.session(URL)
    first = await session.headers(b"POST", b"/mcp")
    assert list(first) == [(b"authorization", b"Bearer the-token")]
    assert await session.headers(b"GET", b"/mcp") is first  # (built once)


@trio_test
async def test_a_nonce_given_with_any_answer_is_used_from_then_on() -> None:
    session = await dpop_session()
    before = session.generation
    session.noticed_nonce("n-9")
    assert session.generation != before  # (a request sent meanwhile may go again)
    assert proof_of(await session.headers(b"POST", b"/mcp"))["nonce"] == "n-9"
    same = session.generation
    session.noticed_nonce("n-9")
    assert session.generation == same


@dataclass
class NonceServer(AuthServer):
    """An authorization server that wants DPoP proofs with its nonce (RFC 9449 §8)."""

    nonce: str = "as-nonce-1"
    proofs: list[dict[str, Any]] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "dpop_signing_alg_values_supported": ["ES256"]}

    async def token(self, request: Received, reply: Reply) -> None:
        claims = verified(request.headers["dpop"])[1]
        self.proofs.append(claims)
        header = [("dpop-nonce", self.nonce)]
        if claims.get("nonce") != self.nonce:
            await reply.json({"error": "use_dpop_nonce"}, 400, header)
            return
        token = f"at-{len(self.issued) + 1}"
        self.issued.append(token)
        await reply.json({"access_token": token, "token_type": "DPoP"}, 200, header)


@trio_test
async def test_the_authorization_servers_nonce_is_kept_for_the_next_token_request() -> None:
    auth = NonceServer(refresh_token=None)
    async with scripted_server(auth) as server:
        auth.base = server.url.removesuffix("/mcp")
        challenge = (
            f'Bearer resource_metadata="{auth.base}/.well-known/oauth-protected-resource/mcp"'
        )
        session = machine().session(server.url)
        assert await session.challenged(401, challenge, session.generation, 0, None)
        assert [proof.get("nonce") for proof in auth.proofs] == [None, "as-nonce-1"]
        # The next flow's token request: its first proof carries the nonce, no refusal.
        auth.proofs.clear()
        assert await session.challenged(401, challenge, session.generation, 0, None)
        assert [proof.get("nonce") for proof in auth.proofs] == ["as-nonce-1"]
        assert auth.issued == ["at-1", "at-2"]
