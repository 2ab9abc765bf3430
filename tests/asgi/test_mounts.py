"""`transports.AsgiApp` mounted in FastAPI and Starlette, and behind a prefix (issue 17).

"Mountable: in Starlette and FastAPI at any path prefix (``root_path`` handled), beside
ordinary routes, sharing the app's lifespan." Against real uvicorn processes serving
`tests.asgi.fastapi_app` (the endpoint at ``/api/mcp`` in FastAPI, ``/v1/tools/mcp`` in
Starlette), the app at the top level under ``uvicorn --root-path /proxied`` (as behind
a reverse proxy that cuts the prefix off), and, as the control, the app at the top
level with no prefix, these tests check that:

* the host's own route still answers, with the state its lifespan set up;
* a path under the mount other than the endpoint gets the MCP app's 404 (a JSON-RPC
  error body), not the host's, and not an answer from the endpoint;
* the endpoint serves every era at the prefix: a 2026-07-28 request; a 2025-11-25
  session from ``initialize`` to ``DELETE`` (its calls run on the workers that only the
  MCP app's lifespan starts, so this also shows that the host entered it); a 2024-11-05
  HTTP+SSE client, whose stream's ``endpoint`` event must lead it back under the prefix;
* stopping the server (SIGTERM) runs the host's lifespan shutdown, and the MCP app's
  inside it, cleanly;
* a mount whose host never entered the MCP app's lifespan answers 500, and says why
  (in-process: a plain ASGI call, on asyncio and on trio);
* a mounted endpoint behind bearer tokens points its 401 challenge at protected-resource
  metadata it serves below its mount (the host's root well-known location is the
  host's, a 404), naming the endpoint's whole URL as the resource.

Requests are made with `http.client` (`tests.asgi.plain_http`), each read bounded.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator, MutableMapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

import anyio
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from examples.everything import build_server
from tests.asgi.fastapi_app import AUTH_TOKEN, HEALTH, STARTED, STOPPED
from tests.asgi.plain_http import Answer, event_stream, initialize, send
from tests.asgi.servers import (
    EVERYTHING_APP,
    FASTAPI_APP,
    FASTAPI_AUTH_APP,
    STARLETTE_APP,
    asgi_server,
)
from tests.transports.http_raw import (
    LEGACY,
    POST_HEADERS,
    message,
    modern_body,
    modern_headers,
)
from transports import AsgiApp

#: Seconds the in-process test may take.
TEST_TIMEOUT: Final = 10.0
SIMPLE_TEXT: Final = "This is a simple text response for testing."


@dataclass(frozen=True)
class Host:
    """Where a real server serves the MCP endpoint.

    Attributes:
        origin: ``http://127.0.0.1:PORT``.
        prefix: The path prefix clients see the endpoint under (``/api``: ``/api/mcp``).
        proxied: The prefix is cut off before the server sees it, as a reverse proxy
            does (the server is told it with ``--root-path``).
    """

    origin: str
    prefix: str
    proxied: bool = False

    @property
    def endpoint(self) -> str:
        """The endpoint's path, as the server gets it."""
        return self.served(self.prefix + "/mcp")

    def served(self, path: str) -> str:
        """The path the server gets for ``path`` as clients see it."""
        if self.proxied:
            assert path.startswith(self.prefix + "/"), path
            return path[len(self.prefix) :]
        return path


#: The hosts of the module's tests: (app, prefix, behind a proxy), each under uvicorn.
HOSTS: Final = {
    # The control: the app as the top-level app, no prefix.
    "top-level": (EVERYTHING_APP, "", False),
    "fastapi": (FASTAPI_APP, "/api", False),
    "starlette": (STARLETTE_APP, "/v1/tools", False),
    # A proxy forwards /proxied/mcp as /mcp and tells uvicorn the prefix it cut off.
    "root-path": (EVERYTHING_APP, "/proxied", True),
}
#: The hosts that mount the app beside routes of their own.
MOUNTED: Final = ["fastapi", "starlette"]


@pytest.fixture(scope="module")
def hosts() -> Iterator[dict[str, Host]]:
    """Every host of `HOSTS`, running for the module's tests."""
    with ExitStack() as stack:
        running = {}
        for name, (app, prefix, proxied) in HOSTS.items():
            extra = ("--root-path", prefix) if proxied else ()
            origin = stack.enter_context(asgi_server("uvicorn", app, extra=extra)).origin
            running[name] = Host(origin, prefix, proxied)
        yield running


def modern_call(host: Host, method: str, params: dict[str, Any], name: str | None = None) -> Any:
    """A 2026-07-28 request's result."""
    answer = send(
        host.origin,
        "POST",
        host.endpoint,
        modern_body(method, params),
        modern_headers(method, name),
    )
    assert answer.status == 200, answer
    return answer.result()


@pytest.mark.parametrize("name", MOUNTED)
def test_the_hosts_own_route_still_answers(hosts: dict[str, Host], name: str) -> None:
    mounted = hosts[name]
    answer = send(mounted.origin, "GET", "/health")
    assert answer.status == 200, answer
    assert json.loads(answer.body) == HEALTH  # (FastAPI's: the lifespan's state)


@pytest.mark.parametrize("below", ["/", "/other", "/mcp/more", "/MCP"])
@pytest.mark.parametrize("name", MOUNTED)
def test_paths_under_the_mount_but_not_the_endpoint_get_the_mcp_apps_404(
    hosts: dict[str, Host], name: str, below: str
) -> None:
    mounted = hosts[name]
    answer = send(
        mounted.origin,
        "POST",
        mounted.prefix + below,
        modern_body("tools/list"),
        modern_headers("tools/list"),
    )
    assert answer.status == 404, answer
    [error] = answer.messages()  # the MCP app's: a JSON-RPC error without an id
    assert error["jsonrpc"] == "2.0"
    assert error.get("id") is None
    assert error["error"]["message"].startswith("Not Found")


@pytest.mark.parametrize("name", list(HOSTS))
def test_the_modern_era_is_served_at_the_prefix(hosts: dict[str, Host], name: str) -> None:
    host = hosts[name]
    tools = modern_call(host, "tools/list", {})["tools"]
    assert "test_simple_text" in {tool["name"] for tool in tools}
    called = modern_call(host, "tools/call", {"name": "test_simple_text"}, "test_simple_text")
    assert called["content"] == [{"type": "text", "text": SIMPLE_TEXT}]


def check_repeated_calls(origin: str, endpoint: str) -> None:
    """One head, call after call: from the third, answered at once (`transports._asgi.known`).

    Each answer echoes its id; a body naming another tool than the head's ``Mcp-Name``
    is still refused (-32020), as the whole way refuses it.
    """
    headers = modern_headers("tools/call", "test_simple_text")
    for request_id in range(1, 6):
        body = modern_body("tools/call", {"name": "test_simple_text"}, request_id)
        answer = send(origin, "POST", endpoint, body, headers)
        assert answer.status == 200, answer
        [message] = answer.messages()
        assert message["id"] == request_id
        assert message["result"]["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    other = modern_body("tools/call", {"name": "test_image_content"}, 6)
    refused = send(origin, "POST", endpoint, other, headers)
    assert refused.status == 400, refused
    [error] = refused.messages()
    assert error["id"] == 6
    assert error["error"]["code"] == -32020


@pytest.mark.parametrize("name", list(HOSTS))
def test_a_clients_repeated_calls_are_answered_alike_at_the_prefix(
    hosts: dict[str, Host], name: str
) -> None:
    check_repeated_calls(hosts[name].origin, hosts[name].endpoint)


@pytest.mark.parametrize("name", list(HOSTS))
def test_a_legacy_session_is_served_at_the_prefix(hosts: dict[str, Host], name: str) -> None:
    host = hosts[name]
    opened = send(host.origin, "POST", host.endpoint, initialize(), POST_HEADERS)
    assert opened.status == 200, opened
    assert opened.result()["protocolVersion"] == LEGACY
    session = {**POST_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    session["MCP-Protocol-Version"] = LEGACY
    initialized = send(
        host.origin, "POST", host.endpoint, message("notifications/initialized"), session
    )
    assert (initialized.status, initialized.body) == (202, b"")
    call = message("tools/call", {"name": "test_simple_text", "arguments": {}}, 1)
    called = send(host.origin, "POST", host.endpoint, call, session)
    assert called.status == 200, called
    assert called.result()["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    ended = send(host.origin, "DELETE", host.endpoint, headers=session)
    assert ended.status == 200, ended
    gone = send(host.origin, "POST", host.endpoint, call, session)
    assert gone.status == 404, gone  # "the server MUST respond ... with HTTP 404"


@pytest.mark.parametrize("name", list(HOSTS))
def test_a_2024_11_05_client_is_served_at_the_prefix(hosts: dict[str, Host], name: str) -> None:
    # HTTP+SSE: "the server MUST send an endpoint event ... the URI for the client to use
    # for sending messages" (2024-11-05 basic/transports), which the client resolves
    # against the stream's URL: under a mount, it must lead back under the mount.
    host = hosts[name]
    public = host.origin + host.prefix + "/mcp"
    with event_stream(host.origin, host.endpoint) as events:
        first = next(events)
        assert first.event == "endpoint", first
        target = urlsplit(urljoin(public, first.data))
        assert target.path == host.prefix + "/mcp", (public, first.data)
        body = initialize("2024-11-05")
        where = f"{host.served(target.path)}?{target.query}"
        posted = send(host.origin, "POST", where, body, {"Content-Type": "application/json"})
        assert posted.status == 202, posted
        answer = json.loads(next(events).data)
        assert answer["result"]["protocolVersion"] == "2024-11-05", answer


def test_stopping_the_server_ends_the_hosts_lifespan_and_the_mcp_apps() -> None:
    with asgi_server("uvicorn", FASTAPI_APP) as running:
        assert json.loads(send(running.origin, "GET", "/health").body) == HEALTH
        # uvicorn shuts down, then re-raises the signal it caught (to its default action).
        assert running.stop() in (0, -signal.SIGTERM), running.output()
        output = running.output()
    assert "Traceback" not in output, output
    started, stopped, complete = (
        output.find(line) for line in (STARTED, STOPPED, "Application shutdown complete")
    )
    assert 0 <= started < stopped < complete, output  # the MCP app's lifespan ended in it


async def _asgi_post(app: Starlette, path: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST ``body`` to ``app`` by calling it as an ASGI server would; the response."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000")]
        + [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    requests = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        if requests:
            return requests.pop()
        await anyio.sleep_forever()  # (the client never hangs up first here)
        raise AssertionError("unreachable")

    async def record(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, record)
    [start, *bodies] = sent
    assert start["type"] == "http.response.start"
    fields = {name.decode(): value.decode() for name, value in start["headers"]}
    return Answer(start["status"], fields, b"".join(each.get("body", b"") for each in bodies))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_mount_whose_host_never_entered_its_lifespan_answers_500_naming_it(
    backend: str,
) -> None:
    # No lifespan=: Starlette does not pass the ASGI lifespan on to mounted apps.
    host = Starlette(routes=[Mount("/api", app=AsgiApp(build_server(anyio.sleep)))])

    async def post() -> Answer:
        with anyio.fail_after(TEST_TIMEOUT):
            return await _asgi_post(
                host, "/api/mcp", modern_body("tools/list"), modern_headers("tools/list")
            )

    answer = anyio.run(post, backend=backend)
    assert answer.status == 500, answer
    [error] = answer.messages()
    assert "lifespan" in error["error"]["message"], error
    assert "AsgiApp.lifespan" in error["error"]["message"], error


def test_a_mounted_endpoint_behind_tokens_points_its_challenge_at_metadata_it_serves() -> None:
    body = modern_body("tools/call", {"name": "test_simple_text", "arguments": {}})
    headers = modern_headers("tools/call", "test_simple_text")
    with asgi_server("uvicorn", FASTAPI_AUTH_APP) as running:
        origin = running.origin
        refused = send(origin, "POST", "/api/mcp", body, headers)
        challenge = refused.headers["www-authenticate"]
        [location] = [
            part.split("=", 1)[1].strip('"')
            for part in challenge.removeprefix("Bearer ").split(", ")
            if part.startswith("resource_metadata=")
        ]
        metadata = send(origin, "GET", urlsplit(location).path)
        host_root = send(origin, "GET", "/.well-known/oauth-protected-resource/api/mcp")
        allowed = send(
            origin, "POST", "/api/mcp", body, {**headers, "Authorization": f"Bearer {AUTH_TOKEN}"}
        )
    assert refused.status == 401
    assert location == f"{origin}/api/.well-known/oauth-protected-resource/mcp"
    assert metadata.status == 200, metadata
    document = json.loads(metadata.body)
    assert document["resource"] == f"{origin}/api/mcp"
    assert document["authorization_servers"] == ["https://as.example"]
    assert host_root.status == 404  # (FastAPI's: the host's root is not the app's)
    assert allowed.status == 200
    assert allowed.result()["content"][0]["text"] == SIMPLE_TEXT
