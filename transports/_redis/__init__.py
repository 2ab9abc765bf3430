"""A small Redis client for trio and asyncio: commands, and pub/sub that survives losses.

It carries the state a multi-worker deployment shares. hiredis parses and frames (its
sans-IO ``Reader`` and ``pack_command``); anyio's byte streams carry the bytes, so the
same code runs under trio (anyio's trio backend) and asyncio, which redis-py's asyncio
client does not. Needs the ``redis`` extra (``pip install 'mcpcore[redis]'``).

    async with open_redis("redis://127.0.0.1:6379/0") as redis:
        await redis.execute("INCR", "hits")

    async with open_subscriber("redis://127.0.0.1", ["events"]) as subscriber:
        async for channel, data in subscriber:
            ...
"""

from __future__ import annotations

from transports._redis.client import (
    COMMAND_TIMEOUT,
    CONNECT_TIMEOUT,
    MAX_PENDING_COMMANDS,
    REFUSED_COMMANDS,
    WRITES_PER_CALL,
    RedisClient,
    open_redis,
)
from transports._redis.connection import Arg
from transports._redis.errors import RedisError, RedisReplyError, RedisUnavailableError
from transports._redis.pubsub import (
    HEALTH_CHECK_INTERVAL,
    MAX_BUFFERED_MESSAGES,
    RESUBSCRIBE_BACKOFF,
    ReconnectCallback,
    Subscriber,
    open_subscriber,
)
from transports._redis.url import RedisAddress, mask_url, parse_redis_url

__all__ = [
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "HEALTH_CHECK_INTERVAL",
    "MAX_BUFFERED_MESSAGES",
    "MAX_PENDING_COMMANDS",
    "REFUSED_COMMANDS",
    "RESUBSCRIBE_BACKOFF",
    "WRITES_PER_CALL",
    "Arg",
    "ReconnectCallback",
    "RedisAddress",
    "RedisClient",
    "RedisError",
    "RedisReplyError",
    "RedisUnavailableError",
    "Subscriber",
    "mask_url",
    "open_redis",
    "open_subscriber",
    "parse_redis_url",
]
