"""`IntrospectionVerifier` / `BearerAuth.introspection`: opaque tokens judged by RFC 7662.

The introspection endpoint is real HTTP (`IntrospectionServer`, a thread on 127.0.0.1)
that counts its calls and keeps each one's ``Authorization`` header and form; the
tokens go to a real `serve_http` (and to `AsgiApp` in process, on asyncio and trio).
The verifier's clocks are the test's own (`Clocks`), so that cache lifetimes pass
without waiting; token lifetimes in the answers are set around the real time only
where the verifier reads the real time.
"""

from __future__ import annotations

import base64
import http.server
import json
import logging
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import pytest
import trio
import trio.testing

from bench._ports import reserve_port
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
from transports import (
    INTROSPECTION_CACHE_TTL,
    INTROSPECTION_REFUSAL_TTL,
    MAX_INTROSPECTION_SIZE,
    AsgiApp,
    BearerAuth,
    IntrospectionVerifier,
    Principal,
)

CLIENT_ID: Final = "mcp server"  # (a space: form-encoded as "+" in Basic, RFC 6749 §2.3.1)
SECRET: Final = "s3cr:t/+%é"

# ------------------------------------------------------------------ the introspection endpoint


@dataclass
class Call:
    """One introspection request, as the endpoint received it."""

    authorization: str | None
    content_type: str | None
    form: dict[str, list[str]]


@dataclass
class IntrospectionServer:
    """An RFC 7662 endpoint on 127.0.0.1: answers by token, every call recorded."""

    #: The answer for each token (any other token: ``{"active": false}``).
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: int = 200
    body: bytes | None = None  # (served instead of the answer when set)
    send_length: bool = True
    headers: dict[str, str] = field(default_factory=dict)
    #: Set by the test to let held answers go (all of them are held until then).
    release: threading.Event = field(default_factory=threading.Event)
    calls: list[Call] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.release.set()

    def answer(self, call: Call) -> tuple[int, bytes]:
        with self.lock:
            self.calls.append(call)
            if self.body is not None:
                return self.status, self.body
            token = call.form.get("token", [""])[0]
            return self.status, json.dumps(self.answers.get(token, {"active": False})).encode()


class QuietServer(http.server.ThreadingHTTPServer):
    """Says nothing of a caller that hung up first (the timeout test's): its pipe broke."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@contextmanager
def introspection_server() -> Iterator[IntrospectionServer]:
    served = IntrospectionServer()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            call = Call(self.headers.get("Authorization"), self.headers.get("Content-Type"), form)
            served.release.wait()
            status, body = served.answer(call)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in served.headers.items():
                self.send_header(name, value)
            if served.send_length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with QuietServer(("127.0.0.1", 0), Handler) as httpd:
        served.url = f"http://127.0.0.1:{httpd.server_address[1]}/introspect"
        # (polling every 10 ms for the shutdown: the default 0.5 s would make each test wait)
        thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
        thread.start()
        try:
            yield served
        finally:
            served.release.set()
            httpd.shutdown()
            thread.join()


def active(**claims: Any) -> dict[str, Any]:
    """An active token's answer, with ``claims`` overriding the usual ones (None drops)."""
    now = int(time.time())
    usual = {"active": True, "aud": RESOURCE, "iss": ISSUER, "sub": "alice", "scope": SCOPE}
    merged = {**usual, "exp": now + 300, "iat": now, **claims}
    return {name: value for name, value in merged.items() if value is not None}


class Clocks:
    """The verifier's monotonic and wall clocks, moved together by hand."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.wall_start = time.time()

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.wall_start + self.now - 1000.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


def verifier(url: str, clocks: Clocks | None = None, **options: Any) -> IntrospectionVerifier:
    clocks = clocks or Clocks()
    return IntrospectionVerifier(
        url,
        client_id=CLIENT_ID,
        client_secret=SECRET,
        audience=RESOURCE,
        issuer=ISSUER,
        clock=clocks.monotonic,
        wall_clock=clocks.wall,
        **options,
    )


def guarded(check: IntrospectionVerifier) -> BearerAuth:
    return BearerAuth(
        check, authorization_servers=[ISSUER], required_scopes=[SCOPE], resource=RESOURCE
    )


def basic(client_id: str, secret: str) -> str:
    pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


# ------------------------------------------------------------------ serve_http


@http_test
async def test_an_active_token_is_served_and_every_refused_answer_is_401() -> None:
    now = int(time.time())
    refused = {
        "inactive": {"active": False},
        "active as a string": {**active(), "active": "true"},
        "another audience": active(aud="https://other.example.com/mcp"),
        "no audience": active(aud=None),
        "another issuer": active(iss="https://evil.example.com"),
        "expired": active(exp=now - 120),
        "not yet valid": active(nbf=now + 120),
        "exp not a number": active(exp="tomorrow"),
        "no subject": active(sub=None),
        "only a username": active(sub=None, username="alice"),
        "DPoP-bound": active(cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}),
        "DPoP type": active(token_type="DPoP"),
    }
    with introspection_server() as endpoint:
        endpoint.answers = {
            "good": active(),
            "in the leeway": active(exp=now - 10),
            "no iss": active(iss=None),
            **refused,
        }
        auth = BearerAuth.introspection(
            endpoint=endpoint.url,
            client_id=CLIENT_ID,
            client_secret=SECRET,
            issuer=ISSUER,
            resource=RESOURCE,
            required_scopes=[SCOPE],
        )
        server, _ = build_test_server()
        async with (
            running_server(server, auth=auth) as running,
            await RawConnection.open(running.port) as http,
        ):
            for token in ("good", "in the leeway", "no iss"):
                assert (await discover(http, token)).status == 200, token
            for token in refused:
                answer = await discover(http, token)
                assert answer.status == 401, token
                assert answer.headers["www-authenticate"] == INVALID, token
                # Nothing about the token or why it was refused reaches the client.
                assert answer.json()["error"]["message"] == (
                    "Unauthorized: the token is not valid"
                ), token
                assert token.encode() not in answer.body
            document = (await http.request("GET", "/.well-known/oauth-protected-resource")).json()
    assert document["authorization_servers"] == [ISSUER]
    assert document["resource"] == RESOURCE
    # One call per token: RFC 7662 §2.1's form, authenticated by HTTP Basic.
    assert [call.form["token"] for call in endpoint.calls] == [
        [token] for token in ("good", "in the leeway", "no iss", *refused)
    ]
    for call in endpoint.calls:
        assert call.form["token_type_hint"] == ["access_token"]
        assert set(call.form) == {"token", "token_type_hint"}
        assert call.content_type == "application/x-www-form-urlencoded"
        assert call.authorization == basic(CLIENT_ID, SECRET)


@http_test
async def test_scopes_come_from_scope_and_a_missing_one_is_403() -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {
            "narrow": active(scope="mcp:read"),
            "none": active(scope=None),
            "wide": active(scope=f"mcp:read {SCOPE}"),
            "several audiences": active(aud=["https://other.example.com", RESOURCE]),
        }
        server, _ = build_test_server()
        async with (
            running_server(server, auth=guarded(verifier(endpoint.url))) as running,
            await RawConnection.open(running.port) as http,
        ):
            for token in ("narrow", "none"):
                answer = await discover(http, token)
                assert answer.status == 403, token
                assert answer.headers["www-authenticate"] == (
                    f'Bearer error="insufficient_scope", scope="{SCOPE}", '
                    f'resource_metadata="{METADATA}"'
                )
            assert (await discover(http, "wide")).status == 200
            assert (await discover(http, "several audiences")).status == 200


def test_the_principal_is_sub_or_for_a_client_alone_its_client_id() -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {
            "user": active(sub="ada", scope="a b", client_id="app"),
            "client": active(sub=None, client_id="batch-job", scope="c"),
        }
        check = verifier(endpoint.url)
        assert trio.run(check, "user") == Principal("ada", frozenset({"a", "b"}))
        assert trio.run(check, "client") == Principal("batch-job", frozenset({"c"}))


def test_client_secret_post_puts_the_credentials_in_the_form() -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {"good": active()}
        check = verifier(endpoint.url, client_auth="client_secret_post")
        assert trio.run(check, "good") is not None
    [call] = endpoint.calls
    assert call.authorization is None
    assert call.form == {
        "token": ["good"],
        "token_type_hint": ["access_token"],
        "client_id": [CLIENT_ID],
        "client_secret": [SECRET],
    }


# ------------------------------------------------------------------ the cache


@http_test
async def test_an_accepted_answer_is_used_until_the_ttl_and_no_later() -> None:
    clocks = Clocks()
    with introspection_server() as endpoint:
        endpoint.answers = {"good": active()}
        server, _ = build_test_server()
        async with (
            running_server(server, auth=guarded(verifier(endpoint.url, clocks))) as running,
            await RawConnection.open(running.port) as http,
        ):
            assert (await discover(http, "good")).status == 200
            assert (await discover(http, "good")).status == 200
            assert len(endpoint.calls) == 1
            # The token is revoked: the answer cached still serves until the TTL ends.
            endpoint.answers = {}
            clocks.advance(INTROSPECTION_CACHE_TTL - 1)
            assert (await discover(http, "good")).status == 200
            assert len(endpoint.calls) == 1
            clocks.advance(1)
            assert (await discover(http, "good")).status == 401
            assert len(endpoint.calls) == 2


def test_an_accepted_answer_is_not_used_past_the_tokens_exp() -> None:
    clocks = Clocks()
    with introspection_server() as endpoint:
        endpoint.answers = {"short": active(exp=int(clocks.wall()) + 10)}
        check = verifier(endpoint.url, clocks)
        assert trio.run(check, "short") is not None
        clocks.advance(5)
        assert trio.run(check, "short") is not None
        assert len(endpoint.calls) == 1
        clocks.advance(6)  # (past exp, well within the TTL)
        endpoint.answers = {}
        assert trio.run(check, "short") is None
        assert len(endpoint.calls) == 2


def test_a_refused_answer_is_cached_briefly_and_a_failure_not_at_all() -> None:
    clocks = Clocks()
    with introspection_server() as endpoint:
        check = verifier(endpoint.url, clocks)
        for _ in range(3):
            assert trio.run(check, "revoked") is None
        assert len(endpoint.calls) == 1
        clocks.advance(INTROSPECTION_REFUSAL_TTL)
        endpoint.answers = {"revoked": active()}  # (say, it was not valid yet before)
        assert trio.run(check, "revoked") is not None
        assert len(endpoint.calls) == 2
        # An endpoint that fails is asked again by the next request.
        endpoint.status = 503
        assert trio.run(check, "other") is None
        assert trio.run(check, "other") is None
        assert len(endpoint.calls) == 4
        endpoint.status = 200
        endpoint.answers["other"] = active()
        assert trio.run(check, "other") is not None


def test_the_cache_is_bounded_and_refusals_never_evict_accepted_answers() -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {name: active() for name in ("a", "b", "c")}
        check = verifier(endpoint.url, cache_size=2, refusal_cache_size=3)
        for token in ("a", "b", "a", "c"):  # ("b" is the least recently used)
            trio.run(check, token)
        assert check.cached == 2
        for made_up in range(50):
            assert trio.run(check, f"made-up-{made_up}") is None
        assert check.cached == 2 + 3
        asked = len(endpoint.calls)
        trio.run(check, "a")
        trio.run(check, "c")
        assert len(endpoint.calls) == asked  # (still cached)
        trio.run(check, "b")
        assert len(endpoint.calls) == asked + 1  # (evicted: asked again)


def test_the_cache_keeps_no_token() -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {"the-raw-token": active()}
        check = verifier(endpoint.url)
        trio.run(check, "the-raw-token")
        trio.run(check, "refused-raw-token")
    held = repr(vars(check)) + repr(vars(check._accepted)) + repr(vars(check._refused))
    assert "raw-token" not in held
    assert SECRET not in repr(check)
    assert SECRET not in repr(guarded(check))


def test_requests_arriving_together_with_one_token_share_one_call() -> None:
    principals: list[Principal | None] = []

    async def main(url: str, endpoint: IntrospectionServer) -> None:
        check = verifier(url)

        async def ask(token: str) -> None:
            principals.append(await check(token))

        endpoint.release.clear()  # (the endpoint holds its answers)
        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(ask, "good")
            nursery.start_soon(ask, "other")
            # Every request is waiting: one in a thread per token, the rest for it.
            await trio.testing.wait_all_tasks_blocked()
            endpoint.release.set()

    with introspection_server() as endpoint:
        endpoint.answers = {"good": active()}
        trio.run(main, endpoint.url, endpoint)
    assert sorted(call.form["token"][0] for call in endpoint.calls) == ["good", "other"]
    assert principals.count(Principal("alice", frozenset({SCOPE}))) == 20
    assert principals.count(None) == 1


def test_a_request_cancelled_while_asking_leaves_the_others_an_answer() -> None:
    got: dict[str, Principal | None] = {}

    async def main(endpoint: IntrospectionServer) -> None:
        check = verifier(endpoint.url)

        async def ask(name: str, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            with trio.CancelScope() as scope:
                task_status.started(scope)
                got[name] = await check("good")

        endpoint.release.clear()  # (the endpoint holds its answer)
        async with trio.open_nursery() as nursery:
            first = await nursery.start(ask, "first")
            await trio.testing.wait_all_tasks_blocked()  # (asking, in a worker thread)
            nursery.start_soon(ask, "second")
            await trio.testing.wait_all_tasks_blocked()  # (waiting for the first's answer)
            first.cancel()  # (the thread can't be abandoned: the call goes on)
            endpoint.release.set()

    with introspection_server() as endpoint:
        endpoint.answers = {"good": active()}
        trio.run(main, endpoint)
    assert len(endpoint.calls) == 1
    assert got["second"] == Principal("alice", frozenset({SCOPE}))


# ------------------------------------------------------------------ failures


def test_an_endpoint_down_or_failing_is_401_and_a_warning_without_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "mcpcore.auth")
    token = "tok-0123456789"
    down = verifier(f"http://127.0.0.1:{reserve_port()}/introspect")
    assert trio.run(down, token) is None
    assert "introspection at http://127.0.0.1:" in caplog.text
    assert "the endpoint failed" in caplog.text
    with introspection_server() as endpoint:
        failures = [
            (500, b"{}", "500"),
            (401, b'{"error": "invalid_client"}', "401"),
            (302, b"", "302"),  # (a redirect is not followed: the secret would go along)
            (200, b"{not json", "the endpoint failed"),
            (200, b"[]", "not a JSON object"),
        ]
        for status, body, reason in failures:
            endpoint.status, endpoint.body = status, body
            endpoint.headers = {"Location": endpoint.url + "2"} if status == 302 else {}
            caplog.clear()
            assert trio.run(verifier(endpoint.url), token) is None, reason
            assert reason in caplog.text
            assert all(record.levelno == logging.WARNING for record in caplog.records)
        assert len(endpoint.calls) == len(failures)
        endpoint.status, endpoint.body, endpoint.headers = 200, None, {}
        endpoint.answers = {token: active(aud="https://other.example.com")}
        caplog.clear()
        assert trio.run(verifier(endpoint.url), token) is None
        assert "does not hold this resource" in caplog.text
    assert token not in caplog.text
    assert SECRET not in caplog.text
    assert base64.b64encode(SECRET.encode()).decode() not in caplog.text


def test_a_slow_endpoint_is_given_up_after_the_timeout(caplog: pytest.LogCaptureFixture) -> None:
    with introspection_server() as endpoint:
        endpoint.answers = {"good": active()}
        endpoint.release.clear()  # (it never answers while the call waits)
        assert trio.run(verifier(endpoint.url, timeout=0.1), "good") is None
        assert "timed out" in caplog.text


def test_an_answer_past_the_size_cap_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    with introspection_server() as endpoint:
        padding = "x" * MAX_INTROSPECTION_SIZE
        endpoint.answers = {"big": active(padding=padding), "fits": active(padding="x" * 1000)}
        assert trio.run(verifier(endpoint.url), "fits") is not None
        assert trio.run(verifier(endpoint.url), "big") is None
        assert f"larger than {MAX_INTROSPECTION_SIZE} bytes" in caplog.text
        endpoint.send_length = False  # (read up to the cap, then refused)
        assert trio.run(verifier(endpoint.url), "big") is None
        assert len(endpoint.calls) == 3


def test_only_https_endpoints_and_complete_settings_are_accepted() -> None:
    options: dict[str, Any] = {
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "audience": RESOURCE,
    }
    IntrospectionVerifier("https://auth.example.com/introspect", **options)
    IntrospectionVerifier("http://localhost:8080/introspect", **options)
    IntrospectionVerifier("http://[::1]:8080/introspect", **options)
    for url in ("http://auth.example.com/introspect", "file:///etc/passwd", "https:///x"):
        with pytest.raises(ValueError, match="https"):
            IntrospectionVerifier(url, **options)
    with pytest.raises(ValueError, match="not in the URL") as refused:
        IntrospectionVerifier("https://rs:hunter2@auth.example.com/introspect", **options)
    assert "hunter2" not in str(refused.value)
    endpoint = "https://auth.example.com/introspect"
    with pytest.raises(ValueError, match="audience"):
        IntrospectionVerifier(endpoint, **{**options, "audience": []})
    with pytest.raises(ValueError, match="secret"):
        IntrospectionVerifier(endpoint, **{**options, "client_secret": ""})
    with pytest.raises(ValueError, match="client_auth"):
        IntrospectionVerifier(endpoint, client_auth="private_key_jwt", **options)  # type: ignore[arg-type]


# ------------------------------------------------------------------ AsgiApp


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_verifier_guards_the_asgi_app(backend: str) -> None:
    async def test(url: str) -> None:
        auth = BearerAuth.introspection(
            endpoint=url,
            client_id=CLIENT_ID,
            client_secret=SECRET,
            issuer=ISSUER,
            resource=RESOURCE,
            required_scopes=[SCOPE],
        )
        app = AsgiApp(build_server(), auth=auth)
        async with app.lifespan():
            allowed = await with_token(call_tool("quick"), "good").through(app)
            again = await with_token(call_tool("quick"), "good").through(app)
            refused = await with_token(call_tool("quick"), "elsewhere").through(app)
            narrow = await with_token(call_tool("quick"), "narrow").through(app)
        assert (allowed.status, result_text(allowed.body)) == (200, "done")
        assert again.status == 200
        assert refused.status == 401
        assert refused.headers[b"www-authenticate"].decode() == INVALID
        assert narrow.status == 403

    with introspection_server() as endpoint:
        endpoint.answers = {
            "good": active(),
            "elsewhere": active(aud="https://other.example.com/mcp"),
            "narrow": active(scope="x"),
        }
        run(backend, lambda: test(endpoint.url))
        assert len(endpoint.calls) == 3  # ("good" once: cached)


def test_introspection_needs_neither_pyjwt_nor_cryptography() -> None:
    # (the oauth extra is for JOSE; opaque tokens need only the standard library)
    probe = (
        "import sys\n"
        "sys.modules['jwt'] = sys.modules['cryptography'] = None\n"
        "from transports import BearerAuth\n"
        "BearerAuth.introspection(endpoint='https://a.example/i', client_id='rs',\n"
        "    client_secret='x', issuer='https://a.example', resource='https://m.example/mcp')\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
