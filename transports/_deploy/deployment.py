"""`Deployment`: processes pointed at one Redis serve as one MCP server.

The 2026-07-28 era is stateless: any worker answers any request once all of them seal
``requestState`` and cursors with the same key. So the first worker to reach Redis
draws a random key and stores it (``SET NX``: exactly one draw wins), and every worker,
on this host or another, takes that one: processes started with the same Redis URL and
namespace form one deployment without further setup. A server given its own key
(``Server(secret=...)``) keeps it; give every worker the same.

The legacy eras (2024-11-05 … 2025-11-25) keep sessions, and each session lives in the
worker that opened it, whose name starts the session's id. A request for it that
reaches another worker is forwarded to its owner over Redis pub/sub and the answer is
relayed back (`transports._deploy.relay`); a client resumes a stream (``Last-Event-ID``)
on any worker, the owner replaying it from its event store; list changes and resource
updates reach every worker's listeners (`FanoutHub`). Why forwarding rather
than rebuilding a session on each worker from shared state: a session is more than its
handshake (requests in flight and their cancellation, the client's answers to the
server's requests, its subscriptions and log level), and the one process that holds its
`mcpcore.Connection` applies every protocol rule exactly once. The price: a session
ends with its worker (its clients get 404 and start a new one, as the spec has them do),
and a request that lands elsewhere costs a hop through Redis. The events of a session's
streams stay with it, in the owner's event store (the bounded in-memory one by
default): kept in Redis they would cost two round trips per call (measured: a third of
the throughput) and serve nobody, since only the owner can resume its session.

Tasks (2026-07-28 tasks extension, 2025-11-25 core tasks) are not sessions: any worker
answers ``tasks/get``, ``tasks/update``, ``tasks/cancel`` and ``tasks/result`` about any
task. Their records live in Redis (`transports._deploy.task_store`, unless the server
was given a store of its own) and each runs on one worker, which any other reaches to
cancel it or waits on to end (`transports._deploy.task_runner`). A worker that stops
fails the tasks it was running; one that crashes leaves them as they were until their
TTL (a ``tasks/result`` waiting on one gives up).

Redis unreachable: at start, `Deployment.open` fails with `transports.RedisUnavailableError`;
later, legacy requests get 503 until it answers again, and the 2026-07-28 era, which
needs nothing but the key it already has, goes on (its tasks excepted: a call that
would start one, and the tasks/* requests, get an internal error).
"""

from __future__ import annotations

import contextlib
import functools
import re
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from mcpcore.server import Server, TaskRecord, TaskRunner
from transports._asgi.connections import ConnectionPool
from transports._asgi.watching import Watcher
from transports._deploy.hub import FanoutHub
from transports._deploy.messages import TaskSaved
from transports._deploy.orphans import ORPHAN_GRACE, Orphans
from transports._deploy.relay import WORKER_NAME_BYTES
from transports._deploy.shared import Names, RedisSessions
from transports._deploy.task_runner import SharedTaskRunner
from transports._deploy.task_store import MAX_SHARED_TASKS, RedisTaskStore
from transports._net.limits import HttpLimits
from transports._redis import (
    RedisAddress,
    RedisClient,
    RedisUnavailableError,
    open_redis,
    open_subscriber,
    parse_redis_url,
)
from transports._runtime import primitives
from transports._runtime.serving import SECRET_SIZE
from transports._runtime.tasks import GroupTaskRunner, new_task_id

__all__ = ["DEFAULT_NAMESPACE", "STOP_TIMEOUT", "Deployment"]

#: The prefix of every Redis key and channel of a deployment unless told otherwise.
DEFAULT_NAMESPACE: Final = "mcpcore"
#: Seconds a stopping worker spends failing the tasks it runs, at most: a restart must
#: not hang on a Redis that doesn't answer (the tasks then stay ``working`` until their
#: TTL, as a crashed worker's do).
STOP_TIMEOUT: Final = 5.0
#: What a namespace may hold: it becomes part of key and channel names.
_NAMESPACE: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


class Deployment:
    """Several workers, on one host or many, serving as one through one Redis.

    Give it to `transports.serve_http` or `transports.AsgiApp` (``deployment=``) in
    every worker; see the module docstring for what is shared and how.

    Args:
        redis: The Redis URL: ``redis://[[user]:password@]host[:port][/db]``,
            ``rediss://`` (TLS) or ``unix:///path``.
        namespace: Prefix of the deployment's keys and channels (several deployments
            may share one Redis under different namespaces).
        max_tasks: Tasks the deployment keeps in Redis at once, all workers together
            (see `transports.MAX_SHARED_TASKS`).
        orphan_grace: Seconds the worker running a task must stay gone (crashed: no
            longer listening on its channel) before a read of the task fails it (see
            `transports.ORPHAN_GRACE`).

    Raises:
        ValueError: The URL or the namespace is malformed, ``max_tasks`` is below 1, or
            ``orphan_grace`` is not positive.
    """

    def __init__(
        self,
        redis: str,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        max_tasks: int = MAX_SHARED_TASKS,
        orphan_grace: float = ORPHAN_GRACE,
    ) -> None:
        if _NAMESPACE.fullmatch(namespace) is None:
            raise ValueError("a namespace is 1 to 64 letters, digits or the characters _ . : -")
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        if not orphan_grace > 0:
            raise ValueError("orphan_grace must be a positive number of seconds")
        self.address: RedisAddress = parse_redis_url(redis)
        self.namespace = namespace
        self.max_tasks = max_tasks
        self.orphan_grace = orphan_grace

    def __repr__(self) -> str:
        return f"Deployment({self.address!r}, namespace={self.namespace!r})"

    @asynccontextmanager
    async def open(self, server: Server, limits: HttpLimits) -> AsyncIterator[RedisSessions]:
        """Join the deployment for the duration of the block (serving its shared sessions).

        Gives ``server`` the deployment's key (unless it has one), a hub whose news
        reaches every worker, and its tasks: the shared store (unless it has a store of
        its own) and a runner whose runs any worker cancels and awaits.

        Raises:
            RedisUnavailableError: Redis can't be reached.
        """
        names = Names(self.namespace)
        worker = secrets.token_hex(WORKER_NAME_BYTES)
        async with open_redis(self.address) as client:
            store = None
            if server.tasks.store is None:  # (first: configure would make one in memory)
                store = RedisTaskStore(
                    client, self.namespace, worker, time.time, max_tasks=self.max_tasks
                )
                server.tasks.store = store
            sessions: RedisSessions | None = None
            try:
                server.configure(secret=await _shared_key(client, names), clock=time.time)
                async with self._join(
                    server, limits, client=client, names=names, worker=worker, store=store
                ) as sessions:
                    yield sessions
            finally:
                if store is not None and server.tasks.store is store:
                    server.tasks.store = None  # (served again alone, it keeps tasks in memory)
                if sessions is not None and sessions.tasks is not None and store is not None:
                    await _fail_interrupted(self.address, sessions.tasks, store)

    @asynccontextmanager
    async def _join(
        self,
        server: Server,
        limits: HttpLimits,
        *,
        client: RedisClient,
        names: Names,
        worker: str,
        store: RedisTaskStore | None,
    ) -> AsyncIterator[RedisSessions]:
        """Listen on the worker's channels, and serve the shared sessions and tasks."""
        channels = [names.worker_channel(worker), names.hub_channel]
        sessions: RedisSessions | None = None

        def resubscribed() -> None:
            if sessions is not None:
                sessions.resubscribed()

        async with (
            open_subscriber(self.address, channels, on_reconnect=resubscribed) as subscriber,
            primitives.open_task_group() as group,
        ):
            watcher = Watcher(group, limits)
            group.start_soon(watcher.run)
            sessions = RedisSessions(
                client=client,
                subscriber=subscriber,
                names=names,
                worker=worker,
                group=group,
                watcher=watcher,
                connections=ConnectionPool(server),
            )
            hub = sessions.hub = FanoutHub(server.hub, sessions.publish_news)
            server.hub = hub
            # Tasks run in this group: they outlive the requests that create them. A
            # store of the server's own (not shared, as far as we know) keeps its runs
            # local: a wait elsewhere could not read their ends.
            runner: TaskRunner = GroupTaskRunner(group)
            if store is not None:
                runner = sessions.tasks = SharedTaskRunner(
                    group, store, broadcast=sessions.broadcast, alive=sessions.alive
                )
                store.orphans = Orphans(
                    sessions.alive,
                    primitives.current_time,
                    grace=self.orphan_grace,
                    failed=functools.partial(_announce_orphan, sessions),
                )
            server.configure(task_runner=runner, new_task_id=new_task_id)
            if store is not None:
                # A task's news (notifications/tasks) reaches every worker's listen
                # streams: each save is announced, the others read the task if a
                # stream of theirs follows it.
                sessions.task_news = server.tasks
                server.tasks.on_saved = functools.partial(_announce_saved, sessions)
            group.start_soon(sessions.listen, subscriber)
            try:
                yield sessions
            finally:
                server.hub = hub.local
                server.tasks.on_saved = None
                if store is not None:
                    store.orphans = None
                group.cancel_scope.cancel()


async def _announce_saved(sessions: RedisSessions, record: TaskRecord) -> None:
    """Tell the other workers a task's state was saved (lost when Redis is down)."""
    await sessions.broadcast(TaskSaved(record.task_id, sessions.worker))


async def _announce_orphan(sessions: RedisSessions, task_id: str, worker: str) -> None:
    """A read failed a task whose worker is gone: every worker's streams hear it.

    Announced as the gone worker's save, so that this worker's streams hear it too
    (a worker skips the news of its own saves, which it announced already).
    """
    await sessions.broadcast(TaskSaved(task_id, worker))


async def _fail_interrupted(
    address: RedisAddress, runner: SharedTaskRunner, store: RedisTaskStore
) -> None:
    """The worker stopped: fail the tasks whose runs it cut, within `STOP_TIMEOUT`.

    Over a connection of its own, shielded: the worker's command connection may have
    been cancelled with it.
    """
    if not runner.interrupted:
        return
    deadline = primitives.current_time() + STOP_TIMEOUT
    with (
        primitives.CancelScope(shield=True, deadline=deadline),
        contextlib.suppress(RedisUnavailableError),
    ):
        async with open_redis(address) as client:
            await runner.fail_interrupted(store.using(client))


async def _shared_key(client: RedisClient, names: Names) -> bytes:
    """The deployment's sealing key: the first worker's draw, taken by every other."""
    _, key = await client.pipeline(
        [("SET", names.key, secrets.token_bytes(SECRET_SIZE), "NX"), ("GET", names.key)]
    )
    if not isinstance(key, bytes) or len(key) < SECRET_SIZE:
        # (Someone else's value under our name: never seal with a weak key.)
        raise RuntimeError(f"the Redis key {names.key} does not hold a deployment key")
    return key
