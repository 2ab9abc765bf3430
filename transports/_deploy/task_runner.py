"""`SharedTaskRunner`: a deployment's task runs, cancelled and awaited from any worker.

A task runs on the worker that created it (or, once ``tasks/update`` brought every
answer it waited for, on the worker that received them), in the deployment's task
group, as `transports._runtime.tasks.GroupTaskRunner` runs it on one process; the run
records its worker in the task's record (`RedisTaskStore.claim`). The requests about
it reach any worker, and the core asks this runner two things (`mcpcore.server`'s
``Tasks.cancel`` and ``Tasks.result``):

* **cancel**: the task is saved as cancelled first (the store keeps it so, whatever the
  run writes later). Its own run is cancelled at once; a run elsewhere is reached with a
  `CancelTask` published on the deployment's hub channel, which every worker hears and
  the one running the task acts on. Broadcast, not addressed to the runner's channel: it
  needs no lookup first, and cancels are rare. Pub/sub may lose it (a subscription cut
  loses what was published meanwhile), so a worker whose subscription was made again
  checks each of its runs against the store (`SharedTaskRunner.recheck`) and cancels
  those that ended elsewhere.
* **wait** (2025-11-25 ``tasks/result``, which "MUST block until a terminal status"):
  a run of this worker wakes its waiters when it ends; for a run elsewhere the store is
  polled every `WAIT_POLL_INTERVAL`. Polling rather than a task-ended notice: the
  running worker doesn't know who waits, so a notice would go to every worker for every
  task (or need a subscription per waiting request) to serve what only a ``tasks/result``
  on another worker needs, and a notice can be lost where a poll can't. A poll is a
  read or two per interval per waiting request (the server's request limits bound
  those), and adds at most an interval to an answer the client waits for anyway. Each
  poll also asks whether the running worker still listens on its channel (as a relay
  does): a task whose worker is gone will never end, and the wait says so (False, the
  core answers with an error) rather than block until the task's TTL.

A worker that stops (a restart, a deploy) fails the tasks whose runs it cut
(`SharedTaskRunner.fail_interrupted`), so that clients polling them elsewhere learn it
instead of seeing ``working`` until the TTL. A worker that crashes can't: a read of one
of its tasks elsewhere fails it once the worker has stayed gone `ORPHAN_GRACE`
(`transports._deploy.orphans`; a ``tasks/result`` waiting on one gives up sooner, above).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

from mcpcore.server import DEFAULT_POLL_INTERVAL_MS
from transports._deploy.messages import CancelTask, Message
from transports._deploy.orphans import STOPPED, Alive
from transports._deploy.task_store import TERMINAL_STATUSES, RedisTaskStore
from transports._redis import RedisUnavailableError
from transports._runtime import primitives
from transports._runtime.primitives import AnyTaskGroup
from transports._runtime.tasks import GroupTaskRunner

__all__ = ["GONE_POLLS", "STOPPED", "WAIT_POLL_INTERVAL", "SharedTaskRunner"]

#: Seconds between two reads of a task running on another worker, for a 2025-11-25
#: ``tasks/result`` waiting on it: the interval we ask polling clients to keep
#: (`mcpcore.server.DEFAULT_POLL_INTERVAL_MS`), so a blocked request learns of the end no
#: later than a polling client would, at the same cost to Redis.
WAIT_POLL_INTERVAL: Final = DEFAULT_POLL_INTERVAL_MS / 1000

#: Polls in a row that find a task's worker gone before a wait gives up, besides the
#: first: a worker that stops fails its tasks as it goes, and its subscription (how we
#: tell it lives) may go first; one more interval lets that failure be read.
GONE_POLLS: Final = 1
#: What `SharedTaskRunner._find` finds of a run elsewhere.
_ENDED: Final = "ended"  # the task is terminal, or gone from the store
_STUCK: Final = "stuck"  # no run will end it
_RUNS: Final = "runs"  # a live worker runs it (or Redis can't tell now)
_GONE: Final = "gone"  # the worker that runs it no longer listens

#: Publishes a message on the hub channel, to every worker; False when Redis is unreachable.
Broadcast = Callable[[Message], Awaitable[bool]]


class SharedTaskRunner:
    """A `mcpcore.server.TaskRunner` for a deployment (see the module docstring).

    Args:
        group: Where this worker's runs run (the deployment's task group: it outlives
            the requests that create tasks).
        store: The deployment's task store (it records which worker runs a task).
        broadcast: Publishes to every worker.
        alive: Whether a worker still listens.
    """

    __slots__ = ("_alive", "_broadcast", "_group", "_local", "_store", "interrupted")

    def __init__(
        self, group: AnyTaskGroup, store: RedisTaskStore, *, broadcast: Broadcast, alive: Alive
    ) -> None:
        self._group = group
        self._local = GroupTaskRunner(group)
        self._store = store
        self._broadcast = broadcast
        self._alive = alive
        #: Tasks whose runs were cancelled from outside (the worker stopping), not by
        #: `cancel`: at most one per run.
        self.interrupted: set[str] = set()

    def __len__(self) -> int:
        return len(self._local)

    def start(self, task_id: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` on this worker, recorded as the task's runner."""
        store = self._store

        async def claimed() -> None:
            # (Unrecorded, a waiter elsewhere sees the last runner: alive, it waits on;
            # gone, it gives up early. Neither loses the task's outcome.)
            with contextlib.suppress(RedisUnavailableError):
                await store.claim(task_id)
            try:
                await work()
            except RedisUnavailableError:
                # Redis went away mid-run: the outcome is lost, the task stays as last
                # saved (until its TTL). Raised on, it would end the deployment's group.
                pass
            except primitives.cancelled_class():
                # (`cancel` forgets a run before cancelling it: one still known here was
                # cut from outside, by the worker stopping.)
                if task_id in self._local:
                    self.interrupted.add(task_id)
                raise

        self._local.start(task_id, claimed)

    async def fail_interrupted(self, store: RedisTaskStore) -> None:
        """This worker stopped: fail the tasks whose runs it cut (unless they moved on).

        Through ``store``, the deployment's store on a connection of the caller's (the
        worker's own may have gone with it).
        """
        for task_id in sorted(self.interrupted):
            if await store.state_of(task_id) != ("working", store.worker):
                continue
            record = await store.get(task_id)
            if record is not None:
                await store.save_stopped(record)  # (a terminal status written meanwhile stays)

    def cancel(self, task_id: str) -> None:
        """Cancel the run of ``task_id``: here at once, elsewhere through the hub channel."""
        if task_id in self._local:
            self._local.cancel(task_id)
        else:
            self._group.start_soon(self._cancel_elsewhere, task_id)

    async def _cancel_elsewhere(self, task_id: str) -> None:
        # (Unheard when Redis is unreachable: the run finishes, its outcome unsaved,
        # as the store keeps the task cancelled.)
        await self._broadcast(CancelTask(task_id))

    def cancel_here(self, task_id: str) -> None:
        """A `CancelTask` arrived: cancel the run if this worker has it."""
        self._local.cancel(task_id)

    async def wait(self, task_id: str) -> bool:
        """Return once the run of ``task_id`` has ended, on whichever worker it runs.

        False when no run will end it: none runs here and the store names no live
        worker running it (`GONE_POLLS` polls in a row), or the task waits for input.
        """
        gone = 0
        while True:
            if await self._local.wait(task_id):
                return True
            found = await self._find(task_id)
            if found is not _RUNS and found is not _GONE:
                return found is _ENDED
            gone = gone + 1 if found is _GONE else 0
            if gone > GONE_POLLS:
                return False
            await primitives.sleep(WAIT_POLL_INTERVAL)

    async def _find(self, task_id: str) -> str:
        """What became of a run elsewhere: `_ENDED`, `_STUCK`, `_RUNS` or `_GONE`."""
        try:
            state = await self._store.state_of(task_id)
        except RedisUnavailableError:
            return _RUNS  # (can't tell yet: ask again)
        if state is None:
            return _ENDED  # (dropped: the caller finds it unknown)
        status, worker = state
        if status in TERMINAL_STATUSES:
            return _ENDED
        if status != "working" or worker is None:
            return _STUCK  # (input_required: nothing runs until tasks/update)
        if worker == self._store.worker:
            return _RUNS if task_id in self._local else _STUCK
        return _RUNS if await self._alive(worker) else _GONE

    async def recheck(self) -> None:
        """Cancel this worker's runs of tasks that ended elsewhere (a cancel may be lost)."""
        for task_id in self._local.running():
            try:
                state = await self._store.state_of(task_id)
            except RedisUnavailableError:
                return  # (the next resubscription checks again)
            if state is None or state[0] in TERMINAL_STATUSES:
                self._local.cancel(task_id)
