"""Fixtures of the Redis tests: a real redis-server, and each test under trio and asyncio.

``redis_server`` is one server for the module, emptied (FLUSHALL) before each test;
tests that stop, pause or log into a server start their own `RedisServer`. ``run`` runs
a test's async body under the backend the test is parametrized with, bounded by
`TEST_TIMEOUT` so that a hang fails instead of stalling the suite.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

import anyio
import pytest
import trio

from tests.redis_server import RedisServer

#: Seconds a test's body may take: a bound that makes a hang fail, not a measure.
TEST_TIMEOUT = 30.0

Body = Callable[[], Awaitable[None]]
Runner = Callable[[Body], None]


@pytest.fixture(scope="module")
def shared_redis_server() -> Iterator[RedisServer]:
    """One server for a test module."""
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_server(shared_redis_server: RedisServer) -> RedisServer:
    """The module's server, emptied."""
    shared_redis_server.command("FLUSHALL")
    return shared_redis_server


@pytest.fixture(params=["trio", "asyncio"])
def backend(request: pytest.FixtureRequest) -> str:
    """The async library a test runs under."""
    name: str = request.param
    return name


@pytest.fixture
def run(backend: str) -> Runner:
    """Runs an async test body under ``backend``, bounded by `TEST_TIMEOUT`."""

    def runner(body: Body) -> None:
        if backend == "trio":

            async def on_trio() -> None:
                with trio.fail_after(TEST_TIMEOUT):
                    await body()

            trio.run(on_trio)
        else:

            async def on_asyncio() -> None:
                with anyio.fail_after(TEST_TIMEOUT):
                    await body()

            anyio.run(on_asyncio, backend="asyncio")

    return runner
