"""`FanoutHub`: list changes and resource updates reach the listeners of every worker.

Each worker's `mcpcore.server.MemoryHub` knows its own listeners: the legacy sessions
it owns (``resources/subscribe``, list_changed) and the 2026-07-28
``subscriptions/listen`` streams it holds. A change noticed on one worker (a tool
registered, a file edited) is published on the deployment's hub channel; every worker,
the one that published it included, hears it and tells its own listeners. Listeners
stay local: only the news travels.

When Redis can't be reached the news is delivered to this worker's listeners alone,
rather than lost for all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcpcore import Connection
from mcpcore.server import NotificationHub, Outbound
from mcpcore.types import RequestId, SubscriptionFilter
from transports._deploy.messages import Changed, Updated

__all__ = ["FanoutHub"]

#: Publishes on the hub channel; False when Redis could not be reached.
Publish = Callable[[Changed | Updated], Awaitable[bool]]


class FanoutHub:
    """A `NotificationHub` whose news goes to every worker (see the module docstring).

    Args:
        local: This worker's listeners.
        publish: Sends news to every worker.
    """

    def __init__(self, local: NotificationHub, publish: Publish) -> None:
        self.local = local
        self._publish = publish

    def attach(self, connection: Connection, outbound: Outbound) -> None:
        """See `NotificationHub.attach`."""
        self.local.attach(connection, outbound)

    def detach(self, connection: Connection) -> None:
        """See `NotificationHub.detach`."""
        self.local.detach(connection)

    def subscribe(self, connection: Connection, uri: str) -> bool:
        """See `NotificationHub.subscribe`."""
        return self.local.subscribe(connection, uri)

    def unsubscribe(self, connection: Connection, uri: str) -> None:
        """See `NotificationHub.unsubscribe`."""
        self.local.unsubscribe(connection, uri)

    def add_stream(
        self,
        connection: Connection,
        request_id: RequestId,
        outbound: Outbound,
        honoured: SubscriptionFilter,
    ) -> None:
        """See `NotificationHub.add_stream`."""
        self.local.add_stream(connection, request_id, outbound, honoured)

    def remove_stream(self, connection: Connection, request_id: RequestId) -> bool:
        """See `NotificationHub.remove_stream`."""
        return self.local.remove_stream(connection, request_id)

    async def list_changed(self, kind: str) -> None:
        """Tell every worker's listeners that the ``kind`` list changed."""
        if not await self._publish(Changed(kind)):
            await self.local.list_changed(kind)

    async def resource_updated(self, uri: str) -> None:
        """Tell every worker's subscribers of ``uri`` that it changed."""
        if not await self._publish(Updated(uri)):
            await self.local.resource_updated(uri)

    async def close_streams(self) -> None:
        """See `NotificationHub.close_streams` (this worker's streams)."""
        await self.local.close_streams()

    async def deliver(self, news: Changed | Updated) -> None:
        """News from the hub channel: tell this worker's listeners."""
        if isinstance(news, Changed):
            await self.local.list_changed(news.kind)
        else:
            await self.local.resource_updated(news.uri)
