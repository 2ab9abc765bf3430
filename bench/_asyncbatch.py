"""Timing async clients with the synchronous harness: one operation = one batch of calls.

`mcpcore_cli.bench.timing.measure` times plain callables. An async client lives in an event loop,
and the official SDK's lives inside task groups that must be entered and left by the
same task. So each variant gets an *owner* task that opens the client, then runs one
batch of calls each time it is handed a job; an operation hands it a job and runs the
loop until the batch is done.

Every variant pays the same hand-off (a queue put, a future, one
``run_until_complete``), spread over `BATCH` calls so that it stays a small share of
even the fastest variant's time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

__all__ = ["BATCH", "BatchRunner"]

#: Calls per timed operation: the hand-off costs ~20 µs, under 2% of a batch of ours.
BATCH = 100

_T = TypeVar("_T")


class BatchRunner(Generic[_T]):
    """Runs batches of ``call(target)`` on a target that an async context manager opens."""

    def __init__(
        self,
        opener: Callable[[], AbstractAsyncContextManager[_T]],
        call: Callable[[_T], Awaitable[Any]],
        batch: int = BATCH,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._jobs: asyncio.Queue[asyncio.Future[Any] | None] = asyncio.Queue()
        self._opener = opener
        self._call = call
        self._batch = batch
        ready: asyncio.Future[_T] = self._loop.create_future()
        self._owner = self._loop.create_task(self._own(ready))
        #: The opened target (a connected client), to check results outside the timing.
        self.target: _T = self._loop.run_until_complete(ready)

    async def _own(self, ready: asyncio.Future[_T]) -> None:
        try:
            async with self._opener() as target:
                ready.set_result(target)
                while (job := await self._jobs.get()) is not None:
                    try:
                        result = None
                        for _ in range(self._batch):
                            result = await self._call(target)
                        job.set_result(result)
                    except Exception as exc:  # a failed call fails the operation, loudly
                        job.set_exception(exc)
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def operation(self) -> Any:
        """Run one batch; return the last call's result."""
        job: asyncio.Future[Any] = self._loop.create_future()
        self._jobs.put_nowait(job)
        return self._loop.run_until_complete(job)

    def close(self) -> None:
        """Close the target and the loop."""
        self._jobs.put_nowait(None)
        try:
            self._loop.run_until_complete(self._owner)
        finally:
            self._loop.close()
