"""One call waiting for its answer: timeouts, and progress reported by the caller itself.

The reader task of a connection never runs user code (shared/STYLE.md: one slow
progress callback must not stall the connection). It only drops what arrives into the
call's `PendingCall`: the answer, or the latest progress. The calling task, which is
waiting anyway, wakes up and runs the progress callback itself. Progress is monotonic
("progress MUST increase with each notification", 2024-11-05 utilities/progress), so
when a callback falls behind only the latest value matters: newer progress replaces
what the callback has not seen yet, and the pending progress is always reported before
the call returns.

Per-call options travel in a context variable: `ClientSession` builds the request and
hands it to the driver's `Requester.request`, which knows only the id and the bytes;
the `Client` method sets `CallOptions` around the session call, and the driver reads
them in the same task.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Final, TypeAlias

import trio

from mcpcore import ProgressReceived
from mcpcore.client import Outcome
from transports._client.deadlines import Deadlines

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_TOTAL_TIMEOUT",
    "CallOptions",
    "PendingCall",
    "ProgressCallback",
    "call_options",
    "call_options_set",
    "current_call_options",
    "report_progress",
]

#: Seconds a request waits for its answer unless told otherwise ("SHOULD be set on every
#: request", 2026-07-28 basic/lifecycle; the official SDKs default to 60 s as well).
DEFAULT_TIMEOUT: Final = 60.0
#: Seconds a request may last in all when progress keeps resetting its timeout ("SHOULD
#: enforce a hard maximum", 2026-07-28 basic/lifecycle): a server that reports progress
#: forever still ends. Ten minutes covers long tools; raise it per client or per call.
MAX_TOTAL_TIMEOUT: Final = 600.0

#: A progress callback: ``(progress, total, message)``; it may be sync or async.
ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call waits, beyond its timeout (which the `Requester` receives).

    Attributes:
        progress: Called with each progress value the caller gets to see.
        reset_timeout_on_progress: Progress restarts the timeout ("MAY reset on
            progress", 2026-07-28 basic/lifecycle), up to ``max_total_timeout``.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
    """

    progress: ProgressCallback | None = None
    reset_timeout_on_progress: bool = False
    max_total_timeout: float = MAX_TOTAL_TIMEOUT


_NO_OPTIONS: Final = CallOptions()
_CURRENT: ContextVar[CallOptions] = ContextVar("mcpcore_call_options", default=_NO_OPTIONS)


class call_options:  # noqa: N801  (used as a function: ``with call_options(...)``)
    """Set the options of the calls made in this task, within the ``with`` block.

    Never hold it across a ``yield`` of an async generator: the variable belongs to
    the task iterating it. (A class, not a generator: it wraps every call.)
    """

    __slots__ = ("_options", "_token")

    def __init__(self, options: CallOptions | None) -> None:
        self._options = options or _NO_OPTIONS
        self._token: Token[CallOptions] | None = None

    def __enter__(self) -> None:
        if self._options is not _NO_OPTIONS or _CURRENT.get() is not _NO_OPTIONS:
            self._token = _CURRENT.set(self._options)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)


def current_call_options() -> CallOptions:
    """The options `call_options` set in this task (the defaults when none are set)."""
    return _CURRENT.get()


def call_options_set() -> bool:
    """Whether `call_options` set options other than the defaults in this task."""
    return _CURRENT.get() is not _NO_OPTIONS


class PendingCall:
    """Where the reader leaves a call's answer and progress for the waiting caller.

    The caller parks itself (`trio.lowlevel.wait_task_rescheduled`) and the reader
    reschedules it directly (a `trio.Event`
    would do the same through a parking lot, for a few microseconds more per call):
    ``_woken`` says something arrived since the caller last looked, ``_waiter`` is the
    caller's task while it is parked.
    """

    __slots__ = (
        "_expired",
        "_failure",
        "_outcome",
        "_progress",
        "_progress_at",
        "_waiter",
        "_woken",
    )

    def __init__(self) -> None:
        self._woken = False
        self._waiter: trio.lowlevel.Task | None = None
        self._outcome: Outcome | None = None
        self._failure: BaseException | None = None
        self._progress: ProgressReceived | None = None
        self._progress_at = 0.0
        self._expired = False  # `Deadlines` said the deadline passed

    @property
    def done(self) -> bool:
        """Whether the call has its answer, or failed."""
        return self._outcome is not None or self._failure is not None

    # -- the reader's side: synchronous, never runs user code ------------------

    def resolve(self, outcome: Outcome) -> None:
        """The answer arrived."""
        if self._outcome is None and self._failure is None:
            self._outcome = outcome
            self._wake()

    def fail(self, error: BaseException) -> None:
        """The connection is gone: the call ends with ``error``."""
        if self._outcome is None and self._failure is None:
            self._failure = error
            self._wake()

    def progress(self, event: ProgressReceived) -> None:
        """Progress arrived; it replaces any the caller has not reported yet."""
        self._progress = event
        self._progress_at = trio.current_time()
        self._wake()

    def expire(self) -> None:
        """The deadline passed (`transports._client.deadlines.Deadlines`): the caller times out."""
        self._expired = True
        self._wake()

    def _wake(self) -> None:
        self._woken = True
        task = self._waiter
        if task is not None:
            self._waiter = None
            trio.lowlevel.reschedule(task)

    # -- the caller's side ----------------------------------------------------

    def settled(self) -> Outcome | None:
        """The answer, if the call has it and no progress is left to report; else None.

        Raises:
            BaseException: The call's failure, if it failed.
        """
        if self._failure is not None:
            raise self._failure
        return self._outcome if self._progress is None else None

    def take_progress(self) -> ProgressReceived | None:
        """The progress not reported yet, if any (for a caller that reads the answer itself)."""
        progress, self._progress = self._progress, None
        return progress

    async def wait(
        self,
        timeout: float,
        options: CallOptions,
        *,
        started: float | None = None,
        deadlines: Deadlines | None = None,
    ) -> Outcome:
        """Wait for the answer, reporting progress meanwhile.

        ``started`` is when the call began (`trio.current_time`), if before now: the
        timeout and the hard limit count from there (a driver may have spent part of
        them sending the request). With ``deadlines``, the connection's `Deadlines`
        keeps the timeout (no cancel scope per call; it may fire a few milliseconds
        late); without, a cancel scope does.

        Returns:
            The event that ended the call. Progress that arrived before it has been
            reported (the latest value, when several came at once).

        Raises:
            TimeoutError: No answer within ``timeout`` seconds (restarted by progress
                when asked, never past ``max_total_timeout``). The caller cancels the
                request on the wire.
            BaseException: The connection's failure, or the progress callback's.
        """
        clock = trio.current_time()
        start = clock if started is None else started
        now: float | None = clock  # (None once something was awaited: read it again)
        limit = start + options.max_total_timeout if options.reset_timeout_on_progress else math.inf
        deadline = min(start + timeout, limit)
        key = None if deadlines is None else deadlines.add(self, deadline)
        try:
            while True:
                if self._failure is not None:
                    raise self._failure
                progress, self._progress = self._progress, None
                if progress is not None:
                    if options.reset_timeout_on_progress:
                        later = min(max(deadline, self._progress_at + timeout), limit)
                        if deadlines is not None and later != deadline:
                            deadlines.discard(self, key)
                            key = deadlines.add(self, later)
                            self._expired = False  # (the old deadline's, if any)
                        deadline = later
                    if options.progress is not None:
                        # Bounded by the call's deadline like the rest of the wait.
                        with trio.move_on_at(deadline):
                            await report_progress(options.progress, progress)
                        now = None
                    continue  # more progress, or the answer, may have come meanwhile
                if self._outcome is not None:
                    return self._outcome
                if now is None:
                    now = trio.current_time()
                if self._expired or (deadlines is not None and now >= deadline):
                    raise TimeoutError(f"no answer within {timeout:g} s")
                now = None
                self._woken = False  # (what woke us so far is dealt with: wait for more)
                self._waiter = trio.lowlevel.current_task()
                if deadlines is not None:
                    await trio.lowlevel.wait_task_rescheduled(self._abort)
                    continue
                with trio.move_on_at(deadline) as waiting:
                    await trio.lowlevel.wait_task_rescheduled(self._abort)
                if waiting.cancelled_caught and not self._woken:
                    raise TimeoutError(f"no answer within {timeout:g} s")
        finally:
            if deadlines is not None:
                deadlines.discard(self, key)

    def _abort(self, _: object) -> trio.lowlevel.Abort:
        """The parked caller is cancelled: it is no longer there to wake."""
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED


async def report_progress(callback: ProgressCallback, event: ProgressReceived) -> None:
    """Run a progress callback (sync or async) with one progress event."""
    returned = callback(event.progress, event.total, event.message)
    if inspect.isawaitable(returned):
        await returned
