"""`serve_http` protections, over raw HTTP: Host/Origin, sizes, timeouts, caps, auth.

Issue 5's "Protection" and "Authorization hook" sections: every limit is exercised by a
client that breaks it, with the limits made small where the defaults would make the
test slow, and timeouts passed by jumping the clock rather than by waiting.
"""

from __future__ import annotations

import json

import trio

from tests.transports.http_raw import (
    RawConnection,
    build_test_server,
    http_test,
    jump,
    modern_body,
    modern_headers,
    running_server,
)
from transports import MAX_BODY_SIZE, BearerAuth, HttpLimits, Principal

DISCOVER = modern_body("server/discover")
DISCOVER_HEADERS = modern_headers("server/discover")


# ------------------------------------------------------------------ DNS rebinding


@http_test
async def test_a_foreign_origin_is_refused_with_403() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = {**DISCOVER_HEADERS, "Origin": "http://evil.example.com"}
        response = await http.request(headers=headers, body=DISCOVER)
        assert response.status == 403
        assert "id" not in response.json()  # a JSON-RPC error without an id
        # The connection stays usable, and a local Origin is fine.
        headers["Origin"] = f"http://localhost:{running.port}"
        assert (await http.request(headers=headers, body=DISCOVER)).status == 200


@http_test
async def test_a_foreign_host_is_refused_with_421() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        response = await http.request(
            headers=DISCOVER_HEADERS, body=DISCOVER, host="evil.example.com"
        )
        assert response.status == 421
        for host in (f"localhost:{running.port}", f"[::1]:{running.port}", "127.0.0.1"):
            response = await http.request(headers=DISCOVER_HEADERS, body=DISCOVER, host=host)
            assert response.status == 200, host


@http_test
async def test_allowed_hosts_and_origins_are_configurable() -> None:
    server, _ = build_test_server()
    options = {"allowed_hosts": ["mcp.example.com"], "allowed_origins": ["https://app.example"]}
    async with (
        running_server(server, **options) as running,
        await RawConnection.open(running.port) as http,
    ):
        ok = await http.request(
            headers={**DISCOVER_HEADERS, "Origin": "https://app.example"},
            body=DISCOVER,
            host="mcp.example.com:8080",
        )
        assert ok.status == 200
        refused = await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)
        assert refused.status == 421  # 127.0.0.1 is no longer among the hosts


# ------------------------------------------------------------------ sizes


@http_test
async def test_a_body_over_the_default_4_mib_is_refused_with_413_before_it_is_read() -> None:
    assert MAX_BODY_SIZE == 4 * 1024 * 1024
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        head = http.encode(headers={**DISCOVER_HEADERS, "Content-Length": str(MAX_BODY_SIZE + 1)})
        await http.send(head)  # the body never comes: the head alone is enough
        response = await http.read_response()
        assert response.status == 413
        assert response.headers["connection"] == "close"
        assert await http.closed_by_server()


@http_test
async def test_a_body_of_exactly_the_limit_is_read() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        body = DISCOVER.ljust(MAX_BODY_SIZE)  # trailing whitespace is valid JSON
        response = await http.request(headers=DISCOVER_HEADERS, body=body)
        assert response.status == 200


@http_test
async def test_the_body_limit_is_configurable_and_holds_for_chunked_bodies() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(max_body_size=1000)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        assert (await http.request(headers=DISCOVER_HEADERS, body=b" " * 1001)).status == 413
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        head = http.encode(headers={**DISCOVER_HEADERS, "Transfer-Encoding": "chunked"})
        head = head.replace(b"Content-Length: 0\r\n", b"")
        chunk = b"%x\r\n%s\r\n" % (600, b" " * 600)
        await http.send(head + chunk + chunk)
        assert (await http.read_response()).status == 413


@http_test
async def test_oversized_and_overfull_heads_are_refused_with_431() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        async with await RawConnection.open(running.port) as http:
            huge = {**DISCOVER_HEADERS, "X-Padding": "a" * 20_000}
            assert (await http.request(headers=huge, body=DISCOVER)).status == 431
            assert await http.closed_by_server()
        async with await RawConnection.open(running.port) as http:
            many = {**DISCOVER_HEADERS, **{f"X-Field-{n}": "1" for n in range(101)}}
            assert (await http.request(headers=many, body=DISCOVER)).status == 431
        async with await RawConnection.open(running.port) as http:
            fine = {**DISCOVER_HEADERS, **{f"X-Field-{n}": "1" for n in range(90)}}
            assert (await http.request(headers=fine, body=DISCOVER)).status == 200


@http_test
async def test_garbage_is_a_400_and_the_connection_closes() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        await http.send(b"NOT HTTP AT ALL\r\n\r\n")
        assert (await http.read_response()).status == 400
        assert await http.closed_by_server()


# ------------------------------------------------------------------ timeouts


@http_test
async def test_a_client_that_sends_nothing_is_closed_after_the_header_timeout() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(header_timeout=5)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        await trio.testing.wait_all_tasks_blocked(0.05)
        await jump(6)
        assert await http.closed_by_server()


@http_test
async def test_a_client_that_dribbles_its_head_gets_408_and_is_closed() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(header_timeout=5)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        request = http.encode(headers=DISCOVER_HEADERS, body=DISCOVER)
        for byte in request[:8]:  # a byte every half second: never idle, never done
            await http.send(bytes([byte]))
            await trio.testing.wait_all_tasks_blocked(0.01)
            await jump(0.5)
        await jump(1.5)  # 5.5 s since the first byte: the whole head was due by 5
        response = await http.read_response()
        assert response.status == 408
        assert await http.closed_by_server()


@http_test
async def test_a_body_that_never_comes_gets_408() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(body_timeout=5)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        await http.send(http.encode(headers={**DISCOVER_HEADERS, "Content-Length": "100"}))
        await trio.testing.wait_all_tasks_blocked(0.05)
        await jump(6)
        assert (await http.read_response()).status == 408


@http_test
async def test_an_idle_keepalive_connection_is_closed_after_the_keepalive_timeout() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(keepalive_timeout=7)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        assert (await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)).status == 200
        await jump(5)
        assert (await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)).status == 200
        await jump(8)
        assert await http.closed_by_server()


@http_test
async def test_expect_100_continue_is_honoured() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        await http.send(
            http.encode(
                headers={
                    **DISCOVER_HEADERS,
                    "Expect": "100-continue",
                    "Content-Length": str(len(DISCOVER)),
                }
            )
        )
        assert await http._read_until(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        await http.send(DISCOVER)
        assert (await http.read_response()).status == 200


# ------------------------------------------------------------------ connections


@http_test
async def test_connections_past_the_cap_get_503_and_are_closed() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(max_connections=2)
    async with running_server(server, limits=limits) as running:
        first = await RawConnection.open(running.port)
        second = await RawConnection.open(running.port)
        assert (await first.request(headers=DISCOVER_HEADERS, body=DISCOVER)).status == 200
        assert (await second.request(headers=DISCOVER_HEADERS, body=DISCOVER)).status == 200
        async with await RawConnection.open(running.port) as third:
            assert (await third.read_response()).status == 503
            assert await third.closed_by_server()
        await first.stream.aclose()  # a slot frees up
        await trio.testing.wait_all_tasks_blocked(0.05)
        async with await RawConnection.open(running.port) as fourth:
            assert (await fourth.request(headers=DISCOVER_HEADERS, body=DISCOVER)).status == 200
        await second.stream.aclose()


@http_test
async def test_a_client_that_stops_reading_is_dropped_after_the_write_timeout() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(write_timeout=20, sse_keepalive_interval=5)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        await http.send(
            http.encode(
                headers=modern_headers("tools/call", "big_text"),
                body=modern_body("tools/call", {"name": "big_text"}),
            )
        )
        for _ in range(6):  # the write is stuck; the watcher checks every 5 s
            await jump(5)
        assert await http.closed_by_server()  # (it read what was sent, then EOF)


@http_test
async def test_http_1_0_gets_its_answer_and_a_closed_connection() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        request = http.encode(headers=DISCOVER_HEADERS, body=DISCOVER).replace(
            b"HTTP/1.1", b"HTTP/1.0", 1
        )
        await http.send(request)
        response = await http.read_response()
        assert response.status == 200
        assert response.json()["id"] == 1
        assert await http.closed_by_server()


@http_test
async def test_connection_close_gets_its_answer_and_a_closed_connection() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        headers = {**DISCOVER_HEADERS, "Connection": "close"}
        response = await http.request(headers=headers, body=DISCOVER)
        assert (response.status, response.json()["id"]) == (200, 1)
        assert response.headers["connection"] == "close"
        assert await http.closed_by_server()


@http_test
async def test_a_head_request_gets_a_head_without_a_body_and_the_connection_goes_on() -> None:
    server, _ = build_test_server()
    async with running_server(server) as running:
        async with await RawConnection.open(running.port) as http:
            await http.send(http.encode("HEAD"))
            head = await http.read_head()
            assert head.status == 405
            assert int(head.headers["content-length"]) > 0  # (the length of the body it omits)
            # The next answer comes right after the head: no body bytes came between.
            response = await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)
            assert (response.status, response.json()["id"]) == (200, 1)
        async with await RawConnection.open(running.port) as http:
            await http.send(http.encode("HEAD"))
            assert (await http.read_head()).status == 405
            # Refused before its head is read, the next request is no HEAD: a body comes.
            await http.send(b"GARBAGE\r\n\r\n")
            refusal = await http.read_response()
            assert refusal.status == 400
            assert refusal.json()["error"]["code"] == -32600


# ------------------------------------------------------------------ authorization


def verify(token: str) -> Principal | None:
    return {
        "good": Principal("alice", frozenset({"mcp:tools", "mcp:read"})),
        "narrow": Principal("bob", frozenset({"mcp:read"})),
    }.get(token)


AUTH = BearerAuth(
    verify,
    authorization_servers=["https://auth.example.com"],
    required_scopes=["mcp:tools"],
)


@http_test
async def test_no_token_is_401_with_the_metadata_url() -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, auth=AUTH) as running,
        await RawConnection.open(running.port) as http,
    ):
        response = await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)
        assert response.status == 401
        challenge = response.headers["www-authenticate"]
        metadata = f"http://{running.host}/.well-known/oauth-protected-resource/mcp"
        assert challenge == f'Bearer resource_metadata="{metadata}", scope="mcp:tools"'
        # GET and DELETE are checked too.
        assert (await http.request("DELETE", headers={"Mcp-Session-Id": "x"})).status == 401


@http_test
async def test_an_invalid_token_is_401_and_a_narrow_one_403_insufficient_scope() -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, auth=AUTH) as running,
        await RawConnection.open(running.port) as http,
    ):
        bad = await http.request(
            headers={**DISCOVER_HEADERS, "Authorization": "Bearer forged"}, body=DISCOVER
        )
        assert bad.status == 401
        assert bad.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
        narrow = await http.request(
            headers={**DISCOVER_HEADERS, "Authorization": "Bearer narrow"}, body=DISCOVER
        )
        assert narrow.status == 403
        challenge = narrow.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="insufficient_scope", scope="mcp:tools"')
        assert "resource_metadata=" in challenge
        good = await http.request(
            headers={**DISCOVER_HEADERS, "Authorization": "bearer good"}, body=DISCOVER
        )
        assert good.status == 200


@http_test
async def test_the_protected_resource_metadata_is_served_at_both_well_known_urls() -> None:
    server, _ = build_test_server()
    async with (
        running_server(server, auth=AUTH) as running,
        await RawConnection.open(running.port) as http,
    ):
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            response = await http.request("GET", path)
            assert response.status == 200, path
            assert response.json() == {
                "resource": f"http://{running.host}/mcp",
                "authorization_servers": ["https://auth.example.com"],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp:tools"],
            }
        assert (await http.request("GET", "/.well-known/other")).status == 404


@http_test
async def test_an_async_verifier_and_a_configured_resource_url() -> None:
    async def check(token: str) -> Principal | None:
        await trio.lowlevel.checkpoint()
        return Principal("carol") if token == "t" else None

    auth = BearerAuth(
        check, authorization_servers=["https://as.example"], resource="https://mcp.example/mcp"
    )
    server, _ = build_test_server()
    async with (
        running_server(server, auth=auth) as running,
        await RawConnection.open(running.port) as http,
    ):
        refused = await http.request(headers=DISCOVER_HEADERS, body=DISCOVER)
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"'
        )
        ok = await http.request(
            headers={**DISCOVER_HEADERS, "Authorization": "Bearer t"}, body=DISCOVER
        )
        assert ok.status == 200
        document = (await http.request("GET", "/.well-known/oauth-protected-resource")).json()
        assert document["resource"] == "https://mcp.example/mcp"
        assert json.dumps(document)


def test_the_metadata_url_is_at_the_hosts_root_or_below_the_mount_point() -> None:
    def auth(resource: str | None = None) -> BearerAuth:
        return BearerAuth(
            lambda token: None, authorization_servers=["https://as.example"], resource=resource
        )

    # Served at the host's root: RFC 9728's path-inserted well-known URL.
    assert auth().metadata_url("h:1", "/mcp") == (
        "http://h:1/.well-known/oauth-protected-resource/mcp"
    )
    # Mounted under /api: the copy the app serves below its mount.
    assert auth().metadata_url("h:1", "/api/mcp", root="/api") == (
        "http://h:1/api/.well-known/oauth-protected-resource/mcp"
    )
    # A public resource URL (a proxy in front adds /x): the mount is where it says.
    assert auth("https://mcp.example/x/api/mcp").metadata_url("h:1", "/api/mcp", root="/api") == (
        "https://mcp.example/x/api/.well-known/oauth-protected-resource/mcp"
    )
    # A resource URL that doesn't end with the endpoint's path: its own well-known URL.
    assert auth("https://mcp.example/tools").metadata_url("h:1", "/api/mcp", root="/api") == (
        "https://mcp.example/.well-known/oauth-protected-resource/tools"
    )
