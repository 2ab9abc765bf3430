"""`RedisSessions`: one worker's part of a deployment that shares its sessions in Redis.

It is the router's `transports._http.server.sharing.SharedSessions`: the worker's name
(the owner prefix of the session ids it mints), forwarding (`transports._deploy.relay`),
and whether Redis answers. Every worker
listens on one pub/sub connection to two channels: its own (requests forwarded to it,
and the answers to those it forwarded) and the deployment's hub channel (news for
`FanoutHub`, cancelled tasks for `SharedTaskRunner`). It talks over one pipelined
command connection.

A worker's liveness is its subscription: ``PUBLISH`` to its channel reaches one
listener while it lives, none once it is gone, so no heartbeat or registry is kept.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any, Final, Protocol

import msgspec

from transports._asgi.connections import ConnectionPool
from transports._asgi.watching import Watcher
from transports._deploy.hub import FanoutHub
from transports._deploy.messages import (
    DECODER,
    ENCODER,
    CancelTask,
    Changed,
    Forwarded,
    Hangup,
    Message,
    Piece,
    TaskSaved,
    Updated,
    Whole,
)
from transports._deploy.relay import Answering, Relayer
from transports._deploy.task_runner import SharedTaskRunner
from transports._http.server.sharing import Dispatcher, SharedStoreError
from transports._net.reply import Reply, ResponseWriter
from transports._net.request import HttpRequest
from transports._redis import RedisClient, RedisUnavailableError, Subscriber
from transports._runtime import primitives
from transports._runtime.primitives import AnyTaskGroup

__all__ = ["LIST_KINDS", "RECHECK_INTERVAL", "Names", "RedisSessions", "TaskNews"]

#: The lists whose changes a server announces (``notifications/<kind>/list_changed``).
LIST_KINDS: Final = ("tools", "prompts", "resources")
#: Seconds between two checks that an unreachable Redis is back (at most one ``PING``
#: per interval, however many legacy requests are refused meanwhile).
RECHECK_INTERVAL: Final = 1.0

Command = Sequence[bytes | str | int]


class Names:
    """The Redis keys and channels of one deployment (all under its namespace)."""

    __slots__ = ("hub_channel", "key", "namespace")

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.key = f"{namespace}:key"  # the sealing key
        self.hub_channel = f"{namespace}:hub".encode()

    def worker_channel(self, worker: str) -> bytes:
        """Where a worker hears what is sent to it."""
        return f"{self.namespace}:worker:{worker}".encode()


class TaskNews(Protocol):
    """A server's tasks (`mcpcore.server.Server.tasks`), as told of other workers' saves."""

    def follows(self, task_id: str) -> bool:
        """Whether a listen stream here follows ``task_id``."""
        ...

    async def announce(self, task_id: str) -> None:
        """Tell the streams here following ``task_id`` its state, as the store has it."""
        ...


class RedisSessions:
    """One worker's shared legacy sessions (see the module docstring).

    Args:
        client: The command connection.
        subscriber: The worker's subscription (its channel and the hub's).
        names: The deployment's keys and channels.
        worker: This worker's name.
        group: Where forwarded requests run.
        watcher: Their watcher (running in ``group``).
        connections: Their writers' `mcpcore.Connection` pool.
    """

    def __init__(
        self,
        *,
        client: RedisClient,
        subscriber: Subscriber,
        names: Names,
        worker: str,
        group: AnyTaskGroup,
        watcher: Watcher,
        connections: ConnectionPool,
    ) -> None:
        self.worker = worker
        self.hub: FanoutHub | None = None
        self.tasks: SharedTaskRunner | None = None
        #: The server's tasks, told of task states other workers saved (their
        #: ``notifications/tasks`` for the listen streams here).
        self.task_news: TaskNews | None = None
        self._answered = True  # (the last command got its reply)
        self._client = client
        self._subscriber = subscriber
        self._names = names
        self._last_check = -math.inf
        self._relayer = Relayer(worker, self.send, self.alive)
        self._answering = Answering(self.send, group, watcher, connections)
        self._group = group

    # ------------------------------------------------------------ SharedSessions

    def serve(self, dispatcher: Dispatcher) -> None:
        """Answer forwarded requests with ``dispatcher`` (the router)."""
        self._answering.dispatcher = dispatcher

    @property
    def available(self) -> bool:
        """Whether Redis is reachable: the last command was answered, the subscription holds.

        A subscription lost (Redis stopped, the network cut) is seen at once, before any
        command fails; it is made again on its own.
        """
        return self._answered and self._subscriber.available

    async def check(self) -> bool:
        """Whether Redis answers (a ``PING`` at most every `RECHECK_INTERVAL`)."""
        now = primitives.current_time()
        if self._subscriber.available and now - self._last_check >= RECHECK_INTERVAL:
            self._last_check = now
            with contextlib.suppress(ConnectionError):
                await self.pipeline([("PING",)])
        return self.available

    async def forward(
        self,
        owner: str,
        request: HttpRequest,
        reply: Reply,
        http: ResponseWriter,
        principal: str | None,
    ) -> None:
        """Have ``owner`` answer ``request`` (`transports._deploy.relay.Relayer.forward`)."""
        await self._relayer.forward(owner, request, reply, http, principal)

    # ------------------------------------------------------------ talking to Redis

    async def pipeline(self, commands: Sequence[Command]) -> list[Any]:
        """Run commands in one round trip; `SharedStoreError` when Redis is unreachable."""
        try:
            replies = await self._client.pipeline(commands)
        except RedisUnavailableError as exc:
            self._answered = False
            raise SharedStoreError(str(exc)) from None
        self._answered = True
        return replies

    async def send(self, worker: str, message: Message) -> int:
        """Publish to a worker; how many listened (0: it is gone)."""
        channel = self._names.worker_channel(worker)
        (listening,) = await self.pipeline([("PUBLISH", channel, ENCODER.encode(message))])
        return listening if isinstance(listening, int) else 0

    async def alive(self, worker: str) -> bool:
        """Whether a worker still listens (True when Redis can't tell: wait on)."""
        channel = self._names.worker_channel(worker)
        try:
            (counts,) = await self.pipeline([("PUBSUB", "NUMSUB", channel)])
        except ConnectionError:
            return True
        return isinstance(counts, list) and len(counts) == 2 and counts[1] > 0

    async def publish_news(self, news: Changed | Updated) -> bool:
        """Publish news for every worker's hub; False when Redis is unreachable."""
        return await self.broadcast(news)

    async def broadcast(self, message: Message) -> bool:
        """Publish on the hub channel, to every worker; False when Redis is unreachable."""
        try:
            await self.pipeline([("PUBLISH", self._names.hub_channel, ENCODER.encode(message))])
        except ConnectionError:
            return False
        return True

    # ------------------------------------------------------------ listening

    async def listen(self, subscriber: Subscriber) -> None:
        """Act on what arrives on this worker's channel and the hub's, until cancelled."""
        async for _, data in subscriber:
            try:
                message = DECODER.decode(data)
            except msgspec.DecodeError:
                continue  # (only this deployment's workers publish there)
            await self._take(message)

    async def _take(self, message: Message) -> None:
        if isinstance(message, Whole | Piece):
            self._relayer.deliver(message)
        elif isinstance(message, Forwarded):
            self._answering.take(message)
        elif isinstance(message, Hangup):
            self._answering.hang_up(message)
        elif isinstance(message, CancelTask):
            if self.tasks is not None:
                self.tasks.cancel_here(message.task_id)
        elif isinstance(message, TaskSaved):
            self._task_saved(message)
        elif self.hub is not None:
            await self.hub.deliver(message)

    def _task_saved(self, message: TaskSaved) -> None:
        news = self.task_news
        # (our own saves were announced here already; a task no stream here follows
        # costs nothing, not even a read)
        if news is None or message.worker == self.worker or not news.follows(message.task_id):
            return
        self._group.start_soon(news.announce, message.task_id)

    def resubscribed(self) -> None:
        """The subscription was cut and made again: what was in flight may be lost.

        Relays in flight are cut (their clients resume), this worker's listeners
        are told that every list changed: news published meanwhile never arrives, and
        a list_changed too many only makes a client list again; and its task runs are
        checked against the store, for a cancel that never arrived.
        """
        self._relayer.cut_all()
        self._answering.hang_up_all()
        if self.tasks is not None:
            self._group.start_soon(self.tasks.recheck)
        hub = self.hub
        if hub is not None:
            for kind in LIST_KINDS:
                self._group.start_soon(hub.deliver, Changed(kind))
