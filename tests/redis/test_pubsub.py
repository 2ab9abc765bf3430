"""Subscriber against a real redis-server, under trio and asyncio."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from bench._ports import reserve_port
from tests.redis.conftest import Runner
from tests.redis.test_client import eventually
from tests.redis_server import RedisServer
from transports._redis import (
    RedisClient,
    RedisUnavailableError,
    Subscriber,
    open_redis,
    open_subscriber,
    pubsub,
)
from transports._redis.connection import open_connection


async def next_message(subscriber: Subscriber) -> tuple[bytes, bytes]:
    """The subscriber's next message."""
    return await subscriber.__anext__()


async def connected_clients(redis: RedisClient) -> int:
    """How many connections the server has (``redis``'s own included)."""
    info: bytes = await redis.execute("INFO", "clients")
    for line in info.decode().splitlines():
        if line.startswith("connected_clients:"):
            return int(line.partition(":")[2])
    raise AssertionError(info)


def test_messages_published_after_subscribe_arrive_in_order(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with (
            open_redis(redis_server.url) as redis,
            open_subscriber(redis_server.url) as subscriber,
        ):
            await subscriber.subscribe("events", b"other")
            assert subscriber.channels == {b"events", b"other"}
            for index in range(20):
                assert await redis.execute("PUBLISH", "events", f"m{index}") == 1
            await redis.execute("PUBLISH", "other", b"\x00\xff")
            received = [await next_message(subscriber) for _ in range(21)]
            assert received == [
                *((b"events", f"m{index}".encode()) for index in range(20)),
                (b"other", b"\x00\xff"),
            ]
            assert subscriber.reconnects == 0

    run(body)


def test_channels_given_to_open_are_subscribed_before_it_yields(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        async with (
            open_redis(redis_server.url) as redis,
            open_subscriber(redis_server.url, ["a", "b"]) as subscriber,
        ):
            assert subscriber.available
            assert await redis.execute("PUBLISH", "b", "x") == 1
            assert await redis.execute("PUBLISH", "a", "y") == 1
            assert await next_message(subscriber) == (b"b", b"x")
            assert await next_message(subscriber) == (b"a", b"y")

    run(body)


def test_unsubscribe_stops_delivery(run: Runner, redis_server: RedisServer) -> None:
    async def body() -> None:
        async with (
            open_redis(redis_server.url) as redis,
            open_subscriber(redis_server.url, ["a", "b"]) as subscriber,
        ):
            await redis.execute("PUBLISH", "a", "buffered")  # (unsubscribed before it is read)
            await subscriber.unsubscribe("a")
            await subscriber.unsubscribe("never-subscribed")
            assert subscriber.channels == {b"b"}
            assert await redis.execute("PUBLISH", "a", "dropped") == 0
            assert await redis.execute("PUBLISH", "b", "kept") == 1
            assert await next_message(subscriber) == (b"b", b"kept")
            await subscriber.unsubscribe("b")
            assert await redis.execute("PUBLISH", "b", "dropped") == 0
            await subscriber.subscribe("a")
            assert await redis.execute("PUBLISH", "a", "again") == 1
            assert await next_message(subscriber) == (b"a", b"again")

    run(body)


def test_iteration_ends_when_the_subscriber_closes(run: Runner, redis_server: RedisServer) -> None:
    async def body() -> None:
        received: list[tuple[bytes, bytes]] = []

        async def consume(subscriber: Subscriber) -> None:
            async for message in subscriber:
                received.append(message)

        async with open_redis(redis_server.url) as redis:
            async with (
                anyio.create_task_group() as group,
                open_subscriber(redis_server.url, ["c"]) as subscriber,
            ):
                group.start_soon(consume, subscriber)
                await redis.execute("PUBLISH", "c", "one")
                await eventually(lambda: has_received(received))
            assert received == [(b"c", b"one")]
            with pytest.raises(RedisUnavailableError, match="is closed"):
                await subscriber.subscribe("c")
            # (Every connection of the subscriber is closed: only `redis`'s is left,
            # once the server has seen the others close.)
            await eventually(lambda: alone(redis))

    async def has_received(received: list[tuple[bytes, bytes]]) -> bool:
        return bool(received)

    async def alone(redis: RedisClient) -> bool:
        return await connected_clients(redis) == 1

    run(body)


def test_a_restarted_server_is_resubscribed_and_the_reconnection_told(run: Runner) -> None:
    with RedisServer() as server:

        async def body() -> None:
            reconnected = anyio.Event()
            async with open_subscriber(
                server.url, ["a", "b"], on_reconnect=reconnected.set
            ) as subscriber:
                server.stop()
                server.start()
                await reconnected.wait()
                assert subscriber.reconnects == 1
                assert subscriber.available
                async with open_redis(server.url) as redis:
                    assert await redis.execute("PUBLISH", "b", "after") == 1
                    assert await redis.execute("PUBLISH", "a", "after") == 1
                assert await next_message(subscriber) == (b"b", b"after")
                assert await next_message(subscriber) == (b"a", b"after")

        run(body)


def test_a_consumer_too_far_behind_costs_a_reconnection_not_memory(
    run: Runner, redis_server: RedisServer
) -> None:
    async def body() -> None:
        reconnected = anyio.Event()
        async with (
            open_redis(redis_server.url) as redis,
            open_subscriber(
                redis_server.url, ["c"], on_reconnect=reconnected.set, max_buffered_messages=4
            ) as subscriber,
        ):
            # (In one write, so that all reach the first connection: Redis runs the
            # commands it has read before it reads the subscriber's next SUBSCRIBE.)
            await redis.pipeline([["PUBLISH", "c", f"m{index}"] for index in range(10)])
            await reconnected.wait()
            assert await redis.execute("PUBLISH", "c", "after") == 1
            # The backlog went with the connection: what comes next is news.
            assert await next_message(subscriber) == (b"c", b"after")
            assert subscriber.reconnects == 1

    run(body)


async def is_gone(subscriber: Subscriber) -> bool:
    """Whether ``subscriber`` knows it has no connection."""
    return not subscriber.available


def test_subscribing_while_disconnected_fails_but_the_channel_is_kept(run: Runner) -> None:
    with RedisServer() as server:

        async def body() -> None:
            reconnected = anyio.Event()
            async with open_subscriber(server.url, on_reconnect=reconnected.set) as subscriber:
                server.stop()
                await eventually(lambda: is_gone(subscriber))
                with pytest.raises(RedisUnavailableError, match="is not connected"):
                    await subscriber.subscribe("late")
                server.start()
                await reconnected.wait()
                async with open_redis(server.url) as redis:
                    assert await redis.execute("PUBLISH", "late", "x") == 1
                assert await next_message(subscriber) == (b"late", b"x")

        run(body)


def test_an_idle_connection_is_checked_with_ping(
    run: Runner, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pubsub, "HEALTH_CHECK_INTERVAL", 0.01)

    async def body() -> None:
        async with open_redis(redis_server.url) as redis:
            await redis.execute("CONFIG", "RESETSTAT")
            async with open_subscriber(redis_server.url, ["c"]) as subscriber:
                await eventually(lambda: pinged(redis))
                assert subscriber.reconnects == 0
                await redis.execute("PUBLISH", "c", "still here")
                assert await next_message(subscriber) == (b"c", b"still here")

    async def pinged(redis: RedisClient) -> bool:
        stats: bytes = await redis.execute("INFO", "commandstats")
        return b"cmdstat_ping:calls=" in stats

    run(body)


def test_a_hung_server_is_noticed_by_the_ping_and_left(
    run: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pubsub, "HEALTH_CHECK_INTERVAL", 0.05)
    with RedisServer() as server:

        async def body() -> None:
            # (Watched, not replaced: the second connection attempt means the first
            # connection was given up. A paused server's kernel still accepts one.)
            attempts: list[object] = []
            reconnecting = anyio.Event()
            reconnected = anyio.Event()

            async def watched_open_connection(*args: Any, **kwargs: Any) -> Any:
                attempts.append(None)
                if len(attempts) == 2:
                    reconnecting.set()
                return await open_connection(*args, **kwargs)

            monkeypatch.setattr(pubsub, "open_connection", watched_open_connection)
            async with open_subscriber(
                server.url, ["c"], on_reconnect=reconnected.set, command_timeout=0.2
            ) as subscriber:
                server.pause()
                try:
                    await reconnecting.wait()
                finally:
                    server.resume()
                await reconnected.wait()
                assert subscriber.reconnects == 1
                async with open_redis(server.url) as redis:
                    assert await redis.execute("PUBLISH", "c", "x") == 1
                assert await next_message(subscriber) == (b"c", b"x")

        run(body)


def test_an_unreachable_server_fails_open_subscriber(run: Runner) -> None:
    port = reserve_port()

    async def body() -> None:
        with pytest.raises(RedisUnavailableError, match=f"127.0.0.1:{port}"):
            async with open_subscriber(f"redis://127.0.0.1:{port}", ["c"]):
                pass  # pragma: no cover

    run(body)
