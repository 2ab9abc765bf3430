"""Tasks whose worker is gone: failed when read, once it has stayed gone a while.

A worker that stops fails the tasks it was running as it goes
(`SharedTaskRunner.fail_interrupted`). A worker that crashes (killed, out of memory,
its machine lost) can't: its tasks would read ``working`` until their TTL, and a client
polling ``tasks/get`` would poll that long for nothing. So a read of a working task
(`RedisTaskStore.get`) whose run is recorded on another worker asks whether that
worker still listens on its channel, as a forwarded legacy request does (a crashed
process's subscription ends with its connection). Gone at two reads at least
`ORPHAN_GRACE` apart, the task is saved as failed with `STOPPED` — over the revision
read, so a run that ended meanwhile keeps its end — and its news goes to every worker,
as if the gone worker had saved it (their ``notifications/tasks`` streams hear it).

A 2025-11-25 ``tasks/list`` (`RedisTaskStore.owned_by`) fails them too, asking about
each worker once per listing. Only reads find orphans: nothing scans the store, so a
task nobody asks about waits for its TTL, at no cost to anyone. The check costs a read
of a working task run elsewhere one more round trip (a listing: one per other worker
running some of its tasks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from mcpcore import jsonrpc, types
from transports._redis import RESUBSCRIBE_BACKOFF

__all__ = ["MAX_GONE_WORKERS", "ORPHAN_GRACE", "STOPPED", "Orphans"]

#: Seconds a task's worker must stay gone before a read fails the task: three times the
#: longest wait of a worker subscribing again after losing its connection
#: (`transports._redis.RESUBSCRIBE_BACKOFF`), so that a worker cut off for a moment (a
#: Redis restart) keeps its tasks.
ORPHAN_GRACE: Final = 3 * max(RESUBSCRIBE_BACKOFF)
#: Workers remembered as gone at once (each an entry of a few dozen bytes); past it the
#: memory starts again, which only delays failing their tasks by one grace.
MAX_GONE_WORKERS: Final = 256
#: The error of a task whose worker stopped while it ran (a failed task carries "a
#: JSON-RPC error only", SEP-2663; -32603, as any run that could not finish).
STOPPED: Final = types.Error(
    code=jsonrpc.INTERNAL_ERROR, message="The server stopped while the task was running"
)

#: Whether a worker (by name) still listens on its channel (True when Redis can't tell).
Alive = Callable[[str], Awaitable[bool]]


class Orphans:
    """Tells when the worker recorded as running a task is gone for good.

    Args:
        alive: Whether a worker still listens.
        clock: A monotonic clock (seconds).
        grace: See `ORPHAN_GRACE`.
        failed: Told a task's id and its gone worker once a read failed the task (the
            deployment announces it to every worker).
    """

    __slots__ = ("_alive", "_clock", "_gone_since", "failed", "grace")

    def __init__(
        self,
        alive: Alive,
        clock: Callable[[], float],
        *,
        grace: float = ORPHAN_GRACE,
        failed: Callable[[str, str], Awaitable[None]] | None = None,
    ) -> None:
        self._alive = alive
        self._clock = clock
        self.grace = grace
        self.failed = failed
        self._gone_since: dict[str, float] = {}

    async def abandoned(self, worker: str) -> bool:
        """Whether ``worker`` is gone, and was seen gone `grace` seconds ago already."""
        if await self._alive(worker):
            self._gone_since.pop(worker, None)
            return False
        now = self._clock()
        since = self._gone_since.get(worker)
        if since is None:
            if len(self._gone_since) >= MAX_GONE_WORKERS:
                self._gone_since.clear()
            self._gone_since[worker] = now
            return False
        return now - since >= self.grace
