"""Long-lived worker tasks that run one request at a time, each under a cancel scope.

Starting a trio task and entering a cancel scope cost about 12 and 7 µs here (more than
the whole protocol work of a request), and a request-response pipe pays them on every
message. So requests are handed to workers: a worker handles one request at a time and
then waits for the next, and it reuses its cancel scope until a cancellation has used
it. The guarantees of a task per request hold:

* no two requests ever run in one task at the same time, and user code never runs in
  the reader's task;
* cancelling a request (``notifications/cancelled``) cancels exactly the scope around
  that request, and the scope is retired with it: the next request gets a fresh one;
* a worker waits for work outside any request's scope, so a cancellation never
  reaches a request it was not meant for;
* a request cancelled after it was handed over but before its worker ran never runs:
  its worker gives it to ``abandon`` instead, so that what it holds (a handler slot,
  a stream waiting for its answer) is still given back;
* a request's id is free once its answer is sent, before its worker is done with it:
  a request using that id again takes it over, and a cancellation by it is the new
  request's.

An idle worker waits on an event (`transports._runtime.primitives`: trio's own under
trio): handing a request over is leaving it in the worker's `_Inbox` and setting that
event (when no worker is idle, a new one starts with the request). At most
`MAX_IDLE_WORKERS` wait idle; the rest exit. (An unbuffered memory channel does the same
handing over at ~2 µs more per request, measured here: a tenth of the whole CPU per
request of stdio tools/call at 64 in flight.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Final, Generic, TypeVar

from transports._runtime import primitives
from transports._runtime.primitives import AnyCancelScope, AnyTaskGroup

__all__ = ["MAX_IDLE_WORKERS", "WorkerPool"]

#: Workers kept waiting for work. Each is a suspended coroutine of a few kilobytes; past
#: this many, a worker that runs out of work exits instead of waiting. A client keeping
#: a hundred-odd requests in flight should never pay a task spawn per request: with 64,
#: a third of the requests of 100 in flight started a task, and the server spent 25%
#: more instructions per request (measured with callgrind: 150k against 120k).
MAX_IDLE_WORKERS: Final = 128

_Job = TypeVar("_Job")


class WorkerPool(Generic[_Job]):
    """Runs ``run(job)`` for each submitted job, in worker tasks of ``nursery``.

    Args:
        nursery: Where the workers live (cancelling it ends them all).
        run: What a worker does with a job.
        key: The job's identity for `cancel` (its request id).
        max_idle: See `MAX_IDLE_WORKERS`.
        abandon: What a worker does instead of ``run`` with a job cancelled before it
            started (None: nothing).
    """

    def __init__(
        self,
        nursery: AnyTaskGroup,
        run: Callable[[_Job], Awaitable[None]],
        key: Callable[[_Job], Hashable],
        *,
        max_idle: int = MAX_IDLE_WORKERS,
        abandon: Callable[[_Job], Awaitable[None]] | None = None,
    ) -> None:
        self._nursery = nursery
        self._run = run
        self._abandon = abandon
        self._key = key
        self._max_idle = max_idle
        self._idle: list[_Inbox[_Job]] = []  # the inboxes of the workers waiting in `_next`
        self._scopes: dict[Hashable, AnyCancelScope] = {}
        # The scopes `cancel` cancelled, whose workers have not retired them yet. (Kept
        # here rather than asked of `CancelScope.cancel_called`, which reads the clock.)
        self._spent: set[AnyCancelScope] = set()
        # Handed to a worker that has not run yet (it runs at the scheduler's next turn),
        # and, of those, the ones cancelled already.
        self._starting: set[Hashable] = set()
        self._cancelled_early: set[Hashable] = set()
        # The scopes of running jobs whose key a newer job took over (see `submit`).
        self._taken_over: set[AnyCancelScope] = set()

    @property
    def running(self) -> int:
        """How many jobs are submitted and not finished."""
        return len(self._scopes) + len(self._starting) + len(self._taken_over)

    def submit(self, job: _Job) -> None:
        """Start ``job`` at once: on an idle worker, or on a new one.

        A job whose key is a running job's takes it over: that one answered already
        (a request's id is free once its answer is sent, and a client may use it again
        before that job has ended), and a cancellation by the key is the new job's.
        """
        key = self._key(job)
        if key in self._scopes:
            self._taken_over.add(self._scopes.pop(key))
        self._starting.add(key)
        if self._idle:
            inbox = self._idle.pop()
            inbox.job = job
            inbox.handed.set()
        else:
            self._nursery.start_soon(self._work, job)

    def cancel(self, job_key: Hashable) -> bool:
        """Cancel the running job ``job_key``; False if no such job is running."""
        scope = self._scopes.get(job_key)
        if scope is not None:
            scope.cancel()
            self._spent.add(scope)
            return True
        if job_key in self._starting:
            self._cancelled_early.add(job_key)  # it will not run at all
            return True
        return False

    async def _work(self, job: _Job | None) -> None:
        inbox = _Inbox[_Job]()
        while True:
            if job is None:
                job = await self._next(inbox)
                if job is None:
                    return
            with primitives.CancelScope() as scope:
                while job is not None:
                    current, job = job, None
                    key = self._key(current)
                    self._starting.discard(key)
                    if key in self._cancelled_early:
                        self._cancelled_early.discard(key)
                        if self._abandon is not None:
                            await self._abandon(current)
                    else:
                        self._scopes[key] = scope
                        try:
                            await self._run(current)
                        finally:
                            if scope in self._taken_over:  # (a newer job has its key)
                                self._taken_over.discard(scope)
                            else:
                                del self._scopes[key]
                    if scope in self._spent:
                        self._spent.discard(scope)
                        break  # a cancellation used this scope up: take a fresh one
                    job = await self._next(inbox)
                    if job is None:
                        return

    async def _next(self, inbox: _Inbox[_Job]) -> _Job | None:
        """Wait for the next job; None when enough workers are idle already."""
        if len(self._idle) >= self._max_idle:
            return None
        handed = inbox.handed = primitives.Event()
        inbox.job = None
        self._idle.append(inbox)
        try:
            await handed.wait()
        except BaseException:
            if inbox in self._idle:  # (cancelled while idle: nobody will hand it a job)
                self._idle.remove(inbox)
            raise
        return inbox.job


class _Inbox(Generic[_Job]):
    """Where a worker is handed its next job (one per worker, for its whole life)."""

    __slots__ = ("handed", "job")

    def __init__(self) -> None:
        self.handed = primitives.Event()  # (a fresh one each time the worker waits)
        self.job: _Job | None = None
