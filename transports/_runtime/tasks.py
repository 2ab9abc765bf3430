"""Running tasks (2026-07-28 extension, 2025-11-25 core): the driver's `TaskRunner`.

`mcpcore.server` decides when a tool runs as a task and what becomes of it; it never
starts anything itself. A `GroupTaskRunner` runs each task's work in a long-lived task
group (a serving nursery, so a task outlives the request that created it) under a cancel
scope of its own, which ``tasks/cancel`` cancels. It holds one scope per running task,
and the server's task store bounds how many tasks there are (`mcpcore.server.MAX_TASKS`).
`GroupTaskRunner.wait` lets a 2025-11-25 ``tasks/result`` block until a run ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Final

from transports._runtime import primitives
from transports._runtime.primitives import AnyCancelScope, AnyEvent, AnyTaskGroup

__all__ = ["TASK_ID_BYTES", "GroupTaskRunner", "new_task_id"]

#: Random bytes in a task id: 128 bits, unguessable ("task ids MUST be cryptographically
#: random" when no authorization context binds them, 2025-11-25 basic/utilities/tasks).
TASK_ID_BYTES: Final = 16


def new_task_id() -> str:
    """A fresh, unguessable task id."""
    return secrets.token_urlsafe(TASK_ID_BYTES)


class GroupTaskRunner:
    """A `mcpcore.server.TaskRunner` over a task group that outlives requests."""

    __slots__ = ("_ended", "_group", "_scopes")

    def __init__(self, group: AnyTaskGroup) -> None:
        self._group = group
        self._scopes: dict[str, AnyCancelScope] = {}
        # An event per run someone waits for (2025-11-25 tasks/result): at most one
        # per running task, set and dropped when the run ends.
        self._ended: dict[str, AnyEvent] = {}

    def __len__(self) -> int:
        return len(self._scopes)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._scopes

    def running(self) -> list[str]:
        """The ids of the tasks whose runs are under way."""
        return list(self._scopes)

    def start(self, task_id: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` in the group, cancellable as ``task_id``."""
        scope = primitives.CancelScope()
        self._scopes[task_id] = scope

        async def run() -> None:
            try:
                with scope:
                    await work()
            finally:
                if self._scopes.get(task_id) is scope:
                    del self._scopes[task_id]
                ended = self._ended.pop(task_id, None)
                if ended is not None:
                    ended.set()

        self._group.start_soon(run)

    async def wait(self, task_id: str) -> bool:
        """Return once the run of ``task_id`` has ended; False at once if none runs."""
        if task_id not in self._scopes:
            return False
        ended = self._ended.get(task_id)
        if ended is None:
            ended = self._ended[task_id] = primitives.Event()
        await ended.wait()
        return True

    def cancel(self, task_id: str) -> None:
        """Cancel the run of ``task_id`` (nothing if it has ended)."""
        scope = self._scopes.pop(task_id, None)
        if scope is not None:
            scope.cancel()
