"""`primitives.Interruptible`: a block another task ends early, on asyncio and on trio.

The ASGI app runs each request in one (`transports._asgi.app`): the watcher cancels it
when the client hangs up or its body is late. What must hold on both libraries: a cancel
from another task ends the block at its next checkpoint and is swallowed there; a block
nobody cancelled lets its own exceptions (a `TimeoutError` included) through; a cancel
after the block is left does nothing; a cancel from inside ends it at its next checkpoint
and never later. Each test runs with the block made as `primitives.Interruptible` and as
`primitives.interruptible` chooses it for the running library (the app's way).
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from transports._runtime import primitives

BACKENDS = ["asyncio", "trio"]


def _per_block() -> primitives.Interruptible:
    return primitives.Interruptible()


def _chosen_once() -> primitives.Interruptible:
    return primitives.interruptible()()


#: How a block is made (called in the running library).
MAKERS = pytest.mark.parametrize(
    "make", [_per_block, _chosen_once], ids=["per block", "chosen once"]
)
Make = Callable[[], primitives.Interruptible]


@MAKERS
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("inside", [False, True], ids=["from another task", "from inside"])
def test_a_cancel_ends_the_block_at_its_next_checkpoint_and_is_swallowed(
    backend: str, inside: bool, make: Make
) -> None:
    reached: list[str] = []

    async def main() -> None:
        block = make()
        async with anyio.create_task_group() as group:

            async def cancel_soon() -> None:
                await anyio.sleep(0)
                block.cancel()

            if not inside:
                group.start_soon(cancel_soon)
            with block:
                if inside:
                    block.cancel()
                reached.append("entered")  # (from inside: no checkpoint yet)
                await anyio.sleep(math.inf)
                reached.append("never")
            reached.append("after")
        assert block.cancel_called

    anyio.run(main, backend=backend)
    assert reached == ["entered", "after"]


@MAKERS
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_uncancelled_block_lets_its_own_exceptions_through(backend: str, make: Make) -> None:
    async def times_out(block: primitives.Interruptible) -> None:
        with block:
            await anyio.sleep(0)
            raise TimeoutError("the block's own")

    async def main() -> None:
        block = make()
        with pytest.raises(TimeoutError, match="the block's own"):
            await times_out(block)
        assert not block.cancel_called

    anyio.run(main, backend=backend)


@MAKERS
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cancel_after_the_block_does_nothing(backend: str, make: Make) -> None:
    async def main() -> None:
        block = make()
        with block:
            await anyio.sleep(0)
        block.cancel()
        assert not block.cancel_called
        await anyio.sleep(0)  # (nothing pending cancels this task)

    anyio.run(main, backend=backend)


@MAKERS
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_outer_cancellation_still_reaches_the_caller(backend: str, make: Make) -> None:
    reached: list[str] = []

    async def main() -> None:
        with anyio.CancelScope() as outer:
            async with anyio.create_task_group() as group:

                async def cancel_outer() -> None:
                    await anyio.sleep(0)
                    outer.cancel()

                group.start_soon(cancel_outer)
                with make():
                    await anyio.sleep(math.inf)
                reached.append("never")  # (the outer scope's cancellation is not the block's)
        assert outer.cancelled_caught

    anyio.run(main, backend=backend)
    assert reached == []


@MAKERS
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cancel_from_inside_without_a_checkpoint_does_not_leak_out(
    backend: str, make: Make
) -> None:
    reached: list[str] = []

    async def main() -> None:
        with make() as block:
            block.cancel()
        await anyio.sleep(0)  # (a cancellation left pending would land here)
        await anyio.sleep(0)
        reached.append("after")

    anyio.run(main, backend=backend)
    assert reached == ["after"]


@MAKERS
@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10's tasks count no cancellations")
def test_on_asyncio_the_task_is_left_as_it_was_found(make: Make) -> None:
    """The block's request is taken back: the task's count of cancellations is unchanged."""

    async def main() -> None:
        task: Any = asyncio.current_task()  # (mypy reads 3.10's Task: no ``cancelling``)
        assert task is not None
        block = make()

        async def cancel_soon() -> None:
            await asyncio.sleep(0)
            block.cancel()

        other = asyncio.ensure_future(cancel_soon())
        with block:
            await asyncio.sleep(math.inf)
        await other
        assert task.cancelling() == 0
        await asyncio.sleep(0)  # (and nothing is pending)

    asyncio.run(main())


@MAKERS
@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is 3.11's")
def test_on_asyncio_an_outer_timeout_due_with_the_cancel_is_not_swallowed(make: Make) -> None:
    """Cancelled by the block's watcher and by an outer timeout at once: the timeout wins."""
    reached: list[str] = []

    async def both(timeout: Any, block: primitives.Interruptible) -> None:
        await asyncio.sleep(0)
        timeout.reschedule(asyncio.get_running_loop().time() - 1)  # (due: at once)
        block.cancel()

    async def timed(block: primitives.Interruptible) -> None:
        timeouts: Any = asyncio  # (mypy reads 3.10's asyncio: no ``timeout``)
        async with timeouts.timeout(None) as timeout:
            other = asyncio.ensure_future(both(timeout, block))
            with block:
                await asyncio.sleep(math.inf)
            reached.append("never")
        await other

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await timed(make())

    asyncio.run(main())
    assert reached == []
