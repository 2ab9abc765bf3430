"""Running a test on asyncio through anyio (for the official SDK's side of interop tests).

anyio_test = anyio_runner(TEST_TIMEOUT)

@anyio_test
async def test_something() -> None:
    ...
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["anyio_runner"]

_Test = Callable[..., Awaitable[None]]


def anyio_runner(timeout: float) -> Callable[[_Test], Callable[..., None]]:
    """A decorator running an async test with `anyio.run`, bounded by ``timeout`` seconds."""

    def anyio_test(test: _Test) -> Callable[..., None]:
        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            async def bounded() -> None:
                with anyio.fail_after(timeout):
                    await test(*args, **kwargs)

            anyio.run(bounded)

        return wrapper

    return anyio_test
