"""`transports._net.http1` frames every byte of HTTP/1.1, both sides, one state per connection.

The server's `transports._net.server_connection.HttpConnection` and the client's
`transports._net.client_connection.HttpConnection` over a real socket pair, the other
end spoken by a plain h11 peer written here: what each side writes is read back by h11
(strict, and independent of ours), what it refuses to write never reaches the socket,
and a keep-alive connection is one cycle after another (``start_next_cycle``) of one
`http1` connection, not a fresh one per request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import h11
import pytest
import trio
import trio.testing

from tests.transports.http_raw import RawConnection
from tests.transports.trio_helpers import trio_test
from transports._net import http1
from transports._net.client_connection import HttpConnection as ClientConnection
from transports._net.limits import MAX_PIPELINED_BYTES, READ_SIZE, HttpLimits
from transports._net.reply import Reply
from transports._net.request import HttpRequest
from transports._net.server_connection import WATCH_DELAY, HttpConnection

Application = Callable[[HttpRequest, Reply, HttpConnection], Awaitable[None]]
Fields = list[tuple[bytes, bytes]]


class CountingStream(trio.abc.HalfCloseableStream):
    """A socket stream that counts the bytes read from it (what the server pulled in)."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.socket = stream.socket  # (as a SocketStream has)
        self.received = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.stream.receive_some(max_bytes)
        self.received += len(data)
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


class Peer:
    """The client end, spoken through a plain h11 client (it checks what the server wrote)."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)
        self.raw = bytearray()  # every byte the server wrote

    def request(
        self, method: bytes = b"POST", body: bytes = b"{}", fields: Fields | None = None
    ) -> bytes:
        """A request's bytes, framed by this peer's h11 (its next cycle started if due)."""
        h = self.h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
        headers = [(b"host", b"test"), *(fields or [])]
        if body:
            headers.append((b"content-length", b"%d" % len(body)))
        data = h.send(h11.Request(method=method, target=b"/mcp", headers=headers))
        if body:
            data += h.send(h11.Data(data=body))
        return data + h.send(h11.EndOfMessage())

    async def response(self) -> tuple[h11.Response, bytes]:
        """The next final response and its whole body (1xx skipped)."""
        body = b""
        head: h11.Response | None = None
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                data = await self.stream.receive_some(READ_SIZE)
                self.raw += data
                self.h11.receive_data(data)
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                return head, body
            elif not isinstance(event, h11.InformationalResponse):
                raise AssertionError(f"unexpected {event!r}")

    async def exchange(
        self, method: bytes = b"POST", body: bytes = b"{}", fields: Fields | None = None
    ) -> tuple[h11.Response, bytes]:
        """Send a request and read its response."""
        await self.stream.send_all(self.request(method, body, fields))
        return await self.response()

    async def closed_by_server(self) -> bool:
        """Whether the server ends the connection (after anything it still sends)."""
        while data := await self.stream.receive_some(READ_SIZE):
            self.raw += data
        return True


@asynccontextmanager
async def served(
    application: Application, *, counting: bool = False
) -> AsyncIterator[tuple[Peer, trio.abc.HalfCloseableStream]]:
    """A server `HttpConnection` serving ``application`` on one end of a socket pair."""
    left, right = trio.socket.socketpair()
    plain = trio.SocketStream(left)
    server_side: trio.abc.HalfCloseableStream = CountingStream(plain) if counting else plain
    peer = Peer(trio.SocketStream(right))
    connection = HttpConnection(server_side, application, HttpLimits())
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.serve)
            yield peer, server_side
            await peer.stream.aclose()
    finally:
        await peer.stream.aclose()
        await server_side.aclose()  # (closed by the connection already, unless it failed)


def headers_of(response: h11.Response) -> dict[bytes, bytes]:
    return dict(response.headers)


# ------------------------------------------------------------------ the server


@trio_test(autojump=True)
async def test_one_http1_connection_serves_every_request_of_a_keepalive_connection() -> None:
    seen: list[tuple[http1.ServerConnection, int]] = []

    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        seen.append((http.http, http.cycles))
        kind = request.body
        if kind == b"json":
            await reply.respond_json(200, b'{"n":%d}' % len(seen))
        elif kind == b"stream":  # head, two events, end: three writes, chunked
            await reply.start_stream(first=b"data: 1\n\n")
            await reply.send_raw(b"data: 2\n\n")
            await reply.end_stream()
        else:
            await reply.refuse(405, "Method Not Allowed")

    async with served(application) as (peer, _):
        head, body = await peer.exchange(body=b"json")
        assert (head.status_code, head.reason, body) == (200, b"OK", b'{"n":1}')
        assert headers_of(head) == {
            b"content-type": b"application/json",
            b"content-length": b"7",
        }
        head, body = await peer.exchange(body=b"stream")
        assert headers_of(head)[b"transfer-encoding"] == b"chunked"
        assert body == b"data: 1\n\ndata: 2\n\n"
        head, body = await peer.exchange(b"HEAD", body=b"")
        assert head.status_code == 405
        assert int(headers_of(head)[b"content-length"]) > 0  # the body it leaves out
        assert body == b""
        head, body = await peer.exchange(body=b"json")
        assert body == b'{"n":4}'
        # Every byte the server wrote, read back by a strict h11 client: nothing else.
        assert peer.h11.their_state is h11.DONE
    assert [cycles for _, cycles in seen] == [0, 1, 2, 3]
    assert all(h is seen[0][0] for h, _ in seen)  # one http1 state for the whole connection


@trio_test(autojump=True)
async def test_a_pipelined_burst_is_answered_in_order_on_one_http1_connection() -> None:
    seen: list[http1.ServerConnection] = []

    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        seen.append(http.http)
        await reply.respond_json(200, request.body)

    async with served(application) as (peer, _):
        raw = RawConnection(peer.stream, "test")
        await raw.send(b"".join(raw.encode(body=b"%d" % n) for n in range(5)))
        bodies = [(await raw.read_response()).body for _ in range(5)]
        assert bodies == [b"0", b"1", b"2", b"3", b"4"]
    assert len(seen) == 5
    assert all(h is seen[0] for h in seen)


@pytest.mark.parametrize(
    ("version", "fields", "carries_another"),
    [
        (b"1.1", [], True),
        (b"1.1", [(b"connection", b"keep-alive")], True),
        (b"1.1", [(b"connection", b"Close")], False),
        (b"1.1", [(b"connection", b"upgrade, close ")], False),
        (b"1.0", [], False),
        (b"1.0", [(b"connection", b"keep-alive")], False),  # (no HTTP/1.0 keep-alive, as in h11)
    ],
)
@trio_test(autojump=True)
async def test_whether_the_connection_goes_on_follows_the_keep_alive_rules(
    version: bytes, fields: Fields, carries_another: bool
) -> None:
    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        await reply.respond_json(200, b"{}")

    async with served(application) as (peer, _):
        head = b"POST /mcp HTTP/%s\r\nhost: test\r\ncontent-length: 2\r\n" % version
        head += b"".join(b"%s: %s\r\n" % field for field in fields)
        await peer.stream.send_all(head + b"\r\n{}")
        status, _, rest = (await peer.stream.receive_some(READ_SIZE)).partition(b"\r\n")
        assert status == b"HTTP/1.1 200 OK"
        said_close = b"\r\nconnection: close\r\n" in b"\r\n" + rest.lower()
        assert said_close is not carries_another
        if carries_another:
            await peer.stream.send_all(head + b"\r\n{}")
            assert (await peer.stream.receive_some(READ_SIZE)).startswith(b"HTTP/1.1 200")
        else:
            assert await peer.closed_by_server()


@trio_test(autojump=True)
async def test_closing_says_so_and_an_empty_body_has_length_zero() -> None:
    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        await reply.respond(202, close=True)

    async with served(application) as (peer, _):
        head, body = await peer.exchange()
        assert (head.status_code, body) == (202, b"")
        assert headers_of(head) == {b"content-length": b"0", b"connection": b"close"}
        assert peer.h11.their_state is h11.MUST_CLOSE
        assert await peer.closed_by_server()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (b"x-a", b"one\r\nx-evil: 1"),  # a header smuggled in
        (b"x-a", b"one\nx"),
        (b"x-a", b"nul\x00"),
        (b"x a", b"v"),
        (b"x-a:", b"v"),
        (b"", b"v"),
        # The length is the module's to write: a caller's could contradict the body.
        (b"content-length", b"999"),
    ],
)
@trio_test(autojump=True)
async def test_a_malformed_response_header_is_refused_and_nothing_is_written(
    name: bytes, value: bytes
) -> None:
    refused: list[http1.LocalProtocolError] = []

    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        try:
            await reply.respond(200, [(name, value)], b"ok")
        except http1.LocalProtocolError as exc:
            refused.append(exc)
        await reply.respond(200, [(b"x-a", b"fine")], b"second")

    async with served(application) as (peer, _):
        head, body = await peer.exchange()
        assert (headers_of(head)[b"x-a"], body) == (b"fine", b"second")
        # The refused response left no byte behind: the answer is the first thing out.
        assert peer.raw.startswith(b"HTTP/1.1 200 OK\r\nx-a: fine\r\n")
        assert b"evil" not in peer.raw
        head, _ = await peer.exchange()
        assert head.status_code == 200  # the connection goes on
    assert len(refused) == 2


@trio_test(autojump=True)
async def test_a_request_with_a_malformed_header_is_refused_with_400() -> None:
    async def application(request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        raise AssertionError("never served")

    async with served(application) as (peer, _):
        await peer.stream.send_all(b"POST /mcp HTTP/1.1\r\nhost: test\r\nx-a: b\x00c\r\n\r\n")
        status_line = (await peer.stream.receive_some(READ_SIZE)).split(b"\r\n", 1)[0]
        assert status_line == b"HTTP/1.1 400 Bad Request"
        assert await peer.closed_by_server()


class FirstRequestHeld:
    """An application that holds its first request until `release` is set (a long one)."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.release = trio.Event()
        self.answered: list[bytes] = []  # the bodies, in order

    async def __call__(self, request: HttpRequest, reply: Reply, http: HttpConnection) -> None:
        self.answered.append(request.body)
        if len(self.answered) == 1:
            self.started.set()
            await self.release.wait()
        await reply.respond_json(200, b"{}")


@trio_test(autojump=True)
async def test_a_long_request_reads_exactly_the_pipelined_limit_ahead() -> None:
    application = FirstRequestHeld()
    started, release, answered = application.started, application.release, application.answered
    async with served(application, counting=True) as (peer, server_side):
        assert isinstance(server_side, CountingStream)
        raw = RawConnection(peer.stream, "test")
        first = raw.encode(body=b"long")
        await raw.send(first)
        await started.wait()
        await trio.sleep(WATCH_DELAY * 2)  # a long request now: the watcher reads
        assert server_side.received == len(first)
        # A client pipelining far more than the limit (a body the server does not
        # want yet): the server reads the limit, not a byte more, until it answers.
        flood = raw.encode(body=b" " * (3 * MAX_PIPELINED_BYTES))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raw.send, flood)
            await trio.testing.wait_all_tasks_blocked()
            assert server_side.received - len(first) == MAX_PIPELINED_BYTES
            release.set()
            assert (await raw.read_response()).status == 200
            assert (await raw.read_response()).status == 200  # the flood, read once answered
        assert server_side.received == len(first) + len(flood)
    assert len(answered[1]) == 3 * MAX_PIPELINED_BYTES


@trio_test(autojump=True)
async def test_bytes_read_ahead_with_the_request_count_against_the_limit() -> None:
    application = FirstRequestHeld()
    started, release = application.started, application.release
    async with served(application, counting=True) as (peer, server_side):
        assert isinstance(server_side, CountingStream)
        raw = RawConnection(peer.stream, "test")
        first = raw.encode(body=b"long")
        flood = raw.encode(body=b" " * (3 * MAX_PIPELINED_BYTES))
        async with trio.open_nursery() as nursery:
            # Both at once: the first read takes the request and the start of the flood.
            nursery.start_soon(raw.send, first + flood)
            await started.wait()
            await trio.sleep(WATCH_DELAY * 2)
            await trio.testing.wait_all_tasks_blocked()
            assert server_side.received - len(first) == MAX_PIPELINED_BYTES
            release.set()
            assert (await raw.read_response()).status == 200
            assert (await raw.read_response()).status == 200


# ------------------------------------------------------------------ the client


@asynccontextmanager
async def client_pair() -> AsyncIterator[tuple[ClientConnection, trio.SocketStream]]:
    """A client `HttpConnection` on one end of a socket pair, the raw other end."""
    left, right = trio.socket.socketpair()
    client = ClientConnection(trio.SocketStream(left))
    server = trio.SocketStream(right)
    try:
        yield client, server
    finally:
        await client.aclose()
        await server.aclose()


async def answer(server: trio.SocketStream, h: h11.Connection, body: bytes) -> h11.Request:
    """Read one request with ``h`` and answer it with ``body``; the request's head."""
    request: Any = None
    while True:
        event = h.next_event()
        if event is h11.NEED_DATA:
            h.receive_data(await server.receive_some(READ_SIZE))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.EndOfMessage):
            break
    fields = [(b"content-length", b"%d" % len(body))]
    data = h.send(h11.Response(status_code=200, headers=fields))
    await server.send_all(data + h.send(h11.Data(data=body)) + h.send(h11.EndOfMessage()))
    h.start_next_cycle()
    assert isinstance(request, h11.Request)
    return request


@trio_test(autojump=True)
async def test_the_client_frames_every_request_with_one_http1_connection_across_exchanges() -> None:
    async with client_pair() as (client, server):
        h = h11.Connection(h11.SERVER)
        for n in range(3):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer, server, h, b"answer %d" % n)
                head = await client.round_trip(
                    b"POST", b"/mcp?x=1", [(b"host", b"h:1"), (b"accept", b"*/*")], b"{}"
                )
                assert head.status == 200
                assert await client.receive_data() == b"answer %d" % n
                assert await client.receive_data() == b""
            assert client.reusable
        # A GET has no body, so no length.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer, server, h, b"")
            await client.round_trip(b"GET", b"/", [(b"host", b"h")])
            assert await client.receive_data() == b""
    assert client.exchanges == 4


@trio_test(autojump=True)
async def test_the_server_reads_the_clients_request_whole() -> None:
    async with client_pair() as (client, server):
        h = h11.Connection(h11.SERVER)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.round_trip, b"POST", b"/mcp?x=1", [(b"host", b"h:1")], b"{}")
            request = await answer(server, h, b"")
        assert (request.method, request.target, request.http_version) == (
            b"POST",
            b"/mcp?x=1",
            b"1.1",
        )
        assert list(request.headers) == [(b"host", b"h:1"), (b"content-length", b"2")]


@pytest.mark.parametrize(
    ("method", "target", "fields"),
    [
        (b"POST", b"/", [(b"host", b"h"), (b"x-a", b"one\r\nx-evil: 1")]),
        (b"POST", b"/", [(b"host", b"h"), (b"x a", b"v")]),
        (b"POST", b"/", [(b"host", b"a"), (b"host", b"b")]),  # two Hosts
        (b"POST", b"/", [(b"x-a", b"v")]),  # no Host
        (b"PO ST", b"/", [(b"host", b"h")]),
        (b"", b"/", [(b"host", b"h")]),
        (b"GET", b"/a b", [(b"host", b"h")]),
        (b"GET", b"", [(b"host", b"h")]),
    ],
)
@trio_test(autojump=True)
async def test_a_malformed_request_is_refused_and_nothing_is_sent(
    method: bytes, target: bytes, fields: Fields
) -> None:
    async with client_pair() as (client, server):
        with pytest.raises(http1.LocalProtocolError):
            await client.round_trip(method, target, fields, b"{}")
        # The connection is as it was: the next request is the first thing sent.
        h = h11.Connection(h11.SERVER)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer, server, h, b"ok")
            await client.round_trip(b"POST", b"/", [(b"host", b"h")], b"{}")
            assert await client.receive_data() == b"ok"
        assert client.exchanges == 1
