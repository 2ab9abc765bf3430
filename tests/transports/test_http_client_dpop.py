"""`transports.OAuth` with DPoP (RFC 9449): the proofs it signs, and a resource's nonces.

The proofs are checked the way a server checks them: PyJWT verifies each signature with
the public key its own ``jwk`` header carries. The nonce handling is `OAuthSession`'s,
given a DPoP-bound token from storage and the refusals a resource server sends; the
whole flow against the official suite's servers is `tests/conformance/
test_client_suite.py`'s (``auth/dpop``, ``auth/dpop-nonce``).
"""

from __future__ import annotations

import time
from typing import Any

import jwt
from jwt.algorithms import ECAlgorithm

from mcpcore.auth import SignProof, Tokens, access_token_hash
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
    first, second = oauth.sign_proof(request), oauth.sign_proof(request)
    header, claims = verified(first)
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # (no "d": the public key only)
    assert claims["htm"] == "POST"
    assert claims["htu"] == URL
    assert claims["nonce"] == "n-1"
    assert claims["ath"] == access_token_hash("tok")
    assert abs(claims["iat"] - time.time()) < 60
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
