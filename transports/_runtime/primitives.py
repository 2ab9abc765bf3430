"""The async primitives of the shared parts, from whichever library is running them.

The Streamable HTTP endpoints, the workers and the request log serve two drivers: trio's
(``serve_http``, ``serve_websocket``, ``serve_stdio``) and the ASGI app, which runs under
asyncio (uvicorn, hypercorn, granian) and under trio (hypercorn's trio worker). They ask
this module for events, cancel scopes, channels and the clock, and get trio's own under
trio and anyio's elsewhere.

Why not anyio everywhere, as Starlette does: under trio, anyio wraps every primitive in
one of its own (an event costs 4.8 against 3.2 µs to make, set and wait, a cancel scope
5.0 against 3.4, and ``anyio.Event()`` alone 0.8 µs against 0.13, measured on this
project's CI machine), and a stdio ``tools/call`` costs about 20 µs of CPU in all. The
choice is made per call from what `sniffio` reads (its thread-local name, which trio
sets, and its context variable: ~60 ns), so one object may serve under either library,
and nothing here imports trio: it is used once it runs (imported by whoever runs it), so
the ASGI app under asyncio never loads it (~70 ms and ~12 MB a process when installed).

Exceptions are matched by tuples holding both libraries' classes (`WOULD_BLOCK`,
`CLOSED`, `BROKEN`, `END_OF_CHANNEL`): matching costs nothing extra, and code that
catches them need not know which library raised.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, cast

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from sniffio import current_async_library_cvar, thread_local

if TYPE_CHECKING:
    from typing import TypeAlias

    import trio

__all__ = [
    "BROKEN",
    "CLOSED",
    "END_OF_CHANNEL",
    "GONE",
    "WOULD_BLOCK",
    "AnyCancelScope",
    "AnyEvent",
    "AnyLock",
    "AnyReceiveChannel",
    "AnySemaphore",
    "AnySendChannel",
    "AnyTaskGroup",
    "CancelScope",
    "Event",
    "Interruptible",
    "Lock",
    "Semaphore",
    "cancelled_class",
    "checkpoint_function",
    "clock",
    "current_task",
    "current_time",
    "interruptible",
    "open_channel",
    "open_task_group",
    "run_sync_in_thread",
    "sleep",
]

_T = TypeVar("_T")

AnyEvent: TypeAlias = "trio.Event | anyio.Event"
AnyCancelScope: TypeAlias = "trio.CancelScope | anyio.CancelScope"
AnyLock: TypeAlias = "trio.Lock | anyio.Lock"
AnySemaphore: TypeAlias = "trio.Semaphore | anyio.Semaphore"
AnySendChannel: TypeAlias = "trio.MemorySendChannel[_T] | MemoryObjectSendStream[_T]"
AnyReceiveChannel: TypeAlias = "trio.MemoryReceiveChannel[_T] | MemoryObjectReceiveStream[_T]"
AnyTaskGroup: TypeAlias = "trio.Nursery | anyio.abc.TaskGroup"


#: The exception tuples, by name: anyio's classes, and the names of trio's. An ``except``
#: of one catches what either library raises; trio's classes join once trio is imported
#: (nothing else can raise them), so that an asyncio application never imports trio.
_EXCEPTIONS: Final[dict[str, tuple[tuple[type[Exception], ...], tuple[str, ...]]]] = {
    # A ``*_nowait`` call that would have to wait.
    "WOULD_BLOCK": ((anyio.WouldBlock,), ("WouldBlock",)),
    # A stream or channel used after this side closed it.
    "CLOSED": ((anyio.ClosedResourceError,), ("ClosedResourceError",)),
    # A stream or channel whose other side is gone.
    "BROKEN": ((anyio.BrokenResourceError,), ("BrokenResourceError",)),
    # Either: a stream or channel that can't be used any more.
    "GONE": (
        (anyio.ClosedResourceError, anyio.BrokenResourceError),
        ("ClosedResourceError", "BrokenResourceError"),
    ),
    # A channel whose senders are all closed, and empty.
    "END_OF_CHANNEL": ((anyio.EndOfStream,), ("EndOfChannel",)),
}

if TYPE_CHECKING:
    WOULD_BLOCK: tuple[type[Exception], ...]
    CLOSED: tuple[type[Exception], ...]
    BROKEN: tuple[type[Exception], ...]
    GONE: tuple[type[Exception], ...]
    END_OF_CHANNEL: tuple[type[Exception], ...]


def __getattr__(name: str) -> tuple[type[Exception], ...]:
    """`WOULD_BLOCK`, `CLOSED`, `BROKEN`, `GONE`, `END_OF_CHANNEL` (see `_EXCEPTIONS`).

    Read them as ``primitives.GONE`` where they are used, not imported by name at import
    time: before trio is imported they hold anyio's classes only.
    """
    entry = _EXCEPTIONS.get(name)
    if entry is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    classes, trio_names = entry
    loaded = sys.modules.get("trio")
    if loaded is None:
        return classes
    complete: tuple[type[Exception], ...] = (
        *classes,
        *(getattr(loaded, trio_name) for trio_name in trio_names),
    )
    globals()[name] = complete  # (final: trio stays imported; read directly from now on)
    return complete


def _on_trio() -> bool:
    # sniffio's own first two steps (the name trio sets for its thread, then the context
    # variable trio-asyncio sets), both documented for libraries to set: its last step,
    # telling asyncio, costs 0.4 µs a call, and anything not trio is anyio's here.
    name = thread_local.name
    if name is None:
        name = current_async_library_cvar.get()
    if name != "trio":
        return False
    if not _trio_bound:
        _bind_trio()
    return True


#: Whether this module's name ``trio`` is bound (at trio's first use: it is running, so
#: imported; an asyncio application never imports it, ~70 ms and ~12 MB saved).
_trio_bound = False


def _bind_trio() -> None:
    global trio, _trio_bound  # noqa: PLW0603 (bound once, as an import at the top would)
    import trio

    _trio_bound = True


def Event() -> AnyEvent:  # noqa: N802 (it stands for the class)
    """A new event (`trio.Event` or `anyio.Event`)."""
    return trio.Event() if _on_trio() else anyio.Event()


def CancelScope(*, deadline: float = float("inf"), shield: bool = False) -> AnyCancelScope:  # noqa: N802
    """A new cancel scope (`trio.CancelScope` or `anyio.CancelScope`)."""
    if _on_trio():
        return trio.CancelScope(deadline=deadline, shield=shield)
    return anyio.CancelScope(deadline=deadline, shield=shield)


class _StructuredTask(Protocol):
    """What `Interruptible` uses of an asyncio task (3.11+: ``cancelling``, ``uncancel``)."""

    def cancel(self) -> bool: ...
    def cancelling(self) -> int: ...
    def uncancel(self) -> int: ...


class Interruptible:
    """A block another task may end early: ``with`` it, and `cancel` from anywhere.

    Under trio a `trio.CancelScope`. Under asyncio 3.11+ the block's own task: `cancel`
    calls ``Task.cancel()``, and leaving the block takes that request back with
    ``Task.uncancel()`` and swallows its `asyncio.CancelledError` (the documented way
    for a structured block to isolate its cancellation, as `asyncio.timeout` does).
    Python 3.10 has no ``uncancel``: anyio's scope there.

    Why not anyio's scope, nor `asyncio.timeout`: entered and left once per ASGI request,
    anyio's cost ~7 µs of the ~38 µs a request took in ``python -m bench.asgi_profile``,
    and `asyncio.timeout`, an ``async with`` of four coroutines, cost the core floor of
    ``python -m bench --only asgi`` (``bench._asgi_apps.core_modern``, uvicorn under wrk,
    8 connections) 12 to 15% of its requests per second against this plain ``with``.

    Either way only the block is cancelled, at its next checkpoint, and the block
    swallows its own cancellation, as a cancel scope does; a cancellation from outside
    still reaches the caller.

    Attributes:
        cancel_called: `cancel` was called while the block ran.
    """

    __slots__ = ("_cancelling", "_open", "_requested", "_scope", "_task", "cancel_called")

    def __init__(self) -> None:
        self._scope: AnyCancelScope | None = None
        self._task: _StructuredTask | None = None
        self._cancelling = 0
        self._open = False
        self._requested = False  # (Task.cancel() was called: to take back on leaving)
        self.cancel_called = False

    def cancel(self) -> None:
        """End the block: its code is cancelled at its next checkpoint (no-op once left)."""
        if not self._open or self.cancel_called:
            return
        self.cancel_called = True
        task = self._task
        if task is None:
            assert self._scope is not None
            self._scope.cancel()
        elif current_task() is task:
            # From inside the block: a request made now could land after it, at the
            # task's next await. The loop runs the callback while the task waits, so
            # inside the block, or after it, when `_deliver` does nothing.
            asyncio.get_running_loop().call_soon(self._deliver)
        else:
            self._deliver()  # (the task waits inside the block: it wakes there)

    def _deliver(self) -> None:
        if self._open and self._task is not None:
            self._requested = True
            self._task.cancel()

    def __enter__(self) -> Interruptible:
        if _on_trio():
            self._scope = trio.CancelScope()
            self._scope.__enter__()
        else:
            task = asyncio.current_task()
            if task is not None and hasattr(task, "uncancel"):
                self._task = cast(_StructuredTask, task)
                self._cancelling = self._task.cancelling()
            else:  # (3.10)
                self._scope = anyio.CancelScope()
                self._scope.__enter__()
        self._open = True
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        self._open = False
        task = self._task
        if task is None:
            assert self._scope is not None
            return bool(self._scope.__exit__(kind, exc, tb))
        self._task = None
        if not self._requested:
            return False
        # (Our request taken back; more left than on entry: someone else's, to go on.)
        return task.uncancel() <= self._cancelling and kind is asyncio.CancelledError


class _TaskBlock(Interruptible):
    """`Interruptible` on asyncio 3.11+, the library known beforehand (`interruptible`)."""

    __slots__ = ()

    def __enter__(self) -> Interruptible:
        task = asyncio.current_task()
        if task is None:  # (not in a task: as the general class would)
            return super().__enter__()
        # (An annotation, not typing.cast: no call per request. Tasks have cancelling()
        # from 3.11, where this class is used; the stubs for 3.10 lack it.)
        structured: _StructuredTask = task  # type: ignore[assignment]
        self._task = structured
        self._cancelling = structured.cancelling()
        self._open = True
        return self


def interruptible() -> Callable[[], Interruptible]:
    """`Interruptible`, for the library running now, to open many blocks within its run.

    `Interruptible` looks for the running library on entering each block; an ASGI app
    opens one per request, and this saves it ~0.2 µs of the ~0.7 a block costs (uvloop).
    """
    if _on_trio() or not hasattr(asyncio.Task, "uncancel"):
        return Interruptible
    return _TaskBlock


def Lock() -> AnyLock:  # noqa: N802
    """A new lock."""
    return trio.Lock() if _on_trio() else anyio.Lock()


def Semaphore(value: int) -> AnySemaphore:  # noqa: N802
    """A new semaphore holding ``value`` tokens."""
    return trio.Semaphore(value) if _on_trio() else anyio.Semaphore(value)


def open_channel(
    capacity: float,
) -> tuple[AnySendChannel[_T], AnyReceiveChannel[_T]]:
    """A memory channel buffering ``capacity`` items: (send side, receive side)."""
    if _on_trio():
        return trio.open_memory_channel[_T](capacity)
    return anyio.create_memory_object_stream[_T](capacity)


def current_time() -> float:
    """The running library's clock (trio's may be a test's autojump clock)."""
    # (anyio's on asyncio is the loop's `time()`, reached through three calls more)
    return trio.current_time() if _on_trio() else asyncio.get_running_loop().time()


def clock() -> Callable[[], float]:
    """The running library's clock as a function, for code that reads it often.

    `current_time` chooses the library on each call; this chooses once, for objects
    that live in one library's run (an ASGI app's lifespan and its requests).
    """
    return trio.current_time if _on_trio() else asyncio.get_running_loop().time


async def sleep(seconds: float) -> None:
    """Sleep ``seconds``."""
    if _on_trio():
        await trio.sleep(seconds)
    else:
        await anyio.sleep(seconds)


def current_task() -> object:
    """An object that identifies the running task (compare it with ``is``)."""
    if _on_trio():
        return trio.lowlevel.current_task()
    # (anyio runs on asyncio otherwise; its own answer builds a TaskInfo each time: 0.9 µs)
    return asyncio.current_task()


def cancelled_class() -> type[BaseException]:
    """The exception the running library cancels with."""
    return anyio.get_cancelled_exc_class()


def open_task_group() -> AbstractAsyncContextManager[AnyTaskGroup]:
    """A task group: trio's own nursery under trio (anyio's would wrap it), anyio's else."""
    return trio.open_nursery() if _on_trio() else anyio.create_task_group()


def checkpoint_function() -> Callable[[], Awaitable[None]]:
    """The running library's checkpoint, for a loop to look up once and call often."""
    return trio.lowlevel.checkpoint if _on_trio() else anyio.lowlevel.checkpoint


async def run_sync_in_thread(function: Callable[[], _T]) -> _T:
    """Run the blocking ``function`` in a worker thread of the running library; its result.

    The libraries' own thread pools and limits (trio's and anyio's default of 40 threads at
    once). A cancellation waits for ``function`` to return: bound its time yourself.
    """
    if _on_trio():
        return await trio.to_thread.run_sync(function)
    return await anyio.to_thread.run_sync(function)
