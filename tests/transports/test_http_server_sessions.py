"""The legacy session table under pressure: nobody can lock new clients out (issue 15, defect 4).

A session whose handshake never completed expires after
`HttpLimits.session_handshake_timeout`; at `HttpLimits.max_sessions` an idle session
(no open stream, nothing in flight) is evicted for a new client, half-handshaken ones
first, then the least recently used; a busy one never is, and only when every session
is busy does a new client get 503. Through the real server, on a clock the test moves.
"""

from __future__ import annotations

from tests.transports.http_raw import (
    LEGACY,
    POST_HEADERS,
    RawConnection,
    build_test_server,
    http_test,
    jump,
    message,
    running_server,
)
from tests.transports.test_http_server_legacy import Session, initialize
from transports import MAX_SESSIONS, HttpLimits

TOOLS = message("tools/list", {}, 1)


async def half_open(http: RawConnection) -> Session:
    """A session whose client sent ``initialize`` and nothing after it."""
    await http.send(http.encode(headers=POST_HEADERS, body=initialize()))
    head = await http.read_head()
    assert head.status == 200
    await http.read_all_events()
    return Session(http, head.headers["mcp-session-id"], LEGACY)


async def alive(session: Session) -> bool:
    """Whether the server still knows the session (a request is answered, not 404)."""
    response = await session.post(TOOLS)
    assert response.status in (200, 404), response
    return response.status == 200


@http_test
async def test_a_thousand_initializes_fill_the_table_and_a_new_client_still_gets_a_session() -> (
    None
):
    server, _ = build_test_server()
    async with running_server(server) as running, await RawConnection.open(running.port) as http:
        flood = [await half_open(http) for _ in range(MAX_SESSIONS)]
        # The table is full of sessions abandoned after initialize; a real client comes.
        newcomer = await Session.open(http)
        assert await alive(newcomer)
        assert not await alive(flood[0])  # the oldest half-open one made room
        assert await alive(flood[-1])


@http_test
async def test_at_the_cap_the_least_recently_used_idle_session_is_evicted() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(max_sessions=3)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        first, second, third = [await Session.open(http) for _ in range(3)]
        await jump(1)
        assert await alive(first)  # used again: now second is the least recently used
        newcomer = await Session.open(http)
        assert not await alive(second)
        assert await alive(first)
        assert await alive(third)
        assert await alive(newcomer)


@http_test
async def test_half_handshaken_sessions_are_evicted_before_established_ones() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(max_sessions=3)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        established = await Session.open(http)  # the oldest, and the least recently used
        await jump(1)
        half = await half_open(http)
        await jump(1)
        later = await half_open(http)
        await Session.open(http)
        assert not await alive(half)
        assert await alive(established)
        assert await alive(later)


@http_test
async def test_busy_sessions_are_never_evicted_and_only_then_is_a_new_client_refused() -> None:
    server, record = build_test_server()
    limits = HttpLimits(max_sessions=2, session_idle_timeout=20, keepalive_timeout=1000)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
        await RawConnection.open(running.port) as streaming,
        await RawConnection.open(running.port) as calling,
    ):
        # One session has its standalone stream open, the other a request in flight.
        listening = await Session.open(http)
        await streaming.send(
            streaming.encode("GET", headers={**listening.headers(), "Accept": "text/event-stream"})
        )
        assert (await streaming.read_head()).status == 200
        working = await Session.open(http)
        call = message("tools/call", {"name": "wait_forever"}, 7)
        await calling.send(calling.encode(headers=working.headers(), body=call))
        assert (await calling.read_head()).status == 200
        await record["started"].wait()
        await jump(25)  # the idle timeout passes: busy sessions don't expire either
        refused = await http.request(headers=POST_HEADERS, body=initialize())
        assert refused.status == 503
        assert await alive(listening)
        assert await alive(working)
        # The call ends: its session is idle now, and gives way to a new client.
        cancel = message("notifications/cancelled", {"requestId": 7, "reason": "done"})
        assert (await working.post(cancel)).status == 202
        await record["cancelled"].wait()
        await calling.read_all_events()
        newcomer = await Session.open(http)
        assert await alive(newcomer)
        assert await alive(listening)
        assert not await alive(working)


@http_test
async def test_a_half_handshaken_session_expires_quickly_and_a_complete_one_does_not() -> None:
    server, _ = build_test_server()
    limits = HttpLimits(session_handshake_timeout=10, session_idle_timeout=40)
    async with (
        running_server(server, limits=limits) as running,
        await RawConnection.open(running.port) as http,
    ):
        abandoned = await half_open(http)
        slow = await half_open(http)
        complete = await Session.open(http)
        await jump(6)
        # A slow client completing its handshake within the timeout keeps its session.
        initialized = await slow.post(message("notifications/initialized"))
        assert initialized.status == 202
        await jump(6)
        assert not await alive(abandoned)
        assert await alive(slow)
        assert await alive(complete)  # idle 12 s: far within the idle timeout
