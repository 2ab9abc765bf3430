"""Busy polling: spin briefly before the event loop sleeps, when a peer answers fast.

**Off unless asked for.** Every ``serve_*`` and ``open_*_client`` takes ``busy_poll=0``
by default: an application that never asks gets no instrument in its trio run and no
spinning, ever. Pass `RECOMMENDED_BUSY_POLL` (or your own budget) to opt in.

On a request-response connection most of a round trip is not work but waking up. A
process that blocks in ``epoll_wait`` gives its CPU back; when the answer arrives the
kernel must wake it, and on a virtual machine that costs tens of microseconds per wake-up
(measured on this project's 2-core VM: a bare pipe ping-pong between two trio processes
does ~6k round trips/s when both sleep and ~150k/s when both spin; our stdio tools/call,
sequential, goes from ~3.4k to ~8.8k calls/s with `RECOMMENDED_BUSY_POLL` on both
sides, ``python -m bench --busy-poll 0`` against ``--busy-poll 0.0005``). Spinning is
what kernels do for the same reason (``SO_BUSY_POLL``) and what Go's scheduler does
before parking a thread.

So, while a connection is registered here (`BusyPolling`), each time the trio loop is
about to sleep (a `trio.abc.Instrument`'s ``before_io_wait``: no task is runnable), we
first ask the kernel, without waiting, whether a registered descriptor has data, again
and again for up to the spin budget. As soon as one has, we stop and the loop's own
``epoll_wait`` returns at once, without a sleep.

What it costs, and to whom:

* CPU: up to one budget of spinning per sleep of the loop, on the CPU the peer is not
  using; the back-off below keeps a slow peer from costing more.
* The rest of the application, while any connection of the run is registered: a trio
  run has one loop and one sleep, so the spin happens before every sleep of the run,
  whatever the task that is about to wait. It only watches the registered descriptors:
  data arriving on another socket or pipe of the application is seen when the spin
  ends, up to one budget (at most `RECOMMENDED_BUSY_POLL`, 0.5 ms, if that is what was
  asked) later than without it. Timers are never late: a spin never passes the loop's
  next deadline. Connections that did not ask are not watched, and once the last
  registration closes the instrument is removed from the run.

It is bounded and adaptive, because spinning burns the CPU it saves nothing on when the
peer is slow:

* one spin lasts at most the budget (the largest one registered), never past the
  loop's next deadline;
* a spin that catches nothing switches spinning off; it comes back on once sleeps turn
  out short (`SHORT_SLEEP_BUDGETS`: the peer is quick again), after one such sleep, then
  two, four... for each further miss in a row (`MAX_BACKOFF`). A connection whose peer
  answers too slowly for the budget costs at most one spin per change of pace, or per
  32 waits;
* a machine (or CPU affinity) with one CPU never spins: the peer needs that CPU.

The probe is an epoll (or poll) set of its own holding the registered descriptors, level
triggered, never read: trio's own registrations are untouched. A descriptor epoll refuses
(a regular file as stdin: always readable anyway) is simply not watched.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Final

import trio

__all__ = [
    "MAX_BACKOFF",
    "RECOMMENDED_BUSY_POLL",
    "SHORT_SLEEP_BUDGETS",
    "BusyPolling",
    "socket_fd",
]

#: The budget we recommend when you opt in to busy polling (``busy_poll=`` of every
#: ``serve_*`` and ``open_*_client``, ``mcpcore serve --busy-poll``; the default is 0:
#: off). Seconds a connection spins, at most, before its event loop sleeps. Longer than
#: the time the other side of a small tools/call takes (on the project's VM: ~100 µs for
#: our stdio server, ~250-300 µs over HTTP, measured when h11 parsed every message on
#: both sides), so that a client spins through it, and a server through its client's turn to
#: send the next request; short enough that the CPU a miss burns is small next to what
#: the peer was doing. Measured, sequential: stdio 50 µs gave 2x, 200 µs 2.5x the calls
#: per second, 500 µs the same as 200; HTTP 200 µs ~1.1x (the peer's turn was longer
#: than the spin), 500 µs ~1.3x.
RECOMMENDED_BUSY_POLL: Final = 500e-6


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every POSIX system)
        return os.cpu_count() or 1


#: A sleep counts as short (a spin would have caught it) up to this many budgets. A sleep
#: measures the peer's time *plus* the wake-ups that spinning avoids (ours, and the peer's
#: when it slept too: tens of µs each on a VM). Were the bound the budget itself, two
#: peers that both stopped spinning would see every sleep inflated past it and never
#: spin again, stuck at a third of their speed (measured: stdio 4.6k instead of 8.8k/s).
SHORT_SLEEP_BUDGETS: Final = 2
#: Consecutive misses after which spinning waits longest to come back: after n misses it
#: takes 2**(n-1) short sleeps, so a peer that answers just too slowly for the budget
#: costs at most one spin per 32 waits.
MAX_BACKOFF: Final = 6

#: Spinning only helps when the peer runs on another CPU meanwhile.
_CAN_SPIN: Final = _cpus() >= 2


class _Probe:
    """Asks the kernel whether any of a set of descriptors is readable, without waiting."""

    def __init__(self) -> None:
        if hasattr(select, "epoll"):  # O(1) per probe, however many descriptors
            epoll = select.epoll()
            self._set: select.epoll | select.poll = epoll
            self.ready: Callable[[], bool] = lambda: bool(epoll.poll(0, 1))
            self.close: Callable[[], None] = epoll.close
        else:
            poll = select.poll()
            self._set = poll
            self.ready = lambda: bool(poll.poll(0))
            self.close = lambda: None

    def add(self, fd: int) -> None:
        self._set.register(fd, select.POLLIN)

    def remove(self, fd: int) -> None:
        # (Already closed, so the kernel dropped it from the set: nothing to do.)
        with suppress(OSError, KeyError, ValueError):
            self._set.unregister(fd)


class _BusyPoll(trio.abc.Instrument):
    """The instrument of one trio run: spins in ``before_io_wait`` (see the module).

    Installed in the run while at least one descriptor is registered.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock  # (a monotonic clock in seconds; tests give their own)
        self._probe: _Probe | None = None  # (while installed)
        self._budgets: dict[int, list[float]] = {}  # fd -> the budgets registered on it
        self._budget = 0.0  # the largest registered budget
        self._misses = 0  # spins in a row that caught nothing
        self._short_sleeps_due = 0  # short sleeps to see before spinning again (0: spin)
        self._slept_at: float | None = None  # when the loop went to sleep without a catch

    def add(self, fd: int, budget: float) -> bool:
        """Watch ``fd``; False if it can't be watched (a regular file: always readable)."""
        budgets = self._budgets.get(fd)
        if budgets is None:
            probe = self._probe or _Probe()
            try:
                probe.add(fd)
            except OSError:  # (EPERM: epoll takes no regular files)
                if self._probe is None:
                    probe.close()
                return False
            if self._probe is None:
                self._probe = probe
                self._short_sleeps_due = 0
                trio.lowlevel.add_instrument(self)
            budgets = self._budgets[fd] = []
        budgets.append(budget)
        self._budget = max(self._budget, budget)
        return True

    def remove(self, fd: int, budget: float) -> None:
        assert self._probe is not None
        budgets = self._budgets[fd]
        budgets.remove(budget)
        if not budgets:
            del self._budgets[fd]
            self._probe.remove(fd)
        self._budget = max((max(b) for b in self._budgets.values()), default=0.0)
        if not self._budgets:
            trio.lowlevel.remove_instrument(self)
            self._probe.close()
            self._probe = None

    def before_io_wait(self, timeout: float) -> None:
        """Spin until a registered descriptor is readable, within the budget."""
        self._slept_at = None
        if timeout <= 0 or self._probe is None:
            return  # the loop is only polling: tasks are runnable
        clock = self._clock
        if self._short_sleeps_due <= 0:
            ready = self._probe.ready
            spin = min(timeout, self._budget)
            end = clock() + spin
            while not ready():
                if clock() >= end:
                    break
            else:
                self._misses = 0
                return
            if spin < self._budget:
                return  # cut short by the loop's deadline: not the peer's fault
            # Caught nothing: the peer is slow. Back off (see MAX_BACKOFF).
            self._misses = min(self._misses + 1, MAX_BACKOFF)
            self._short_sleeps_due = 1 << (self._misses - 1)
        self._slept_at = clock()

    def after_io_wait(self, timeout: float) -> None:
        """Spin again once enough sleeps were short enough for a spin to catch."""
        slept_at = self._slept_at
        if slept_at is None:
            return
        if self._clock() - slept_at <= SHORT_SLEEP_BUDGETS * self._budget:
            self._short_sleeps_due -= 1


_RUN_POLLER: trio.lowlevel.RunVar[_BusyPoll] = trio.lowlevel.RunVar("mcpcore_busy_poll")


def socket_fd(stream: trio.abc.Stream) -> int:
    """The descriptor of the TCP socket under ``stream`` (TLS or not); -1 if none."""
    if isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    return stream.socket.fileno() if isinstance(stream, trio.SocketStream) else -1


class BusyPolling:
    """One descriptor's registration for busy polling (see the module docstring).

    ``BusyPolling(fd, budget)`` spins up to ``budget`` seconds on ``fd`` before this trio
    run sleeps, until `close` (or the end of a ``with`` block). ``fd`` is a descriptor
    the peer's messages arrive on (a pipe, a socket); close the registration before the
    descriptor. A budget of 0 (or a one-CPU machine) registers nothing and installs
    nothing. While any registration is open, every sleep of the run is preceded by the
    spin (see the module docstring for what that costs the rest of the application).
    Create it from within `trio.run`.
    """

    __slots__ = ("_budget", "_fd", "_poller")

    def __init__(self, fd: int, budget: float) -> None:
        self._fd = fd
        self._budget = budget
        self._poller: _BusyPoll | None = None
        if budget <= 0 or not _CAN_SPIN or fd < 0:
            return
        try:
            poller = _RUN_POLLER.get()
        except LookupError:
            poller = _BusyPoll()
            _RUN_POLLER.set(poller)
        if poller.add(fd, budget):
            self._poller = poller

    def close(self) -> None:
        """Stop spinning for this descriptor (idempotent)."""
        poller, self._poller = self._poller, None
        if poller is not None:
            poller.remove(self._fd, self._budget)

    def __enter__(self) -> BusyPolling:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
