"""Fixtures of the deploy tests: the Redis tests' server and backends (`tests.redis.conftest`)."""

from __future__ import annotations

from tests.redis.conftest import backend, redis_server, run, shared_redis_server

__all__ = ["backend", "redis_server", "run", "shared_redis_server"]
