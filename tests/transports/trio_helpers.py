"""Helpers for trio tests (the repository has no pytest-trio).

    @trio_test
    async def test_something() -> None:
        ...

`trio_test` runs the coroutine with `trio.run` under a `trio.fail_after` bound
(`TEST_TIMEOUT` seconds unless given), so that a test that would hang fails instead.
``@trio_test(autojump=True)`` runs it on a `trio.testing.MockClock` that jumps ahead
whenever every task is blocked: timeouts in virtual time, instantly and exactly (the
bound is then virtual too: a test where everything blocks for good fails at once).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Final, overload

import trio
import trio.testing

__all__ = ["PYTHON", "REPOSITORY", "TEST_TIMEOUT", "trio_test"]

#: Seconds a trio test may take before it fails: generous for a loaded CI machine,
#: far below pytest-timeout's 300 s so that the failure names the test's own bound.
TEST_TIMEOUT: Final = 20.0
#: The repository's root (for running its scripts as subprocesses).
REPOSITORY: Final = Path(__file__).resolve().parents[2]
#: The interpreter running the tests (so subprocesses use the same virtualenv).
PYTHON: Final = sys.executable

_AsyncTest = Callable[..., Coroutine[Any, Any, None]]


@overload
def trio_test(test: _AsyncTest, /) -> Callable[..., None]: ...
@overload
def trio_test(
    *, timeout: float = TEST_TIMEOUT, autojump: bool = False
) -> Callable[[_AsyncTest], Callable[..., None]]: ...


def trio_test(
    test: _AsyncTest | None = None,
    /,
    *,
    timeout: float = TEST_TIMEOUT,
    autojump: bool = False,
) -> Any:
    """Run an async test function with `trio.run`, failing it after ``timeout`` seconds.

    Usable bare (``@trio_test``) or with options (``@trio_test(timeout=5)``,
    ``@trio_test(autojump=True)`` for a virtual clock). Pytest fixtures and
    parametrization work: the wrapper keeps the test's signature.
    """

    def decorate(function: _AsyncTest) -> Callable[..., None]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            async def bounded() -> None:
                with trio.fail_after(timeout):
                    await function(*args, **kwargs)

            clock = trio.testing.MockClock(autojump_threshold=0) if autojump else None
            trio.run(bounded, clock=clock)

        return wrapper

    if test is not None:
        return decorate(test)
    return decorate
