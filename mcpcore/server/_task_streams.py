"""Listen streams that follow tasks: ``notifications/tasks`` (2026-07-28 tasks extension).

"``notifications/tasks`` (full DetailedTask) arrive through ``subscriptions/listen``
with filter ``taskIds[]``; the ack echoes the honoured ids" (SEP-2663). A stream
follows the tasks its acknowledgement honoured: those its principal may read (the
principal that created them, as ``tasks/get`` checks). `Tasks` announces each new
state of a task here, and every stream following it gets the task as ``tasks/get``
would show it, tagged with the stream's ``subscriptionId``.

The streams are this process's. In a deployment of several workers, a change saved on
one worker reaches the streams of the others through `Tasks.on_saved` and
`Tasks.announce` (`transports.Deployment` wires them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcpcore._connection import Connection
from mcpcore._listen import TASK_NOTIFICATION
from mcpcore.errors import LocalProtocolError
from mcpcore.server._outbound import Outbound
from mcpcore.types import RequestId, TaskNotificationParams

__all__ = ["MAX_FOLLOWED_TASKS", "TaskStreams"]

#: Task ids one listen stream may follow. A client follows the tasks it waits for,
#: a handful; each id costs a comparison on every task's every change.
MAX_FOLLOWED_TASKS: Final = 64


@dataclass(slots=True)
class _Following:
    connection: Connection
    request_id: RequestId
    outbound: Outbound
    principal: str | None
    task_ids: frozenset[str]


class TaskStreams:
    """The listen streams following tasks, and delivering a task's news to them."""

    __slots__ = ("_streams",)

    def __init__(self) -> None:
        self._streams: dict[tuple[Connection, RequestId], _Following] = {}

    def __bool__(self) -> bool:
        return bool(self._streams)

    def follows(self, task_id: str) -> bool:
        """Whether some stream here follows ``task_id``."""
        return any(task_id in following.task_ids for following in self._streams.values())

    def add(
        self,
        connection: Connection,
        request_id: RequestId,
        outbound: Outbound,
        principal: str | None,
        task_ids: list[str],
    ) -> None:
        """A stream, acknowledged with ``task_ids``, follows those tasks from now on."""
        following = _Following(connection, request_id, outbound, principal, frozenset(task_ids))
        self._streams[connection, request_id] = following

    def remove(self, connection: Connection, request_id: RequestId) -> None:
        """The stream ended (cancelled or closed)."""
        self._streams.pop((connection, request_id), None)

    def detach(self, connection: Connection) -> None:
        """The connection is gone, and its streams with it."""
        for key in [key for key in self._streams if key[0] is connection]:
            del self._streams[key]

    def clear(self) -> None:
        """Every stream ended (server shutdown)."""
        self._streams.clear()

    async def announce(self, principal: str | None, params: TaskNotificationParams) -> None:
        """Send a task's new state to the streams of ``principal`` that follow it."""
        for following in list(self._streams.values()):
            if params.task_id in following.task_ids and following.principal == principal:
                await self._deliver(following, params)

    async def _deliver(self, following: _Following, params: TaskNotificationParams) -> None:
        try:
            data = following.connection.send_subscription_notification(
                following.request_id, TASK_NOTIFICATION, params
            )
            if data is not None:
                await following.outbound.send(data)
        except (LocalProtocolError, ConnectionError):
            # The stream ended without our hearing of it, or nobody reads it any more.
            self.remove(following.connection, following.request_id)
