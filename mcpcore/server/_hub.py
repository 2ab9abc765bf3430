"""Who wants to hear about changes, and delivering to exactly them.

Two kinds of listener (DESIGN §7 keeps this an interface, so that a multi-worker
deployment can move it to a shared engine):

* legacy connections: after the handshake a server may send list_changed notifications
  on the connection, and ``notifications/resources/updated`` for the URIs the client
  subscribed to with ``resources/subscribe`` (2024-11-05 … 2025-11-25);
* 2026-07-28 ``subscriptions/listen`` streams: each carries only what its acknowledged
  filter honoured, tagged with its ``subscriptionId`` (basic/patterns/subscriptions).

"notifications/resources/updated.uri may be a sub-resource of the subscribed URI", so a
subscription to ``file:///project/`` hears about ``file:///project/a.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol

from mcpcore._connection import Connection
from mcpcore.errors import LocalProtocolError
from mcpcore.server._outbound import Outbound
from mcpcore.types import RequestId, ResourceUpdatedNotificationParams, SubscriptionFilter
from mcpcore.versions import Era

__all__ = ["MAX_RESOURCE_SUBSCRIPTIONS", "MemoryHub", "NotificationHub"]

#: resources/subscribe URIs one legacy connection may hold: each costs a set entry and
#: a comparison on every update (the Python SDK caps listen streams at 1024 too).
MAX_RESOURCE_SUBSCRIPTIONS: Final = 1024

_LIST_CHANGED: Final = {
    "tools": ("notifications/tools/list_changed", "tools_list_changed"),
    "prompts": ("notifications/prompts/list_changed", "prompts_list_changed"),
    "resources": ("notifications/resources/list_changed", "resources_list_changed"),
}


class NotificationHub(Protocol):
    """Where the server records listeners, and how it reaches them."""

    def attach(self, connection: Connection, outbound: Outbound) -> None:
        """A legacy-capable connection: notifications for it go to ``outbound``."""

    def detach(self, connection: Connection) -> None:
        """The connection is gone: forget everything about it."""

    def subscribe(self, connection: Connection, uri: str) -> bool:
        """Legacy resources/subscribe; False when the connection holds too many."""

    def unsubscribe(self, connection: Connection, uri: str) -> None:
        """Legacy resources/unsubscribe."""

    def add_stream(
        self,
        connection: Connection,
        request_id: RequestId,
        outbound: Outbound,
        honoured: SubscriptionFilter,
    ) -> None:
        """A 2026-07-28 listen stream, acknowledged with ``honoured``."""

    def remove_stream(self, connection: Connection, request_id: RequestId) -> bool:
        """The stream ended (cancelled or closed); whether it existed."""

    async def list_changed(self, kind: str) -> None:
        """Tell every interested listener that the ``kind`` list changed."""

    async def resource_updated(self, uri: str) -> None:
        """Tell every subscriber of ``uri`` (or of a URI it lies under) that it changed."""

    async def close_streams(self) -> None:
        """End every listen stream gracefully (server shutdown)."""


@dataclass(slots=True)
class _Listener:
    outbound: Outbound
    uris: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Stream:
    connection: Connection
    request_id: RequestId
    outbound: Outbound
    honoured: SubscriptionFilter


class MemoryHub:
    """The in-process `NotificationHub`."""

    __slots__ = ("_listeners", "_streams")

    def __init__(self) -> None:
        self._listeners: dict[Connection, _Listener] = {}
        self._streams: dict[tuple[Connection, RequestId], _Stream] = {}

    def attach(self, connection: Connection, outbound: Outbound) -> None:
        """See `NotificationHub.attach`."""
        self._listeners[connection] = _Listener(outbound)

    def detach(self, connection: Connection) -> None:
        """See `NotificationHub.detach`."""
        self._listeners.pop(connection, None)
        for key in [key for key in self._streams if key[0] is connection]:
            del self._streams[key]

    def subscribe(self, connection: Connection, uri: str) -> bool:
        """See `NotificationHub.subscribe`."""
        listener = self._listeners.get(connection)
        if listener is None:
            return True  # nowhere to deliver: nothing to remember
        if uri not in listener.uris and len(listener.uris) >= MAX_RESOURCE_SUBSCRIPTIONS:
            return False
        listener.uris.add(uri)
        return True

    def unsubscribe(self, connection: Connection, uri: str) -> None:
        """See `NotificationHub.unsubscribe`."""
        listener = self._listeners.get(connection)
        if listener is not None:
            listener.uris.discard(uri)

    def add_stream(
        self,
        connection: Connection,
        request_id: RequestId,
        outbound: Outbound,
        honoured: SubscriptionFilter,
    ) -> None:
        """See `NotificationHub.add_stream`."""
        self._streams[connection, request_id] = _Stream(connection, request_id, outbound, honoured)

    def remove_stream(self, connection: Connection, request_id: RequestId) -> bool:
        """See `NotificationHub.remove_stream`."""
        return self._streams.pop((connection, request_id), None) is not None

    async def list_changed(self, kind: str) -> None:
        """See `NotificationHub.list_changed`."""
        method, flag = _LIST_CHANGED[kind]
        for connection, listener in list(self._listeners.items()):
            if connection.era is Era.LEGACY:
                await self._deliver(connection, listener.outbound, _legacy(connection, method))
        for stream in list(self._streams.values()):
            if getattr(stream.honoured, flag) is True:
                await self._deliver_on_stream(stream, method, None)

    async def resource_updated(self, uri: str) -> None:
        """See `NotificationHub.resource_updated`."""
        params = ResourceUpdatedNotificationParams(uri=uri)
        method = "notifications/resources/updated"
        for connection, listener in list(self._listeners.items()):
            if any(_covers(subscribed, uri) for subscribed in listener.uris):
                await self._deliver(
                    connection, listener.outbound, _legacy(connection, method, params)
                )
        for stream in list(self._streams.values()):
            wanted = stream.honoured.resource_subscriptions or ()
            if any(_covers(subscribed, uri) for subscribed in wanted):
                await self._deliver_on_stream(stream, method, params)

    async def close_streams(self) -> None:
        """See `NotificationHub.close_streams`."""
        streams = list(self._streams.values())
        self._streams.clear()
        for stream in streams:
            data = stream.connection.close_subscription(stream.request_id)
            if data is not None:
                await _send(stream.outbound, data)

    async def _deliver(
        self, connection: Connection, outbound: Outbound, data: bytes | None
    ) -> None:
        if data is not None and not await _send(outbound, data):
            self.detach(connection)

    async def _deliver_on_stream(
        self, stream: _Stream, method: str, params: ResourceUpdatedNotificationParams | None
    ) -> None:
        data = stream.connection.send_subscription_notification(stream.request_id, method, params)
        if data is not None and not await _send(stream.outbound, data):
            self.remove_stream(stream.connection, stream.request_id)


def _legacy(connection: Connection, method: str, params: object = None) -> bytes | None:
    """The legacy notification, or None when the session can't take it yet.

    Before ``notifications/initialized``, or without the capability advertised, the
    connection refuses to send it.
    """
    try:
        return connection.send_notification(method, params)
    except LocalProtocolError:
        return None


async def _send(outbound: Outbound, data: bytes) -> bool:
    try:
        await outbound.send(data)
    except ConnectionError:
        return False
    return True


def _covers(subscribed: str, uri: str) -> bool:
    prefix = subscribed if subscribed.endswith("/") else subscribed + "/"
    return uri == subscribed or uri.startswith(prefix)
