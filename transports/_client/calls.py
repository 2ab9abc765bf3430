"""One call waiting for its answer: its timeout, and progress reported by the caller itself.

The reader task of a connection never runs user code (shared/STYLE.md: one slow
progress callback must not stall the connection). It only drops what arrives into the
call's `PendingCall`: the answer, or the latest progress. The calling task, which is
waiting anyway, wakes up and runs the progress callback itself. Progress is monotonic
("progress MUST increase with each notification", 2024-11-05 utilities/progress), so
when a callback falls behind only the latest value matters: newer progress replaces
what the callback has not seen yet, and the pending progress is always reported before
the call returns.

How a call waits travels with it, explicitly: the `Client` method gives the session a
`CallTimeout` (the seconds to wait, a `float`, plus the progress callback and whether
progress restarts the timeout); the session hands the timeout, untouched, to the
driver's ``request``, which reads the rest with `options_of`. (The session is the
sans-IO core: it passes the timeout through and never looks inside.)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

import trio

from mcpcore import ProgressReceived
from mcpcore.client import Outcome
from transports._client.deadlines import Deadlines

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_TOTAL_TIMEOUT",
    "NO_OPTIONS",
    "CallOptions",
    "CallTimeout",
    "PendingCall",
    "ProgressCallback",
    "options_of",
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
    """How one call waits, beyond its timeout.

    Attributes:
        progress: Called with each progress value the caller gets to see.
        reset_timeout_on_progress: Progress restarts the timeout ("MAY reset on
            progress", 2026-07-28 basic/lifecycle), up to ``max_total_timeout``.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
    """

    progress: ProgressCallback | None = None
    reset_timeout_on_progress: bool = False
    max_total_timeout: float = MAX_TOTAL_TIMEOUT


#: The options of a call that sets none.
NO_OPTIONS: Final = CallOptions()


class CallTimeout(float):
    """A call's timeout in seconds, carrying the `CallOptions` of how it waits.

    A `float` (so that it goes through `mcpcore.client.ClientSession`, whose methods
    take a timeout and hand it to the driver untouched); the driver reads its
    ``options`` with `options_of`.
    """

    __slots__ = ("options",)

    options: CallOptions

    def __new__(cls, seconds: float, options: CallOptions) -> CallTimeout:
        timeout = super().__new__(cls, seconds)
        timeout.options = options
        return timeout


def options_of(timeout: float | None) -> CallOptions:
    """The options a call's timeout carries (`NO_OPTIONS` for a plain number)."""
    return timeout.options if isinstance(timeout, CallTimeout) else NO_OPTIONS


class PendingCall:
    """Where the reader leaves a call's answer and progress for the waiting caller.

    The caller waits on a `trio.Event`, made afresh each time it waits; the reader sets
    it whenever something arrives (the answer, a failure, progress), and so does the
    connection's `Deadlines` when the call's time is up (`expire`).

    Args:
        options: How the call waits (its progress callback, timeout resets).
    """

    __slots__ = (
        "_arrived",
        "_expired",
        "_failure",
        "_outcome",
        "_progress",
        "_progress_at",
        "options",
    )

    def __init__(self, options: CallOptions = NO_OPTIONS) -> None:
        #: How the call waits.
        self.options = options
        self._arrived: trio.Event | None = None  # while the caller waits
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
        """The deadline passed (`transports._client.deadlines.Deadlines`): time out."""
        self._expired = True
        self._wake()

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()

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
        *,
        started: float | None = None,
        deadlines: Deadlines | None = None,
    ) -> Outcome:
        """Wait for the answer, reporting progress meanwhile (as `options` say).

        ``started`` is when the call began (`trio.current_time`), if before now: the
        timeout and the hard limit count from there (a driver may have spent part of
        them sending the request). With ``deadlines``, the connection's `Deadlines`
        keeps the timeout (it may fire up to its resolution late); without, a cancel
        scope around the wait does.

        Returns:
            The event that ended the call. Progress that arrived before it has been
            reported (the latest value, when several came at once).

        Raises:
            TimeoutError: No answer within ``timeout`` seconds (restarted by progress
                when asked, never past ``max_total_timeout``). The caller cancels the
                request on the wire.
            BaseException: The connection's failure, or the progress callback's.
        """
        options = self.options
        start = trio.current_time() if started is None else started
        reset = options.reset_timeout_on_progress
        limit = start + options.max_total_timeout if reset else math.inf
        deadline = min(start + timeout, limit)
        key = None if deadlines is None else deadlines.add(self, deadline)
        try:
            while True:
                if self._failure is not None:
                    raise self._failure
                progress, self._progress = self._progress, None
                if progress is not None:
                    if reset:
                        later = min(max(deadline, self._progress_at + timeout), limit)
                        if deadlines is not None and later != deadline:
                            deadlines.discard(self, key)
                            key = deadlines.add(self, later)
                            self._expired = False  # (the old deadline's, if it passed)
                        deadline = later
                    if options.progress is not None:
                        # Bounded by the call's deadline like the rest of the wait.
                        with trio.move_on_at(deadline):
                            await report_progress(options.progress, progress)
                    continue  # more progress, or the answer, may have come meanwhile
                if self._outcome is not None:
                    return self._outcome
                if self._expired:
                    raise TimeoutError(f"no answer within {timeout:g} s")
                await self._next(None if deadlines is not None else deadline)
        finally:
            if deadlines is not None:
                deadlines.discard(self, key)

    async def _next(self, deadline: float | None) -> None:
        """Wait until something arrives (or ``deadline``, when there is one: then expire)."""
        arrived = self._arrived = trio.Event()
        try:
            if deadline is None:
                await arrived.wait()
                return
            with trio.move_on_at(deadline):
                await arrived.wait()
        finally:
            self._arrived = None
        if not arrived.is_set():
            self._expired = True


async def report_progress(callback: ProgressCallback, event: ProgressReceived) -> None:
    """Run a progress callback (sync or async) with one progress event."""
    returned = callback(event.progress, event.total, event.message)
    if inspect.isawaitable(returned):
        await returned
