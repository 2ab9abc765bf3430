"""`JwtVerifier` / `BearerAuth.jwt`: JWT access tokens checked against a real JWKS.

Keys are made here with cryptography, tokens signed with PyJWT (forged ones by hand),
the key set served over real HTTP by `JwksServer` (a thread on 127.0.0.1), and the
tokens sent to a real `serve_http` (and to `AsgiApp` in process, on asyncio and trio).
The cache's clock is the test's own (`FakeClock`), so that its TTL and the interval
between fetches pass without waiting.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
import trio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from tests.transports.bearer import (
    INVALID,
    ISSUER,
    METADATA,
    RESOURCE,
    SCOPE,
    discover,
)
from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    running_server,
)
from tests.transports.test_asgi_app import (
    BACKENDS,
    build_server,
    call_tool,
    result_text,
    run,
    with_token,
)
from transports import MAX_JWKS_SIZE, AsgiApp, BearerAuth, JwtVerifier, Principal

# ------------------------------------------------------------------ keys and tokens


@dataclass
class SigningKey:
    """A private key, its algorithm, and its public half as a JWK."""

    kid: str
    algorithm: str
    private: Any

    @classmethod
    def rsa(cls, kid: str, size: int = 2048) -> SigningKey:
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=size))

    @classmethod
    def ec(cls, kid: str) -> SigningKey:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self, **extra: Any) -> dict[str, Any]:
        public = self.private.public_key()
        family = RSAAlgorithm if self.algorithm.startswith("RS") else ECAlgorithm
        data: dict[str, Any] = family.to_jwk(public, as_dict=True)
        return {**data, "kid": self.kid, "use": "sig", **extra}

    def public_pem(self) -> bytes:
        public_bytes: bytes = self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return public_bytes

    def sign(self, kid: str | None = "", **claims: Any) -> str:
        """A token with the default claims, overridden by ``claims`` (None drops one)."""
        headers = {} if kid is None else {"kid": kid or self.kid}
        return jwt.encode(token_claims(**claims), self.private, self.algorithm, headers=headers)


def token_claims(**claims: Any) -> dict[str, Any]:
    now = int(time.time())
    defaults = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "iat": now, "exp": now + 300}
    merged = {**defaults, "scope": SCOPE, **claims}
    return {name: value for name, value in merged.items() if value is not None}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict[str, Any], secret: bytes | None) -> str:
    """A token signed by hand: HMAC-SHA256 with ``secret``, or unsigned (``alg: none``)."""
    parts = (json.dumps(header).encode(), json.dumps(token_claims()).encode())
    signing_input = ".".join(b64url(part) for part in parts)
    if secret is None:
        return signing_input + "."
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


# ------------------------------------------------------------------ the key set's server


@dataclass
class JwksServer:
    """A JWK Set served over HTTP on 127.0.0.1, counting the fetches."""

    keys: list[dict[str, Any]]
    status: int = 200
    body: bytes | None = None  # (served instead of the keys when set)
    send_length: bool = True  # (without Content-Length, the body ends with the connection)
    fetches: int = 0
    url: str = ""
    #: The issuer's metadata documents, by path (any other path is the key set).
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The paths asked for, in order.
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/jwks.json")

    def answer(self, path: str) -> tuple[int, bytes]:
        with self.lock:
            self.paths.append(path)
            if path.startswith("/.well-known/") or path.endswith("/openid-configuration"):
                document = self.metadata.get(path)
                return (404, b"{}") if document is None else (200, json.dumps(document).encode())
            self.fetches += 1
            return self.status, self.body or json.dumps({"keys": self.keys}).encode()


@contextmanager
def jwks_server(*keys: dict[str, Any]) -> Iterator[JwksServer]:
    served = JwksServer(list(keys))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = served.answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if served.send_length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler) as httpd:
        served.url = f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
        # (polling every 10 ms for the shutdown: the default 0.5 s would make each test wait)
        thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
        thread.start()
        try:
            yield served
        finally:
            httpd.shutdown()
            thread.join()


class FakeClock:
    """The cache's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def jwt_auth(url: str, clock: FakeClock | None = None) -> BearerAuth:
    verifier = JwtVerifier(
        jwks_url=url, issuer=ISSUER, audience=RESOURCE, clock=clock or FakeClock()
    )
    return BearerAuth(
        verifier, authorization_servers=[ISSUER], required_scopes=[SCOPE], resource=RESOURCE
    )


# ------------------------------------------------------------------ serve_http


@http_test
async def test_a_valid_token_is_served_and_every_kind_of_invalid_one_is_401() -> None:
    key, other = SigningKey.rsa("k1"), SigningKey.rsa("k1")  # (other: same kid, wrong key)
    now = int(time.time())
    invalid = {
        "expired": key.sign(exp=now - 120),
        "not yet valid": key.sign(nbf=now + 120),
        "another audience": key.sign(aud="https://other.example.com/mcp"),
        "another issuer": key.sign(iss="https://evil.example.com"),
        "no subject": key.sign(sub=None),
        "no expiry": key.sign(exp=None),
        "DPoP-bound (cnf.jkt), shown as bearer": key.sign(cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZ"}),
        "bad signature": other.sign(),
        "alg none": forged({"alg": "none", "kid": "k1"}, None),
        "HS256 with the public key": forged({"alg": "HS256", "kid": "k1"}, key.public_pem()),
        "an algorithm not allowed": jwt.encode(
            token_claims(), key.private, "PS256", headers={"kid": "k1"}
        ),
        "garbage": "not.a.jwt",
    }
    with jwks_server(key.jwk()) as jwks:
        auth = BearerAuth.jwt(
            issuer=ISSUER, jwks_url=jwks.url, resource=RESOURCE, required_scopes=[SCOPE]
        )
        server, _ = build_test_server()
        async with (
            running_server(server, auth=auth) as running,
            await RawConnection.open(running.port) as http,
        ):
            assert (await discover(http, key.sign())).status == 200
            # Within the leeway, an expired token still passes.
            assert (await discover(http, key.sign(exp=now - 10))).status == 200
            for why, token in invalid.items():
                refused = await discover(http, token)
                assert refused.status == 401, why
                assert refused.headers["www-authenticate"] == INVALID, why
                # Nothing about the token or why it failed reaches the client.
                assert refused.json()["error"]["message"] == (
                    "Unauthorized: the token is not valid"
                ), why
                assert token.encode() not in refused.body
            document = (await http.request("GET", "/.well-known/oauth-protected-resource")).json()
        assert document["resource"] == RESOURCE
        assert document["authorization_servers"] == [ISSUER]
        assert jwks.fetches == 1  # (a bad token naming the known key fetches nothing)


@http_test
async def test_a_token_without_the_required_scope_is_403_insufficient_scope() -> None:
    key = SigningKey.ec("ec1")
    with jwks_server(key.jwk()) as jwks:
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url)) as running,
            await RawConnection.open(running.port) as http,
        ):
            narrow = await discover(http, key.sign(scope="mcp:read"))
            assert narrow.status == 403
            assert narrow.headers["www-authenticate"] == (
                f'Bearer error="insufficient_scope", scope="{SCOPE}", '
                f'resource_metadata="{METADATA}"'
            )
            # ``scp``, as a list (Entra ID, Okta) or a string, grants scopes too.
            as_list = key.sign(scope=None, scp=["mcp:read", SCOPE])
            assert (await discover(http, as_list)).status == 200
            assert (await discover(http, key.sign(scope=None, scp=SCOPE))).status == 200
            # ``aud`` may be a list holding this resource among others.
            both = key.sign(aud=["https://other.example.com", RESOURCE])
            assert (await discover(http, both)).status == 200


@http_test
async def test_an_unknown_kid_fetches_the_key_set_again_once_then_is_401() -> None:
    key, stranger = SigningKey.rsa("k1"), SigningKey.rsa("k9")
    clock = FakeClock()
    with jwks_server(key.jwk()) as jwks:
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url, clock)) as running,
            await RawConnection.open(running.port) as http,
        ):
            assert (await discover(http, key.sign())).status == 200
            assert jwks.fetches == 1
            clock.now += 11  # (past the interval between fetches)
            assert (await discover(http, stranger.sign())).status == 401
            assert jwks.fetches == 2
            # More made-up kids within the interval: no more fetches.
            for kid in ("k10", "k11", "k12"):
                assert (await discover(http, stranger.sign(kid=kid))).status == 401
            assert jwks.fetches == 2
            assert (await discover(http, key.sign())).status == 200


@http_test
async def test_a_rotated_key_set_is_fetched_when_a_new_kid_comes_or_the_ttl_ends() -> None:
    old, new = SigningKey.rsa("2026-01"), SigningKey.ec("2026-02")
    clock = FakeClock()
    with jwks_server(old.jwk()) as jwks:
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url, clock)) as running,
            await RawConnection.open(running.port) as http,
        ):
            assert (await discover(http, old.sign())).status == 200
            # The issuer publishes the new key and signs with it, then drops the old one.
            jwks.keys = [old.jwk(), new.jwk()]
            clock.now += 11
            assert (await discover(http, new.sign())).status == 200
            assert jwks.fetches == 2
            jwks.keys = [new.jwk()]
            assert (await discover(http, old.sign())).status == 200  # (cached: TTL not over)
            clock.now += 300  # (the cache's TTL)
            assert (await discover(http, old.sign())).status == 401
            assert (await discover(http, new.sign())).status == 200
            assert jwks.fetches == 3


@http_test
async def test_a_failed_fetch_keeps_the_known_keys_and_is_tried_again_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = SigningKey.rsa("k1")
    clock = FakeClock()
    with jwks_server(key.jwk()) as jwks:
        jwks.status = 503
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url, clock)) as running,
            await RawConnection.open(running.port) as http,
        ):
            assert (await discover(http, key.sign())).status == 401
            assert (await discover(http, key.sign())).status == 401
            assert jwks.fetches == 1  # (not again within the interval)
            # The operator is told why (the client only sees its 401).
            assert f"JWKS {jwks.url}: the key set could not be fetched" in caplog.text
            assert "503" in caplog.text
            jwks.status = 200
            clock.now += 11
            assert (await discover(http, key.sign())).status == 200
            # The issuer fails after the TTL: the keys known still serve.
            jwks.status = 500
            clock.now += 301
            assert (await discover(http, key.sign())).status == 200
            assert jwks.fetches == 3


@http_test
async def test_a_key_set_past_the_size_cap_or_not_a_key_set_is_not_used() -> None:
    key = SigningKey.rsa("k1")
    clock = FakeClock()
    with jwks_server(key.jwk()) as jwks:
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url, clock)) as running,
            await RawConnection.open(running.port) as http,
        ):
            padding = {"kty": "oct", "k": "x" * MAX_JWKS_SIZE}  # (valid JSON, too large)
            jwks.body = json.dumps({"keys": [key.jwk(), padding]}).encode()
            assert (await discover(http, key.sign())).status == 401
            jwks.send_length = False  # (read up to the cap, then refused)
            clock.now += 11
            assert (await discover(http, key.sign())).status == 401
            for body in (b"[]", b"{not json", b'{"keys": {}}'):
                jwks.body = body
                clock.now += 11
                assert (await discover(http, key.sign())).status == 401, body
            assert jwks.fetches == 5


@http_test
async def test_keys_it_cannot_use_are_skipped_and_a_key_without_kid_serves() -> None:
    key, short = SigningKey.rsa("k1"), SigningKey.rsa("short", size=1024)
    unusable = [
        {"kty": "oct", "k": b64url(key.public_pem()), "kid": "hmac"},
        {**SigningKey.rsa("enc").jwk(), "use": "enc"},
        {"kty": "RSA", "kid": "broken", "n": "AQAB", "e": "AQAB"},
        short.jwk(),
    ]
    with jwks_server(*unusable, key.jwk(kid=None)) as jwks:
        server, _ = build_test_server()
        async with (
            running_server(server, auth=jwt_auth(jwks.url)) as running,
            await RawConnection.open(running.port) as http,
        ):
            with warnings.catch_warnings():  # (PyJWT warns of the short key it signs with)
                warnings.simplefilter("ignore")
                short_token = short.sign()
            assert (await discover(http, short_token)).status == 401
            hmac_token = forged({"alg": "HS256", "kid": "hmac"}, key.public_pem())
            assert (await discover(http, hmac_token)).status == 401
            assert (await discover(http, key.sign(kid=None))).status == 200


def test_the_key_set_is_found_through_the_issuers_metadata() -> None:
    key = SigningKey.ec("k1")
    with jwks_server(key.jwk()) as jwks:
        issuer = f"{jwks.origin}/tenant"
        # RFC 8414's path-inserted location is missing: OIDC's is next (2025-11-25 order).
        oidc = "/.well-known/openid-configuration/tenant"
        jwks.metadata[oidc] = {"issuer": issuer, "jwks_uri": jwks.url}
        verifier = JwtVerifier(issuer=issuer, audience=RESOURCE)
        principal = trio.run(verifier, key.sign(iss=issuer))
        assert principal is not None
        assert principal.subject == "alice"
        assert verifier.jwks_url == jwks.url
        assert jwks.paths == ["/.well-known/oauth-authorization-server/tenant", oidc, "/jwks.json"]
        trio.run(verifier, key.sign(iss=issuer))
        assert jwks.fetches == 1  # (found once, then cached with the keys)


def test_metadata_of_another_issuer_or_without_jwks_uri_gives_no_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = SigningKey.ec("k1")
    with jwks_server(key.jwk()) as jwks:
        issuer = jwks.origin
        oauth = "/.well-known/oauth-authorization-server"
        for document, reason in [
            ({"issuer": "https://evil.example", "jwks_uri": jwks.url}, "is not the issuer's"),
            ({"issuer": issuer}, "has no jwks_uri"),
            ({"issuer": issuer, "jwks_uri": "http://evil.example/jwks"}, "must be https://"),
            (None, "publishes no metadata"),
        ]:
            jwks.metadata = {} if document is None else {oauth: document}
            verifier = JwtVerifier(issuer=issuer, audience=RESOURCE)
            caplog.clear()
            assert trio.run(verifier, key.sign(iss=issuer)) is None
            assert reason in caplog.text
            assert verifier.jwks_url is None
        assert jwks.fetches == 0  # (no key set was ever fetched)
    with pytest.raises(ValueError, match="https"):
        JwtVerifier(issuer="http://auth.example.com", audience=RESOURCE)


def test_only_https_key_sets_and_asymmetric_algorithms_are_accepted() -> None:
    options: dict[str, Any] = {"issuer": ISSUER, "audience": RESOURCE}
    JwtVerifier(jwks_url="https://auth.example.com/jwks", **options)
    JwtVerifier(jwks_url="http://localhost:8080/jwks", **options)
    JwtVerifier(jwks_url="http://[::1]:8080/jwks", **options)
    for url in ("http://auth.example.com/jwks", "file:///etc/passwd", "https:///jwks"):
        with pytest.raises(ValueError, match="https"):
            JwtVerifier(jwks_url=url, **options)
    for algorithms in (["RS256", "HS256"], ["none"], []):
        with pytest.raises(ValueError, match="asymmetric"):
            JwtVerifier(jwks_url="https://a.example/jwks", algorithms=algorithms, **options)
    with pytest.raises(ValueError, match="audience"):
        JwtVerifier(jwks_url="https://a.example/jwks", issuer=ISSUER, audience=[])


# ------------------------------------------------------------------ AsgiApp


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_verifier_guards_the_asgi_app(backend: str) -> None:
    key = SigningKey.rsa("k1")

    async def test(url: str) -> None:
        auth = BearerAuth.jwt(
            issuer=ISSUER, jwks_url=url, resource=RESOURCE, required_scopes=[SCOPE]
        )
        app = AsgiApp(build_server(), auth=auth)
        async with app.lifespan():
            allowed = await with_token(call_tool("quick"), key.sign()).through(app)
            elsewhere = key.sign(aud="https://other.example.com/mcp")
            refused = await with_token(call_tool("quick"), elsewhere).through(app)
            narrow = await with_token(call_tool("quick"), key.sign(scope="x")).through(app)
        assert (allowed.status, result_text(allowed.body)) == (200, "done")
        assert refused.status == 401
        assert refused.headers[b"www-authenticate"].decode() == INVALID
        assert narrow.status == 403
        assert b'error="insufficient_scope"' in narrow.headers[b"www-authenticate"]

    with jwks_server(key.jwk()) as jwks:
        run(backend, lambda: test(jwks.url))
        assert jwks.fetches == 1


def test_the_verifier_gives_the_subject_and_every_scope() -> None:
    key = SigningKey.ec("ec1")
    with jwks_server(key.jwk()) as jwks:
        verifier = JwtVerifier(jwks_url=jwks.url, issuer=ISSUER, audience=RESOURCE)
        token = key.sign(sub="ada", scope="a b", scp=["c"])
        principal = trio.run(verifier, token)
    assert principal == Principal("ada", frozenset({"a", "b", "c"}))


def test_requests_arriving_together_share_one_fetch() -> None:
    key = SigningKey.rsa("k1")
    principals: list[Principal | None] = []

    async def main(url: str) -> None:
        verifier = JwtVerifier(jwks_url=url, issuer=ISSUER, audience=RESOURCE)

        async def check() -> None:
            principals.append(await verifier(key.sign()))

        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(check)

    with jwks_server(key.jwk()) as jwks:
        trio.run(main, jwks.url)
        assert jwks.fetches == 1
    assert principals == [Principal("alice", frozenset({SCOPE}))] * 20
