"""RedisClient against a real redis-server, under trio and asyncio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from bench._ports import reserve_port
from tests.redis.conftest import Runner
from tests.redis_server import RedisServer
from transports._redis import (
    RedisClient,
    RedisReplyError,
    RedisUnavailableError,
    open_redis,
)
from transports._redis import client as client_module

#: Polls of a condition on the server, `POLL_PAUSE` apart, before a test gives up.
POLLS = 1000
POLL_PAUSE = 0.01


async def eventually(condition: Callable[[], Awaitable[bool]]) -> None:
    """Wait until ``condition()`` holds (a bounded number of polls)."""
    for _ in range(POLLS):
        if await condition():
            return
        await anyio.sleep(POLL_PAUSE)
    raise AssertionError("the condition never held")


async def blocked_clients(client: RedisClient) -> int:
    """How many connections the server has blocked in BLPOP and the like."""
    info: bytes = await client.execute("INFO", "clients")
    for line in info.decode().splitlines():
        if line.startswith("blocked_clients:"):
            return int(line.partition(":")[2])
    raise AssertionError(info)


def test_execute_returns_the_replies_of_the_data_types(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            assert redis.available
            assert await redis.execute("SET", "key", "value") == b"OK"
            assert await redis.execute(b"GET", b"key") == b"value"
            assert await redis.execute("GET", "missing") is None
            assert await redis.execute("INCR", "counter") == 1
            assert await redis.execute("INCRBY", "counter", 41) == 42
            assert await redis.execute("INCRBYFLOAT", "float", 1.5) == b"1.5"
            first = await redis.execute("XADD", "stream", "*", "field", "one")
            second = await redis.execute("XADD", "stream", "*", "field", "two")
            entries = await redis.execute("XRANGE", "stream", "-", "+")
            assert entries == [[first, [b"field", b"one"]], [second, [b"field", b"two"]]]
            assert await redis.execute("EXPIRE", "key", 100) == 1
            assert 0 < await redis.execute("TTL", "key") <= 100
            assert await redis.execute("EXPIRE", "missing", 100) == 0
            assert await redis.execute("SET", "bin", b"\x00\xff") == b"OK"
            assert await redis.execute("GET", "bin") == b"\x00\xff"

    run(body)


def test_an_error_reply_raises_and_the_connection_stays_usable(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            await redis.execute("SET", "text", "abc")
            with pytest.raises(RedisReplyError, match="WRONGTYPE") as wrong:
                await redis.execute("LPUSH", "text", "x")
            assert wrong.value.code == "WRONGTYPE"
            with pytest.raises(RedisReplyError) as not_integer:
                await redis.execute("INCR", "text")
            assert not_integer.value.code == "ERR"
            with pytest.raises(RedisReplyError, match="unknown command"):
                await redis.execute("NO-SUCH-COMMAND")
            assert await redis.execute("GET", "text") == b"abc"
            assert redis.available

    run(body)


def test_a_pipeline_returns_error_replies_in_their_place(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            replies = await redis.pipeline(
                [
                    ["SET", "a", "1"],
                    ["INCR", "a"],
                    ["LPUSH", "a", "x"],
                    ["INCR", "a"],
                    ["GET", "a"],
                ]
            )
            assert replies[:2] == [b"OK", 2]
            assert isinstance(replies[2], RedisReplyError)
            assert replies[2].code == "WRONGTYPE"
            assert replies[3:] == [3, b"3"]
            assert await redis.pipeline([]) == []

    run(body)


def test_a_transaction_goes_in_one_pipeline(run: Runner, redis_server: RedisServer) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            await redis.execute("SET", "text", "abc")
            replies = await redis.pipeline(
                [["MULTI"], ["INCR", "n"], ["LPUSH", "text", "x"], ["INCR", "n"], ["EXEC"]]
            )
            assert replies[:4] == [b"OK", b"QUEUED", b"QUEUED", b"QUEUED"]
            one, wrong, two = replies[4]
            assert (one, two) == (1, 2)
            assert isinstance(wrong, RedisReplyError)

    run(body)


@pytest.mark.parametrize(
    "command",
    [(), ("SUBSCRIBE", "c"), (b"psubscribe", b"c*"), ("select", 1), ("MULTI",), ("Monitor",)],
)
def test_execute_refuses_commands_that_would_break_the_shared_connection(
    run: Runner, redis_server: RedisServer, command: tuple[Any, ...]
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            with pytest.raises(ValueError, match=r"RedisClient does not send|at least its name"):
                await redis.execute(*command)
            with pytest.raises(ValueError, match="at least its name"):
                await redis.pipeline([["PING"], []])
            with pytest.raises(ValueError, match="does not send WATCH"):
                await redis.pipeline([["WATCH", "k"]])
            assert await redis.execute("PING") == b"PONG"

    run(body)


@pytest.mark.parametrize("writes_per_call", [client_module.WRITES_PER_CALL, 1, 0])
def test_concurrent_callers_each_get_their_own_reply(
    run: Runner, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch, writes_per_call: int
) -> None:
    # (0: every caller hands its writing to a task at once; 1: after its own write.)
    monkeypatch.setattr(client_module, "WRITES_PER_CALL", writes_per_call)
    callers = 200

    async def body() -> None:
        results: dict[int, tuple[Any, ...]] = {}
        async with open_redis(redis_server.url) as redis:

            async def caller(index: int) -> None:
                set_reply = await redis.execute("SET", f"key:{index}", f"value:{index}")
                incremented = await redis.execute("INCRBY", f"count:{index}", index)
                pipelined = await redis.pipeline(
                    [["GET", f"key:{index}"], ["INCR", f"count:{index}"]]
                )
                results[index] = (set_reply, incremented, *pipelined)

            async with anyio.create_task_group() as group:
                for index in range(callers):
                    group.start_soon(caller, index)
        assert results == {
            index: (b"OK", index, f"value:{index}".encode(), index + 1) for index in range(callers)
        }

    run(body)


def test_fewer_places_than_callers_still_serves_them_all(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url, max_pending_commands=2) as redis:
            async with anyio.create_task_group() as group:
                for _ in range(50):
                    group.start_soon(redis.execute, "INCR", "n")
                # (A pipeline longer than the bound takes all of it rather than wait.)
                group.start_soon(redis.pipeline, [["INCR", "n"]] * 5)
            assert await redis.execute("GET", "n") == b"55"

    run(body)


def test_a_cancelled_caller_leaves_later_replies_matched(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url) as redis, open_redis(redis_server.url) as other:
            cancelled = anyio.CancelScope()

            async def blocked_caller() -> None:
                with cancelled:
                    await redis.execute("BLPOP", "queue", 0)
                    raise AssertionError("BLPOP answered a cancelled caller")  # pragma: no cover
                assert cancelled.cancelled_caught

            later: list[Any] = []

            async def later_caller() -> None:
                later.append(await redis.execute("SET", "after", "yes"))
                later.append(await redis.execute("GET", "after"))

            async with anyio.create_task_group() as group:
                group.start_soon(blocked_caller)
                await eventually(lambda: has_blocked(other))
                cancelled.cancel()
                group.start_soon(later_caller)  # (queued behind the BLPOP on the wire)
                await other.execute("RPUSH", "queue", "item")  # its reply: read and dropped
            assert later == [b"OK", b"yes"]
            assert await other.execute("LLEN", "queue") == 0

    async def has_blocked(client: RedisClient) -> bool:
        return await blocked_clients(client) == 1

    run(body)


def test_closing_fails_the_calls_still_waiting(run: Runner, redis_server: RedisServer) -> None:
    async def body() -> None:
        failures: list[BaseException] = []

        async def waiting_caller(redis: RedisClient) -> None:
            try:
                await redis.execute("BLPOP", "queue", 0)
            except RedisUnavailableError as error:
                failures.append(error)

        async with (
            open_redis(redis_server.url) as other,
            anyio.create_task_group() as group,
            open_redis(redis_server.url) as redis,
        ):
            group.start_soon(waiting_caller, redis)
            await eventually(lambda: is_blocked(other))
        assert len(failures) == 1
        assert "closed" in str(failures[0])
        with pytest.raises(RedisUnavailableError, match="closed"):
            await redis.execute("PING")

    async def is_blocked(client: RedisClient) -> bool:
        return await blocked_clients(client) == 1

    run(body)


def test_select_uses_the_database_of_the_url(run: Runner, redis_server: RedisServer) -> None:
    async def body() -> None:
        async with open_redis(redis_server.url + "/3") as db3, open_redis(redis_server.url) as db0:
            await db3.execute("SET", "where", "three")
            assert await db3.execute("GET", "where") == b"three"
            assert await db0.execute("GET", "where") is None
            assert await db0.execute("DBSIZE") == 0
        with pytest.raises(RedisUnavailableError, match="refused SELECT"):
            async with open_redis(redis_server.url + "/999"):
                pass  # pragma: no cover

    run(body)


PASSWORD = "p@ss:w/rd"  # (needs percent-escaping in a URL)
WRONG_PASSWORD = "not-the-password-123"


@pytest.fixture(scope="module")
def redis_server_with_password() -> Iterator[RedisServer]:
    with RedisServer(password=PASSWORD) as server:
        yield server


def test_auth_uses_the_password_of_the_url(
    run: Runner, redis_server_with_password: RedisServer
) -> None:
    server = redis_server_with_password

    async def body() -> None:
        async with open_redis(server.url) as redis:
            assert await redis.execute("PING") == b"PONG"
        username_url = server.url.replace("redis://:", "redis://default:")
        async with open_redis(username_url) as redis:
            assert await redis.execute("PING") == b"PONG"
        async with open_redis(f"redis://127.0.0.1:{server.port}") as redis:
            with pytest.raises(RedisReplyError, match="NOAUTH"):
                await redis.execute("PING")

    run(body)


def test_a_wrong_password_is_a_clear_error_that_does_not_show_it(
    run: Runner, redis_server_with_password: RedisServer
) -> None:
    server = redis_server_with_password

    async def body() -> None:
        for url in (
            f"redis://:{WRONG_PASSWORD}@127.0.0.1:{server.port}",
            f"redis://nobody:{WRONG_PASSWORD}@127.0.0.1:{server.port}",
        ):
            with pytest.raises(RedisUnavailableError, match="refused AUTH") as refused:
                async with open_redis(url):
                    pass  # pragma: no cover
            message = str(refused.value)
            assert WRONG_PASSWORD not in message
            assert f"127.0.0.1:{server.port}" in message
            assert "WRONGPASS" in message or "invalid password" in message

    run(body)


def test_an_unreachable_server_is_unavailable(run: Runner) -> None:
    port = reserve_port()

    async def body() -> None:
        with pytest.raises(RedisUnavailableError, match=f"cannot connect to 127.0.0.1:{port}"):
            async with open_redis(f"redis://:secret-pw@127.0.0.1:{port}"):
                pass  # pragma: no cover

    run(body)


def test_a_stopped_server_fails_calls_and_a_restarted_one_serves_them(run: Runner) -> None:
    with RedisServer() as server:

        async def body() -> None:
            async with open_redis(server.url) as redis:
                assert await redis.execute("SET", "k", "v") == b"OK"
                server.stop()
                with pytest.raises(RedisUnavailableError, match=f"127.0.0.1:{server.port}"):
                    await redis.execute("GET", "k")
                assert not redis.available
                with pytest.raises(RedisUnavailableError, match="cannot connect"):
                    await redis.execute("GET", "k")
                server.start()
                assert await redis.execute("GET", "k") is None  # (a new, empty server)
                assert await redis.execute("SET", "k", "again") == b"OK"
                assert redis.available

        run(body)


def test_callers_queued_behind_a_failed_attempt_share_its_failure(run: Runner) -> None:
    with RedisServer() as server:

        async def body() -> None:
            failures: list[str] = []
            async with open_redis(server.url) as redis:
                server.stop()

                async def caller() -> None:
                    try:
                        await redis.execute("PING")
                    except RedisUnavailableError as error:
                        failures.append(str(error))

                async with anyio.create_task_group() as group:
                    for _ in range(20):
                        group.start_soon(caller)
                server.start()
                assert await redis.execute("PING") == b"PONG"
            assert len(failures) == 20

        run(body)


def test_a_hung_server_times_out_and_the_next_call_reconnects(run: Runner) -> None:
    with RedisServer() as server:

        async def body() -> None:
            async with open_redis(server.url, command_timeout=0.5) as redis:
                assert await redis.execute("SET", "k", "v") == b"OK"
                server.pause()
                try:
                    with pytest.raises(RedisUnavailableError, match="no reply"):
                        await redis.execute("GET", "k")
                    assert not redis.available
                finally:
                    server.resume()
                assert await redis.execute("GET", "k") == b"v"

        run(body)


@asynccontextmanager
async def fake_server(
    handler: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> AsyncIterator[int]:
    """A server on a free port of 127.0.0.1 running ``handler`` on each connection: the port."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await handler(stream)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, handle)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        group.cancel_scope.cancel()


def test_a_server_that_never_answers_the_login_times_the_connection_out(run: Runner) -> None:
    async def body() -> None:
        async def silent(stream: anyio.abc.SocketStream) -> None:
            await anyio.sleep_forever()

        async with fake_server(silent) as port:
            with pytest.raises(RedisUnavailableError, match=r"no answer in 0\.2 s"):
                async with open_redis(f"redis://:pw@127.0.0.1:{port}", connect_timeout=0.2):
                    pass  # pragma: no cover

    run(body)


def test_garbage_from_the_server_makes_it_unavailable(run: Runner) -> None:
    async def body() -> None:
        async def garbage(stream: anyio.abc.SocketStream) -> None:
            await stream.receive()
            await stream.send(b"?what\r\n")
            await anyio.sleep_forever()

        async with fake_server(garbage) as port, open_redis(f"redis://127.0.0.1:{port}") as redis:
            with pytest.raises(RedisUnavailableError, match="unreadable reply"):
                await redis.execute("PING")

    run(body)
