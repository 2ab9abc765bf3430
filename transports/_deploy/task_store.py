"""`RedisTaskStore`: the tasks of a deployment, readable and writable from every worker.

A task (2026-07-28 tasks extension, 2025-11-25 core tasks) is created on the worker
that received its ``tools/call``; its ``tasks/get``, ``tasks/update``, ``tasks/cancel``
and ``tasks/result`` may reach any worker (the modern era is stateless, and a 2025-11-25
task is bound to its principal, not to its session). So its record lives in Redis, under
the deployment's namespace:

* ``<ns>:task:<id>``: a hash with the record (``record``: the whole `TaskRecord`,
  msgpack), its ``status`` apart (so a script reads it without decoding the record), the
  key of its owner's index (``owner``) and the worker that runs it last (``worker``). It
  expires `EXPIRY_MARGIN` after the task's TTL ("receivers MAY delete a task after its
  TTL", 2025-11-25 tasks); a reader judges expiry by its own clock, as `MemoryTaskStore`
  does, so the margin only absorbs clocks that differ a little.
* ``<ns>:tasks:live``: every live task, scored by its expiry (ms): counted for the cap.
* ``<ns>:tasks:done``: the finished ones, scored the same: dropped first when full.
* ``<ns>:tasks:by:<principal>`` (``<ns>:tasks:anonymous`` without one): a principal's
  tasks for ``tasks/list``, scored the same, expiring with its last task.

Every write is one Lua script, so it is atomic among workers. Above all ``save``: a
record whose stored status is terminal keeps it ("Terminal states are final", 2025-11-25
basic/utilities/tasks) — a ``tasks/cancel`` on one worker racing the run finishing on
another leaves the task cancelled, whichever writes second. (``WATCH`` would do it too,
but `transports._redis.RedisClient` refuses it on its shared connection.) The create
script also drops a task it was not named (the one making room), so the store needs one
Redis, not a Redis Cluster, as the rest of the deployment does.

When Redis can't be reached, creating a task fails the call with -32603 (`UNREACHABLE`),
and the other methods raise `transports.RedisUnavailableError`: the ``tasks/*`` request
is answered with an internal error, as any handler's failure is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from mcpcore import jsonrpc
from mcpcore.errors import McpError
from mcpcore.server import MAX_TASKS, TaskRecord
from mcpcore.types import TERMINAL_TASK_STATUSES
from transports._deploy.orphans import STOPPED, Orphans
from transports._redis import Arg, RedisClient, RedisReplyError, RedisUnavailableError

__all__ = [
    "EXPIRY_MARGIN",
    "LIST_BATCH",
    "MAX_SHARED_TASKS",
    "TERMINAL_STATUSES",
    "UNREACHABLE",
    "RedisTaskStore",
    "TaskKeys",
]

#: Tasks a deployment keeps in Redis at once, all workers together. Each holds its
#: arguments and its inlined result, in Redis's memory, which every worker shares: eight
#: workers' worth of `mcpcore.server.MAX_TASKS`. Past it, finished tasks are dropped
#: (the one expiring soonest first), and while every task still runs a new one is
#: refused (-32603), so that no client can exhaust Redis's memory (one can still take
#: every place, as with `mcpcore.server.MemoryTaskStore`: there is no quota per user).
MAX_SHARED_TASKS: Final = 8 * MAX_TASKS
#: Seconds a task's key outlives its TTL in Redis. Readers decide expiry by their own
#: clock; this keeps a record from vanishing early on a worker whose clock lags Redis's.
EXPIRY_MARGIN: Final = 60.0
#: Records read per round trip when listing a principal's tasks (``tasks/list``): keeps
#: each reply small while a long list still costs few round trips.
LIST_BATCH: Final = 100

#: The message of the -32603 answering a call whose task could not be created.
UNREACHABLE: Final = "The task store is unreachable"

_ENCODER: Final = msgspec.msgpack.Encoder()
_DECODER: Final = msgspec.msgpack.Decoder(TaskRecord)
#: The statuses a task never leaves ("Terminal states are final", 2025-11-25 tasks), as
#: the save script tests them (`TaskRecord.terminal` in Python).
TERMINAL_STATUSES: Final = tuple(sorted(TERMINAL_TASK_STATUSES))
_TERMINAL_LUA: Final = "{" + ", ".join(f"['{s}'] = true" for s in TERMINAL_STATUSES) + "}"

# KEYS: task, live, done, owner. ARGV: id, status, record, expiry score, now (ms), cap,
# worker, expire-at (ms, "" for never), task key prefix. 1: created; 0: full.
_CREATE: Final = """
local now = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then
  local oldest = redis.call('ZPOPMIN', KEYS[3])
  if #oldest == 0 then return 0 end
  local victim = ARGV[9] .. oldest[1]
  local owner = redis.call('HGET', victim, 'owner')
  redis.call('DEL', victim)
  redis.call('ZREM', KEYS[2], oldest[1])
  if owner then redis.call('ZREM', owner, oldest[1]) end
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'record', ARGV[3], 'owner', KEYS[4],
           'worker', ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
if ARGV[8] == '' then
  redis.call('PERSIST', KEYS[4])
else
  redis.call('PEXPIREAT', KEYS[1], ARGV[8])
  local left = redis.call('PTTL', KEYS[4])
  if (left == -1 and redis.call('ZCARD', KEYS[4]) == 1)
      or (left >= 0 and now + left < tonumber(ARGV[8])) then
    redis.call('PEXPIREAT', KEYS[4], ARGV[8])
  end
end
return 1
"""
# KEYS: task, done. ARGV: status, record, id, expiry score, expected revision ("" for
# any). Answers {outcome, detail}: {"saved", the new revision}; {"gone"}; {"moved"}
# (the revision moved on: nothing saved); {"kept", the stored record} (terminal, kept).
# The hash's ``revision`` is the record's (the encoded one may lag a forced save).
_SAVE: Final = f"""
local terminal = {_TERMINAL_LUA}
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {{'gone'}} end
local revision = redis.call('HGET', KEYS[1], 'revision') or '0'
if ARGV[5] ~= '' and revision ~= ARGV[5] then return {{'moved'}} end
if terminal[current] and current ~= ARGV[1] then
  return {{'kept', redis.call('HGET', KEYS[1], 'record'), revision}}
end
revision = tostring(tonumber(revision) + 1)
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'record', ARGV[2], 'revision', revision)
if terminal[ARGV[1]] then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3]) end
return {{'saved', revision}}
"""
# KEYS: task. ARGV: worker. Marks who runs the task now, if it still exists.
_CLAIM: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'worker', ARGV[1])
return 1
"""


class _Script:
    """A Lua script run with ``EVALSHA``, sent whole (``EVAL``) when Redis lacks it."""

    __slots__ = ("sha", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()

    async def run(self, client: RedisClient, keys: Sequence[Arg], args: Sequence[Arg]) -> Any:
        try:
            return await client.execute("EVALSHA", self.sha, len(keys), *keys, *args)
        except RedisReplyError as error:
            if error.code != "NOSCRIPT":
                raise
        # (The first call since Redis started, or since SCRIPT FLUSH: EVAL caches it.)
        return await client.execute("EVAL", self.source, len(keys), *keys, *args)


_CREATE_SCRIPT: Final = _Script(_CREATE)
_SAVE_SCRIPT: Final = _Script(_SAVE)
_CLAIM_SCRIPT: Final = _Script(_CLAIM)


class TaskKeys:
    """The Redis keys of a deployment's tasks (see the module docstring)."""

    __slots__ = ("done", "live", "namespace", "task_prefix")

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.task_prefix = f"{namespace}:task:"
        self.live = f"{namespace}:tasks:live"
        self.done = f"{namespace}:tasks:done"

    def task(self, task_id: str) -> str:
        """The hash of task ``task_id``."""
        return self.task_prefix + task_id

    def owned_by(self, principal: str | None) -> str:
        """The index of ``principal``'s tasks."""
        if principal is None:
            return f"{self.namespace}:tasks:anonymous"
        return f"{self.namespace}:tasks:by:{principal}"


class RedisTaskStore:
    """A `mcpcore.server.TaskStore` in Redis, shared by a deployment's workers.

    See the module docstring for the keys and the rules.

    Args:
        client: The worker's command connection.
        namespace: The deployment's namespace.
        worker: This worker's name (recorded as the runner of the tasks it creates).
        clock: The server's clock (seconds since the epoch, as every worker's).
        max_tasks: See `MAX_SHARED_TASKS`.

    Attributes:
        orphans: When set, a read of a working task whose worker is gone for good fails
            it (`transports._deploy.orphans`).
    """

    __slots__ = ("_client", "_max_tasks", "clock", "keys", "orphans", "worker")

    def __init__(
        self,
        client: RedisClient,
        namespace: str,
        worker: str,
        clock: Callable[[], float],
        *,
        max_tasks: int = MAX_SHARED_TASKS,
    ) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self._client = client
        self.clock = clock
        self._max_tasks = max_tasks
        self.keys = TaskKeys(namespace)
        self.worker = worker
        self.orphans: Orphans | None = None

    def using(self, client: RedisClient) -> RedisTaskStore:
        """The same store over another connection."""
        return RedisTaskStore(
            client, self.keys.namespace, self.worker, self.clock, max_tasks=self._max_tasks
        )

    async def create(self, record: TaskRecord) -> bool:
        """Keep a new task; when full, drop the finished one expiring first, or refuse."""
        expires = _expires_at(record)
        try:
            created = await self._create(record, expires)
        except RedisUnavailableError as exc:
            # "MUST NOT be returned until the task is durably created" (SEP-2663): the
            # call fails as a request, not as the tool (which never ran).
            raise McpError(jsonrpc.INTERNAL_ERROR, UNREACHABLE) from exc
        return bool(created)

    async def _create(self, record: TaskRecord, expires: float | None) -> Any:
        keys = self.keys
        return await _CREATE_SCRIPT.run(
            self._client,
            (keys.task(record.task_id), keys.live, keys.done, keys.owned_by(record.principal)),
            (
                record.task_id,
                record.status,
                _ENCODER.encode(record),
                _score(expires),
                _ms(self.clock()),
                self._max_tasks,
                self.worker,
                "" if expires is None else _ms(expires + EXPIRY_MARGIN),
                keys.task_prefix,
            ),
        )

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task ``task_id``; None when unknown or past its TTL (by this worker's clock).

        A working task whose worker is gone for good (`orphans`) is failed first.
        """
        record, worker = await self._read(task_id)
        if record is None:
            return None
        gone = await self._gone_worker(record, worker, {})
        return record if gone is None else await self._fail_orphan(record, gone)

    async def _gone_worker(
        self, record: TaskRecord, worker: str | None, verdicts: dict[str, bool]
    ) -> str | None:
        """The worker running ``record``, when it is working there and it is gone for good.

        Each worker is asked about once per ``verdicts``: a listing of one dead
        worker's tasks costs one round trip.
        """
        orphans = self.orphans
        if orphans is None or record.status != "working" or worker is None:
            return None
        if worker == self.worker:
            return None  # (its own tasks: it is alive)
        verdict = verdicts.get(worker)
        if verdict is None:
            verdict = verdicts[worker] = await orphans.abandoned(worker)
        return worker if verdict else None

    async def _fail_orphan(self, record: TaskRecord, worker: str) -> TaskRecord | None:
        """Save an orphaned task as failed (`STOPPED`) and announce it; as it is then."""
        if not await self.save_stopped(record, expected=record.revision):
            return (await self._read(record.task_id))[0]  # (it moved on meanwhile)
        assert self.orphans is not None
        if self.orphans.failed is not None:
            await self.orphans.failed(record.task_id, worker)
        return record

    async def save_stopped(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        """Save ``record`` as failed with `STOPPED`: its worker stopped while it ran (`save`)."""
        record.status = "failed"
        record.error = STOPPED
        record.last_updated_at = self.clock()
        return await self.save(record, expected=expected)

    async def _read(self, task_id: str) -> tuple[TaskRecord | None, str | None]:
        """The live record of ``task_id`` (None: none) and the worker that runs it last."""
        reply = await self._client.execute(
            "HMGET", self.keys.task(task_id), "record", "revision", "worker"
        )
        return self._record_of(reply)

    def _record_of(self, reply: Any) -> tuple[TaskRecord | None, str | None]:
        """`_read`'s answer from a task hash's ``HMGET record revision worker``."""
        data, revision, worker = reply
        record = self._live(data)
        if record is not None and revision is not None:
            record.revision = int(revision)  # (the hash's is the latest: see _SAVE)
        return record, worker.decode() if isinstance(worker, bytes) else None

    async def save(self, record: TaskRecord, *, expected: int | None = None) -> bool:
        """Keep a task's new state, unless it was dropped or has ended otherwise meanwhile.

        A terminal status is final: a record stored as cancelled stays cancelled when a
        run that finished on another worker saves it as completed, and the other way
        round (2025-11-25 tasks: "Terminal states are final"). Then ``record`` takes
        the state kept, so that its caller goes on with (and announces) what is true.
        With ``expected``, saved only over that revision (compare-and-set, in the same
        script): False, nothing saved and ``record`` as it was, when another save came
        first.
        """
        outcome = await _SAVE_SCRIPT.run(
            self._client,
            (self.keys.task(record.task_id), self.keys.done),
            (
                record.status,
                _ENCODER.encode(record),
                record.task_id,
                _score(_expires_at(record)),
                "" if expected is None else expected,
            ),
        )
        verdict = outcome[0]
        if verdict == b"moved":
            return False
        if verdict == b"saved":
            record.revision = int(outcome[1])
        elif verdict == b"kept":
            stored = _DECODER.decode(outcome[1])
            stored.revision = int(outcome[2])
            for name in record.__struct_fields__:
                setattr(record, name, getattr(stored, name))
        return True

    async def owned_by(self, principal: str | None) -> list[TaskRecord]:
        """The live tasks of ``principal``, oldest first (2025-11-25 ``tasks/list``).

        Working tasks whose worker is gone for good are failed first, as `get` fails them.
        """
        index = self.keys.owned_by(principal)
        _, ids = await self._client.pipeline(
            [("ZREMRANGEBYSCORE", index, "-inf", _ms(self.clock())), ("ZRANGE", index, 0, -1)]
        )
        records: list[TaskRecord] = []
        gone: list[bytes] = []
        verdicts: dict[str, bool] = {}
        for start in range(0, len(ids), LIST_BATCH):
            batch = ids[start : start + LIST_BATCH]
            replies = await self._client.pipeline(
                [
                    ("HMGET", self.keys.task(task_id.decode()), "record", "revision", "worker")
                    for task_id in batch
                ]
            )
            for task_id, reply in zip(batch, replies, strict=True):
                record, worker = self._record_of(reply)
                if record is not None:
                    dead = await self._gone_worker(record, worker, verdicts)
                    if dead is not None:
                        record = await self._fail_orphan(record, dead)
                if record is None:
                    gone.append(task_id)
                else:
                    records.append(record)
        if gone:  # (dropped for room, or expired by our clock before Redis's)
            await self._client.execute("ZREM", index, *gone)
        records.sort(key=lambda record: record.created_at)
        return records

    async def claim(self, task_id: str) -> None:
        """Record this worker as the one running ``task_id`` now (a run after input)."""
        await _CLAIM_SCRIPT.run(self._client, (self.keys.task(task_id),), (self.worker,))

    async def state_of(self, task_id: str) -> tuple[str, str | None] | None:
        """The status of ``task_id`` and the worker that runs it last; None if unknown."""
        status, worker = await self._client.execute(
            "HMGET", self.keys.task(task_id), "status", "worker"
        )
        if not isinstance(status, bytes):
            return None
        return status.decode(), worker.decode() if isinstance(worker, bytes) else None

    def _live(self, data: object) -> TaskRecord | None:
        if not isinstance(data, bytes):
            return None
        record = _DECODER.decode(data)
        expires = _expires_at(record)
        if expires is not None and self.clock() > expires:
            return None
        return record


def _expires_at(record: TaskRecord) -> float | None:
    """When ``record`` expires, in the server clock's seconds (None: never)."""
    ttl = record.ttl_ms
    return None if ttl is None else record.created_at + ttl / 1000


def _score(expires: float | None) -> str | int:
    """An expiry as a sorted-set score (milliseconds; never: ``+inf``)."""
    return "+inf" if expires is None else _ms(expires)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)
