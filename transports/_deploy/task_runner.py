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
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

from mcpcore.server import DEFAULT_POLL_INTERVAL_MS
from transports._deploy.messages import CancelTask, Message
from transports._deploy.task_store import TERMINAL_STATUSES, RedisTaskStore
from transports._redis import RedisUnavailableError
from transports._runtime import primitives
from transports._runtime.primitives import AnyTaskGroup
from transports._runtime.tasks import GroupTaskRunner

__all__ = ["WAIT_POLL_INTERVAL", "SharedTaskRunner"]

#: Seconds between two reads of a task running on another worker, for a 2025-11-25
#: ``tasks/result`` waiting on it: the interval we ask polling clients to keep
#: (`mcpcore.server.DEFAULT_POLL_INTERVAL_MS`), so a blocked request learns of the end no
#: later than a polling client would, at the same cost to Redis.
WAIT_POLL_INTERVAL: Final = DEFAULT_POLL_INTERVAL_MS / 1000

#: Publishes a message on the hub channel, to every worker; False when Redis is unreachable.
Broadcast = Callable[[Message], Awaitable[bool]]
#: Whether a worker (by name) still listens on its channel (True when Redis can't tell).
Alive = Callable[[str], Awaitable[bool]]


class SharedTaskRunner:
    """A `mcpcore.server.TaskRunner` for a deployment (see the module docstring).

    Args:
        group: Where this worker's runs run (the deployment's task group: it outlives
            the requests that create tasks).
        store: The deployment's task store (it records which worker runs a task).
        broadcast: Publishes to every worker.
        alive: Whether a worker still listens.
    """

    __slots__ = ("_alive", "_broadcast", "_group", "_local", "_store")

    def __init__(
        self, group: AnyTaskGroup, store: RedisTaskStore, *, broadcast: Broadcast, alive: Alive
    ) -> None:
        self._group = group
        self._local = GroupTaskRunner(group)
        self._store = store
        self._broadcast = broadcast
        self._alive = alive

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
            await work()

        self._local.start(task_id, claimed)

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
        worker running it (or the task waits for input).
        """
        while True:
            if await self._local.wait(task_id):
                return True
            ended = await self._ended_elsewhere(task_id)
            if ended is not None:
                return ended
            await primitives.sleep(WAIT_POLL_INTERVAL)

    async def _ended_elsewhere(self, task_id: str) -> bool | None:
        """True: it ended (or is gone); False: no run will end it; None: it runs on."""
        try:
            state = await self._store.state_of(task_id)
        except RedisUnavailableError:
            return None  # (can't tell yet: ask again)
        if state is None:
            return True  # (dropped: the caller finds it unknown)
        status, worker = state
        if status in TERMINAL_STATUSES:
            return True
        if status != "working" or worker is None:
            return False  # (input_required: nothing runs until tasks/update)
        if worker == self._store.worker:
            return None if task_id in self._local else False
        return None if await self._alive(worker) else False

    async def recheck(self) -> None:
        """Cancel this worker's runs of tasks that ended elsewhere (a cancel may be lost)."""
        for task_id in self._local.running():
            try:
                state = await self._store.state_of(task_id)
            except RedisUnavailableError:
                return  # (the next resubscription checks again)
            if state is None or state[0] in TERMINAL_STATUSES:
                self._local.cancel(task_id)
