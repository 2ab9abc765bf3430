"""Timing clients that live in their own event loop, each in a thread of its own.

`mcpcore_cli.bench.timing.measure` times plain callables, but the stdio clients live in event
loops: trio for mcpcore and the raw ceiling, asyncio (through anyio) for the official
SDK. So each variant gets a thread running its own loop, in which an *owner* task opens
the client (spawning its server process), then runs one batch of calls each time it is
handed a job, until it is handed ``None``; leaving the client's ``async with`` closes
it and ends its server.

The hand-off is the same for both kinds of loop: the harness thread wakes the loop
through its thread-safe entry point (``TrioToken.run_sync_soon`` /
``loop.call_soon_threadsafe``: a byte written to the loop's wake-up pipe), which puts
the job in the owner's in-loop queue; the owner runs the batch and completes a
`concurrent.futures.Future` that the harness thread is blocked on. About 70 µs on trio
and 45 µs on asyncio on this machine (``python -m bench.stdio --handoff`` measures it),
spread over a whole batch of calls.

Only one loop works at a time: the harness thread blocks while a batch runs, and the
other variants' loops sleep in ``epoll`` with their servers idle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import glob
import math
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

import trio

from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "AsyncioThread",
    "LoopThread",
    "TrioThread",
    "asyncio_gather",
    "child_processes",
    "kill_processes",
    "trio_gather",
]

_T = TypeVar("_T")

#: Seconds a client may take to start (spawn and connect to its server).
START_TIMEOUT = 60.0
#: Seconds one batch may take before the benchmark gives up on the variant.
BATCH_TIMEOUT = 300.0
#: Seconds a client may take to close (its server told to exit, then waited for).
CLOSE_TIMEOUT = 15.0

_Job = concurrent.futures.Future  # of whatever the batch returns


class LoopThread(Generic[_T]):
    """A client opened by ``opener`` in an event loop of its own thread.

    Call `start` (the thread opens the client), `wait_ready`, then `operation` once per
    batch, and `close` at the end, in a ``finally``.

    Args:
        name: The variant, for error messages and the thread's name.
        opener: Opens the client (an async context manager) inside the loop.
        batch: One batch of calls on the opened client; its value is `operation`'s.
    """

    def __init__(
        self,
        name: str,
        opener: Callable[[], AbstractAsyncContextManager[_T]],
        batch: Callable[[_T], Awaitable[Any]],
    ) -> None:
        self.name = name
        self._opener = opener
        self._batch = batch
        self._ready: concurrent.futures.Future[_T] = concurrent.futures.Future()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"bench {name}", daemon=True)
        self._closing = False
        self._running: _Job[Any] | None = None  # the batch under way, if any

    # ------------------------------------------------------ the harness thread's side

    def start(self) -> None:
        """Start the thread: it opens the client in its loop."""
        self._thread.start()

    def wait_ready(self) -> _T:
        """Wait until the client is open; return it (to check a call outside the timing).

        Raises:
            BenchmarkError: The client could not be opened.
        """
        try:
            return self._ready.result(START_TIMEOUT)
        except concurrent.futures.TimeoutError:
            raise BenchmarkError(f"{self.name}: the client did not start") from None
        except Exception as exc:
            raise BenchmarkError(f"{self.name}: the client did not start: {exc!r}") from exc

    def operation(self) -> Any:
        """Run one batch in the loop; return what the batch returned."""
        job: _Job[Any] = concurrent.futures.Future()
        self._post(job)
        try:
            return job.result(BATCH_TIMEOUT)
        except concurrent.futures.TimeoutError:
            raise BenchmarkError(f"{self.name}: a batch took over {BATCH_TIMEOUT} s") from None

    def close(self) -> None:
        """Close the client (its server process ends) and the loop; wait for both."""
        if not self._thread.is_alive():
            return
        self._closing = True
        if self._ready.done() and self._ready.exception() is None:
            self._post(None)
        # (Otherwise the owner is still opening: it sees `_closing` once it is ready.)
        if not self._finished.wait(START_TIMEOUT + CLOSE_TIMEOUT):
            # Stuck in a batch or in opening: cancel the owner, so that the client's
            # ``async with`` unwinds and stops its server.
            self._cancel()
            self._finished.wait(CLOSE_TIMEOUT)
        self._thread.join(1.0)

    # ------------------------------------------------------ the loop thread's side

    def _main(self) -> None:
        try:
            self._run_loop()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            # A client that fails outside a call (its reader task, say) fails the batch
            # under way at once, rather than leaving the harness to its timeout.
            running = self._running
            if running is not None and not running.done():
                running.set_exception(BenchmarkError(f"{self.name}: the client failed: {exc!r}"))
        finally:
            if not self._ready.done():
                self._ready.set_exception(BenchmarkError(f"{self.name}: the loop ended"))
            self._finished.set()

    async def _own(self, jobs: Callable[[], Awaitable[_Job[Any] | None]]) -> None:
        """The owner task: open the client, run the jobs, close the client."""
        async with self._opener() as target:
            self._ready.set_result(target)
            while not self._closing and (job := await jobs()) is not None:
                if not job.set_running_or_notify_cancel():
                    continue
                self._running = job
                try:
                    job.set_result(await self._batch(target))
                except Exception as exc:  # a failed call fails the operation, loudly
                    job.set_exception(exc)
                self._running = None  # (kept if the batch was cancelled: `_main` fails it)

    def _run_loop(self) -> None:
        raise NotImplementedError

    def _post(self, job: _Job[Any] | None) -> None:
        raise NotImplementedError

    def _cancel(self) -> None:
        raise NotImplementedError


class TrioThread(LoopThread[_T]):
    """A `LoopThread` running ``trio.run``."""

    _token: trio.lowlevel.TrioToken
    _send: trio.MemorySendChannel[_Job[Any] | None]
    _scope: trio.CancelScope

    def _run_loop(self) -> None:
        trio.run(self._trio_main)

    async def _trio_main(self) -> None:
        self._send, receive = trio.open_memory_channel[_Job[Any] | None](math.inf)
        self._token = trio.lowlevel.current_trio_token()

        async def next_job() -> _Job[Any] | None:
            return await receive.receive()

        with trio.CancelScope() as self._scope:
            await self._own(next_job)

    def _post(self, job: _Job[Any] | None) -> None:
        try:
            self._token.run_sync_soon(self._send.send_nowait, job)
        except trio.RunFinishedError:
            if job is not None:
                job.set_exception(BenchmarkError(f"{self.name}: the client has stopped"))

    def _cancel(self) -> None:
        with contextlib.suppress(trio.RunFinishedError, AttributeError):
            self._token.run_sync_soon(self._scope.cancel)


class AsyncioThread(LoopThread[_T]):
    """A `LoopThread` running ``asyncio.run`` (the official SDK's anyio runs on it)."""

    _loop: asyncio.AbstractEventLoop
    _queue: asyncio.Queue[_Job[Any] | None]
    _task: asyncio.Task[Any] | None

    def _run_loop(self) -> None:
        asyncio.run(self._asyncio_main())

    async def _asyncio_main(self) -> None:
        self._queue = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        await self._own(self._queue.get)

    def _post(self, job: _Job[Any] | None) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, job)
        except RuntimeError:  # the loop is closed
            if job is not None:
                job.set_exception(BenchmarkError(f"{self.name}: the client has stopped"))

    def _cancel(self) -> None:
        with contextlib.suppress(RuntimeError, AttributeError):
            if self._task is not None:
                self._loop.call_soon_threadsafe(self._task.cancel)


def child_processes() -> set[int]:
    """The ids of this process's child processes (Linux; an empty set elsewhere)."""
    children: set[int] = set()
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(path) as listing:
                children.update(int(pid) for pid in listing.read().split())
        except OSError:  # the thread ended meanwhile
            continue
    return children


def kill_processes(pids: Iterable[int]) -> list[int]:
    """Kill each process (a last resort, for servers a client left behind); those killed."""
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # already gone
            continue
        killed.append(pid)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    return killed


async def trio_gather(tasks: int, worker: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``tasks`` copies of ``worker`` at once in a trio nursery; their results."""
    results: list[Any] = [None] * tasks

    async def run(index: int) -> None:
        results[index] = await worker()

    async with trio.open_nursery() as nursery:
        for index in range(tasks):
            nursery.start_soon(run, index)
    return results


async def asyncio_gather(tasks: int, worker: Callable[[], Coroutine[Any, Any, Any]]) -> list[Any]:
    """Run ``tasks`` copies of ``worker`` at once as asyncio tasks; their results."""
    return list(await asyncio.gather(*(worker() for _ in range(tasks))))
