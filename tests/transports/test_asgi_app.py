"""`AsgiApp` driven in-process by a scripted ASGI server, on asyncio and on trio.

What the app does itself, around the router it shares with ``serve_http``: the lifespan
(protocol and framework form), the mount point (``root_path``), the head and body
limits, the process's partial-message budget, a client that hangs up (its request is
cancelled), keep-alive comments on a quiet answer, and a server whose ``send`` fails.
The real servers (uvicorn, hypercorn, granian, a FastAPI mount) and the official
clients and conformance suites are ``tests/asgi``'s.

The scripted server is a test double of an ASGI server's two callables: ``receive``
hands out the request's body in the pieces given, then waits for the test to hang up;
``send`` records the response. Time-driven behaviour runs on trio with a virtual clock
(the app reads the running library's clock), the rest on both libraries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import pytest
import trio.testing

from mcpcore import Connection
from mcpcore.server import FastCall, FastCalls, Server
from tests.transports.http_raw import modern_body, modern_headers
from transports import AsgiApp, BearerAuth, HttpLimits, Principal
from transports._net.partial import PARTIAL_FLOOR

Message = MutableMapping[str, Any]
BACKENDS = ["asyncio", "trio"]
#: Seconds a test may take (ten times as many virtual ones with the autojump clock).
TEST_TIMEOUT = 30.0


def run(backend: str, test: Callable[[], Awaitable[None]], *, autojump: bool = False) -> None:
    """Run ``test`` on ``backend`` (trio with a virtual clock when ``autojump``)."""

    async def bounded() -> None:
        with anyio.fail_after(TEST_TIMEOUT * (10 if autojump else 1)):
            await test()

    options: dict[str, Any] = {}
    if autojump:
        options["clock"] = trio.testing.MockClock(autojump_threshold=0)
    anyio.run(bounded, backend=backend, backend_options=options)


class Exchange:
    """One request as an ASGI server would hand it to the app, and what the app sent."""

    def __init__(
        self,
        method: str = "POST",
        path: str = "/mcp",
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        *,
        pieces: list[bytes] | None = None,
        root_path: str = "",
        query: bytes = b"",
        stall: bool = False,
        pause: float = 0.0,
    ) -> None:
        fields = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        fields.append((b"host", b"127.0.0.1:8000"))
        self.scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "path": path,
            "raw_path": path.encode(),
            "root_path": root_path,
            "query_string": query,
            "headers": fields,
        }
        self._pieces = list(pieces if pieces is not None else [body])
        self._stall = stall  # the body's last piece never comes
        self._pause = pause  # seconds before the body's last piece comes
        self.hung_up = anyio.Event()
        self.received = 0
        self.messages: list[Message] = []

    async def receive(self) -> Message:
        """The next ``http.request`` piece; then ``http.disconnect`` once hung up."""
        self.received += 1
        if self._pause and len(self._pieces) == 1:
            await anyio.sleep(self._pause)
            self._pause = 0.0
        if self._pieces and not (self._stall and len(self._pieces) == 1):
            data = self._pieces.pop(0)
            return {"type": "http.request", "body": data, "more_body": bool(self._pieces)}
        await self.hung_up.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        """Record what the app sends."""
        self.messages.append(message)

    async def through(self, app: AsgiApp) -> Exchange:
        """Have ``app`` answer this request."""
        await app(self.scope, self.receive, self.send)
        return self

    @property
    def status(self) -> int:
        """The response's status."""
        return int(self.messages[0]["status"])

    @property
    def headers(self) -> dict[bytes, bytes]:
        """The response's header fields."""
        return dict(self.messages[0]["headers"])

    @property
    def body(self) -> bytes:
        """Every body piece, joined."""
        return b"".join(m.get("body", b"") for m in self.messages[1:])

    @property
    def complete(self) -> bool:
        """The last body message said so."""
        return bool(self.messages) and not self.messages[-1].get("more_body", False)


def call_tool(name: str, **options: Any) -> Exchange:
    """A 2026-07-28 ``tools/call`` of ``name``."""
    body = modern_body("tools/call", {"name": name, "arguments": {}})
    return Exchange(headers=modern_headers("tools/call", name), body=body, **options)


def list_tools() -> Exchange:
    """A 2026-07-28 ``tools/list``."""
    return Exchange(headers=modern_headers("tools/list"), body=modern_body("tools/list"))


def build_server(events: list[str] | None = None, server: Server | None = None) -> Server:
    """A server with a quick tool and one that sleeps an hour (noting its cancellation)."""
    server = server or Server("asgi-test", "1.0")
    seen = events if events is not None else []

    @server.tool()
    async def quick() -> str:
        """Answers at once."""
        return "done"

    @server.tool()
    async def slow() -> str:
        """Sleeps for an hour."""
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise
        return "late"

    return server


def with_token(exchange: Exchange, token: str) -> Exchange:
    """``exchange`` with ``Authorization: Bearer token``."""
    exchange.scope["headers"].append((b"authorization", f"Bearer {token}".encode()))
    return exchange


def result_text(body: bytes) -> str:
    """The text of a JSON tools/call result."""
    message = json.loads(body)
    return str(message["result"]["content"][0]["text"])


# ------------------------------------------------------------------ serving


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_modern_call_is_answered_with_a_json_body(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())
        async with app.lifespan():
            exchange = await call_tool("quick").through(app)
        assert exchange.status == 200
        assert exchange.headers[b"content-type"] == b"application/json"
        assert exchange.headers[b"content-length"] == str(len(exchange.body)).encode()
        assert result_text(exchange.body) == "done"
        assert exchange.complete

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_endpoint_is_found_below_the_mount_point(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())
        async with app.lifespan():
            mounted = await call_tool("quick", path="/api/mcp", root_path="/api").through(app)
            outside = await call_tool("quick", path="/api/other", root_path="/api").through(app)
            unmounted = await call_tool("quick", path="/api/mcp").through(app)
        assert (mounted.status, result_text(mounted.body)) == (200, "done")
        assert outside.status == 404
        assert unmounted.status == 404  # (no mount point: /api/mcp is not the endpoint)

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_legacy_session_starts_and_is_served(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), replies="json")
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        async with app.lifespan():
            opened = await Exchange(headers=headers, body=json.dumps(initialize).encode()).through(
                app
            )
            session = {"mcp-session-id": opened.headers[b"mcp-session-id"].decode()}
            versioned = {**headers, **session, "mcp-protocol-version": "2025-11-25"}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await Exchange(headers=versioned, body=json.dumps(note).encode()).through(app)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "quick"}}
            answered = await Exchange(headers=versioned, body=json.dumps(call).encode()).through(
                app
            )
        assert opened.status == 200
        assert json.loads(opened.body)["result"]["protocolVersion"] == "2025-11-25"
        assert (answered.status, result_text(answered.body)) == (200, "done")

    run(backend, test)


# ------------------------------------------------------------------ the lifespan


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_request_without_the_lifespan_running_is_refused_saying_why(backend: str) -> None:
    async def test() -> None:
        exchange = await call_tool("quick").through(AsgiApp(build_server()))
        assert exchange.status == 500
        assert "lifespan" in json.loads(exchange.body)["error"]["message"]

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_lifespan_protocol_starts_and_stops_the_app(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())
        inbox = [{"type": "lifespan.startup"}]
        sent: list[Message] = []
        stop = anyio.Event()
        served: list[int] = []

        async def receive() -> Message:
            if inbox:
                return inbox.pop(0)
            await stop.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: Message) -> None:
            sent.append(message)
            if message["type"] == "lifespan.startup.complete":
                served.append((await call_tool("quick").through(app)).status)
                stop.set()

        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        assert [m["type"] for m in sent] == [
            "lifespan.startup.complete",
            "lifespan.shutdown.complete",
        ]
        assert served == [200]
        assert (await call_tool("quick").through(app)).status == 500  # stopped

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_lifespan_cannot_run_twice_at_once(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())
        async with app.lifespan():
            with pytest.raises(RuntimeError, match="running already"):
                async with app.lifespan():
                    pass

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_websocket_scope_is_closed(backend: str) -> None:
    async def test() -> None:
        sent: list[Message] = []

        async def receive() -> Message:
            return {"type": "websocket.connect"}

        async def send(message: Message) -> None:
            sent.append(message)

        await AsgiApp(build_server())({"type": "websocket", "path": "/mcp"}, receive, send)
        assert [m["type"] for m in sent] == ["websocket.close"]

    run(backend, test)


# ------------------------------------------------------------------ limits


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_head_past_the_limits_is_refused_with_431(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), limits=HttpLimits(max_header_count=5, max_header_size=1024))
        many = {f"x-{i}": "1" for i in range(6)}
        async with app.lifespan():
            too_many = await Exchange(headers={**modern_headers("tools/call"), **many}).through(app)
            too_large = await Exchange(headers={"x-big": "a" * 2000}).through(app)
        assert too_many.status == too_large.status == 431
        assert too_many.received == too_large.received == 0  # the body was never read

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_past_the_limit_is_refused_with_413_before_or_as_it_arrives(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), limits=HttpLimits(max_body_size=1000))
        declared = {**modern_headers("tools/call"), "content-length": "5000"}
        async with app.lifespan():
            announced = await Exchange(headers=declared, body=b"x" * 5000).through(app)
            streamed = await Exchange(
                headers=modern_headers("tools/call"), pieces=[b"x" * 600, b"x" * 600]
            ).through(app)
        assert announced.status == streamed.status == 413
        assert announced.received == 0  # refused before the client sent it
        assert announced.headers[b"connection"] == b"close"

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_past_the_process_budget_is_refused_with_retry_after(backend: str) -> None:
    async def test() -> None:
        limits = HttpLimits(max_body_size=4 * PARTIAL_FLOOR, max_partial_bytes=PARTIAL_FLOOR)
        app = AsgiApp(build_server(), limits=limits)
        size = 3 * PARTIAL_FLOOR  # (past the floor by more than the whole budget)
        declared = {**modern_headers("tools/call"), "content-length": str(size)}
        async with app.lifespan():
            refused = await Exchange(headers=declared, body=b"x" * size).through(app)
        assert refused.status == 413
        assert refused.headers[b"retry-after"] == b"5"

    run(backend, test)


def test_a_body_that_stops_coming_is_refused_with_408() -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), limits=HttpLimits(body_timeout=5))
        async with app.lifespan():
            stalled = call_tool("quick", pieces=[b'{"jsonrpc":', b"never"], stall=True)
            await stalled.through(app)
        assert stalled.status == 408

    run("trio", test, autojump=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_client_leaving_before_its_body_is_whole_gets_nothing(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())
        async with app.lifespan():
            left = call_tool("quick", pieces=[b'{"jsonrpc":', b"never"], stall=True)
            left.hung_up.set()
            await left.through(app)
        assert left.messages == []

    run(backend, test)


# ------------------------------------------------------------------ long requests


#: How many calls like it came before the one a test watches: none (the general path
#: answers it), or one (`FastCalls` awaits the tool in one pass, its envelope known).
EARLIER = pytest.mark.parametrize("earlier", [0, 1], ids=["first", "known"])


class OnePass:
    """Counts the calls `FastCalls` answered in one pass, awaiting the tool."""

    def __init__(self, patch: pytest.MonkeyPatch) -> None:
        self.count = 0
        answer_awaited = FastCalls.answer_awaited

        async def counted(fast: FastCalls, call: FastCall) -> Any:
            self.count += 1
            return await answer_awaited(fast, call)

        patch.setattr(FastCalls, "answer_awaited", counted)


async def hung_up_calls(app: AsgiApp, name: str, count: int) -> None:
    """``count`` calls of the long tool ``name``, each hung up on once it runs."""
    for _ in range(count):
        async with anyio.create_task_group() as group:
            exchange = call_tool(name)
            group.start_soon(exchange.through, app)
            await anyio.sleep(0.2)
            exchange.hung_up.set()


@EARLIER
@pytest.mark.parametrize("backend", BACKENDS)
def test_hanging_up_cancels_a_long_request(
    backend: str, earlier: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def test() -> None:
        events: list[str] = []
        app = AsgiApp(build_server(events))
        one_pass = OnePass(monkeypatch)
        async with app.lifespan(), anyio.create_task_group() as group:
            await hung_up_calls(app, "slow", earlier)
            exchange = call_tool("slow")
            group.start_soon(exchange.through, app)
            await anyio.sleep(0.2)  # past the watch delay: the request is a long one
            exchange.hung_up.set()
        # "Closing the response stream IS the cancellation" (2026-07-28).
        assert events == ["cancelled"] * (earlier + 1)
        assert one_pass.count == earlier

    run(backend, test)


def test_a_request_whose_body_came_late_is_still_watched_once_it_runs() -> None:
    async def test() -> None:
        events: list[str] = []
        app = AsgiApp(build_server(events), limits=HttpLimits(body_timeout=60))
        body = modern_body("tools/call", {"name": "slow", "arguments": {}})
        late = Exchange(
            headers=modern_headers("tools/call", "slow"), pieces=[body[:10], body[10:]], pause=1
        )
        async with app.lifespan(), anyio.create_task_group() as group:
            group.start_soon(late.through, app)
            await anyio.sleep(3)  # the body whole after 1 s; the call long by 3 s
            hung_up_at = anyio.current_time()
            late.hung_up.set()
        # Noticed by the long request's watcher at once, not at the body's deadline.
        assert events == ["cancelled"]
        assert anyio.current_time() - hung_up_at < 1

    run("trio", test, autojump=True)


@EARLIER
def test_a_quiet_long_request_becomes_a_stream_with_keepalive_comments(
    earlier: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), limits=HttpLimits(sse_keepalive_interval=15))
        one_pass = OnePass(monkeypatch)
        async with app.lifespan(), anyio.create_task_group() as group:
            await hung_up_calls(app, "slow", earlier)
            exchange = call_tool("slow")
            group.start_soon(exchange.through, app)
            await anyio.sleep(40)
            assert exchange.status == 200
            assert exchange.headers[b"content-type"] == b"text/event-stream"
            assert exchange.body.count(b": keep-alive") == 2  # at 15 s and 30 s
            assert not exchange.complete
            assert one_pass.count == earlier
            exchange.hung_up.set()

    run("trio", test, autojump=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_send_that_fails_ends_the_request_quietly(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server())

        async def broken(message: Message) -> None:
            raise OSError("connection reset")

        exchange = call_tool("quick")
        async with app.lifespan():
            await app(exchange.scope, exchange.receive, broken)  # raises nothing

    run(backend, test)


#: Serves one 2026-07-28 call on asyncio (argv: headers, body, and "absent" to make trio
#: and wsproto unimportable); prints the status, the text, and whether trio got loaded.
TRIO_FREE_PROBE = """
import sys
if sys.argv[3] == "absent":
    sys.modules["trio"] = None
    sys.modules["wsproto"] = None
import asyncio, json
from mcpcore import Connection
from mcpcore.server import FastCall, FastCalls, Server
from transports import AsgiApp

server = Server("probe", "1.0")

@server.tool()
async def quick() -> str:
    return "done"

async def main():
    headers = [(k.lower().encode(), v.encode()) for k, v in json.loads(sys.argv[1]).items()]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "root_path": "",
             "query_string": b"", "headers": [*headers, (b"host", b"127.0.0.1")]}
    sent = []
    async def receive():
        return {"type": "http.request", "body": sys.argv[2].encode(), "more_body": False}
    async def send(message):
        sent.append(message)
    app = AsgiApp(server)
    async with app.lifespan():
        await app(scope, receive, send)
    answer = json.loads(sent[1]["body"])
    loaded = "trio-loaded" if sys.modules.get("trio") is not None else "trio-not-loaded"
    print(sent[0]["status"], answer["result"]["content"][0]["text"], loaded)

asyncio.run(main())
"""


@pytest.mark.parametrize("trio", ["absent", "installed"])
def test_the_app_runs_on_asyncio_without_trio(trio: str) -> None:
    # Installed or not, an asyncio application never loads trio (~70 ms, ~12 MB).
    headers = json.dumps(modern_headers("tools/call", "quick"))
    body = modern_body("tools/call", {"name": "quick", "arguments": {}}).decode()
    out = subprocess.run(
        [sys.executable, "-c", TRIO_FREE_PROBE, headers, body, trio],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.stdout.split() == ["200", "done", "trio-not-loaded"], out.stderr


class CountingServer(Server):
    """A server that counts the `Connection` objects it builds and forgets."""

    built = 0
    detached = 0

    def connection(self) -> Connection:
        """Count, then build."""
        self.built += 1
        return super().connection()

    def detach(self, connection: Connection) -> None:
        """Count, then forget."""
        self.detached += 1
        super().detach(connection)


@pytest.mark.parametrize("backend", BACKENDS)
def test_answered_requests_reuse_connections_and_cancelled_ones_drop_theirs(backend: str) -> None:
    async def test() -> None:
        events: list[str] = []
        server = CountingServer("asgi-test", "1.0")
        app = AsgiApp(build_server(events, server))
        async with app.lifespan():
            for _ in range(5):  # (the general path: a tools/call would be answered in one pass)
                assert (await list_tools().through(app)).status == 200
            assert (server.built, server.detached) == (1, 0)  # one, reused
            async with anyio.create_task_group() as group:
                hung_up = call_tool("slow")
                group.start_soon(hung_up.through, app)
                await anyio.sleep(0.2)
                hung_up.hung_up.set()
            assert (server.built, server.detached) == (1, 1)  # the cancelled one's dropped
            assert (await list_tools().through(app)).status == 200
            assert (server.built, server.detached) == (2, 1)
        assert events == ["cancelled"]

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_urls_given_to_clients_start_with_the_mount_point(backend: str) -> None:
    async def test() -> None:
        auth = BearerAuth(lambda token: None, authorization_servers=["https://as.example"])
        app = AsgiApp(build_server(), auth=auth)
        location = "/api/.well-known/oauth-protected-resource/mcp"
        async with app.lifespan():
            refused = await call_tool("quick", path="/api/mcp", root_path="/api").through(app)
            metadata = await Exchange("GET", location, root_path="/api").through(app)
        # The challenge names the metadata the app serves below its mount (the host's
        # root is not the app's to serve); the resource is the endpoint's whole URL.
        challenge = refused.headers[b"www-authenticate"].decode()
        assert refused.status == 401
        assert f'resource_metadata="http://127.0.0.1:8000{location}"' in challenge
        assert metadata.status == 200
        assert json.loads(metadata.body)["resource"] == "http://127.0.0.1:8000/api/mcp"

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_over_http2_a_refusal_carries_no_connection_field(backend: str) -> None:
    async def test() -> None:
        app = AsgiApp(build_server(), limits=HttpLimits(max_body_size=1000))
        declared = {**modern_headers("tools/call"), "content-length": "5000"}
        async with app.lifespan():
            over_h1 = await Exchange(headers=declared).through(app)
            h2 = Exchange(headers=declared)
            h2.scope["http_version"] = "2"
            over_h2 = await h2.through(app)
        assert over_h1.status == over_h2.status == 413
        assert over_h1.headers[b"connection"] == b"close"
        # "MUST NOT generate a message containing connection-specific header fields"
        # (RFC 9113 §8.2.2): the ASGI server would refuse to send it.
        assert b"connection" not in over_h2.headers

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bearer_auth_guards_the_endpoint_and_serves_its_metadata(backend: str) -> None:
    async def verify(token: str) -> Principal | None:
        return Principal("ada") if token == "good" else None

    async def test() -> None:
        auth = BearerAuth(verify, authorization_servers=["https://as.example"])
        app = AsgiApp(build_server(), auth=auth)
        metadata_path = "/.well-known/oauth-protected-resource/mcp"
        async with app.lifespan():
            metadata = await Exchange("GET", metadata_path).through(app)
            anonymous = await call_tool("quick").through(app)
            refused = await with_token(call_tool("quick"), "bad").through(app)
            allowed = await with_token(call_tool("quick"), "good").through(app)
        document = json.loads(metadata.body)
        assert metadata.status == 200
        assert document["resource"] == "http://127.0.0.1:8000/mcp"
        assert document["authorization_servers"] == ["https://as.example"]
        assert anonymous.status == refused.status == 401
        assert (allowed.status, result_text(allowed.body)) == (200, "done")

    run(backend, test)
