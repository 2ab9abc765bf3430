"""``--workers N|auto``: several processes serving one listening socket, supervised.

``mcpcore serve`` and ``examples/everything.py`` share it (`add_worker_options`). With
more than one worker, the process started from the command line becomes the supervisor
(`run_workers`):

1. it binds ``--host`` and ``--port`` as a lone server would (``trio.open_tcp_listeners``:
   port 0 picks a port once, which every worker shares) and makes one sealing key;
2. it starts worker 1: the same program with the same arguments, untouched (``--workers``
   too: `mcpcore_cli.handover.WORKER_VARIABLE` is what tells a worker it is one), handed
   the sockets and the key (see `mcpcore_cli.handover`). Once that one serves it starts
   the others at once: a setup that can't work (a folder that can't be read) fails once,
   with that worker's own error and exit status, not once per worker (any worker that
   exits before it first serves ends the start so);
3. once every worker serves, it prints the banner (workers print none), then watches.
   A worker that exits is logged to stderr and restarted after `restart_delay`, which
   grows while workers keep dying right after they start;
4. SIGINT or SIGTERM stops every worker (SIGTERM, then SIGKILL after `SHUTDOWN_GRACE`)
   and the supervisor exits 0. Workers run in a session of their own, so Ctrl+C at a
   terminal (SIGINT to the whole foreground process group) reaches the supervisor alone,
   which stops them in order; a worker whose supervisor is killed stops by itself.

The kernel gives each new connection to whichever worker accepts it first. What the
workers share is the key: a cursor or a 2026-07-28 ``requestState`` one worker issued is
good at any other. Everything else is each worker's own, legacy (2025-11-25 and
earlier) HTTP sessions included: such a session is served by the worker that made it.

Why trio rather than the standard library alone: ``trio.run_process`` starts a worker,
reaps it and, cancelled, stops it (its ``deliver_cancel``) in one call; a nursery stops
every worker at once, each with its own grace period; ``trio.open_signal_receiver``
turns SIGINT and SIGTERM into that cancellation. With ``subprocess`` alone the same
takes a SIGCHLD handler, a wake-up pipe and a loop of timers.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final

import trio

from mcpcore_cli.handover import WORKER_VARIABLE, handover_text
from mcpcore_cli.stopping import raise_sole
from transports import SECRET_SIZE

__all__ = [
    "MAX_RESTART_DELAY",
    "MAX_WORKERS",
    "RESTART_DELAY",
    "SHUTDOWN_GRACE",
    "STEADY_AFTER",
    "add_worker_options",
    "available_cores",
    "restart_delay",
    "run_workers",
    "worker_command",
    "worker_count",
    "workers_error",
]

#: The most workers: one per core of a large server. Past the cores they only compete
#: for them, and each is an interpreter with its own copy of the server (~40 MB resident
#: for the everything server, more with a large folder's catalogue): a slip such as
#: ``--workers 1000`` would start a thousand of them.
MAX_WORKERS: Final = 128
#: Seconds a worker gets to exit after SIGTERM before SIGKILL. It stops at once (trio
#: cancels its connections); this is for one stuck in code that ignores cancellation.
#: Well inside ``docker stop``'s 10 s and systemd's 90 s, so that the supervisor, not
#: the service manager, is the one to end it, and exits 0.
SHUTDOWN_GRACE: Final = 5.0
#: Seconds before a worker that died is restarted: even a worker that dies at once
#: can't make the supervisor spin (two starts a second at most), and a crash costs
#: clients only a moment of one worker in N.
RESTART_DELAY: Final = 0.5
#: The longest wait before a restart, reached by doubling `RESTART_DELAY` while a worker
#: keeps dying right after it starts: a setup that broke after start-up (a folder
#: removed, a port's address gone) is retried twice a minute, logged each time, without
#: flooding the log.
MAX_RESTART_DELAY: Final = 30.0
#: Seconds after which a worker's death is not one of starting (a crash under load, a
#: ``kill``): its restart waits `RESTART_DELAY` again.
STEADY_AFTER: Final = 10.0


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity, where the system has one."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (macOS and Windows have no affinity call)
        return os.cpu_count() or 1


def worker_count(text: str) -> int:
    """``--workers``: 1 to `MAX_WORKERS`, or ``auto``: one per core (an argparse type)."""
    if text.strip().lower() == "auto":
        return min(available_cores(), MAX_WORKERS)
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"not a number of workers: {text!r} (1 to {MAX_WORKERS}, or auto: one per core)"
        )
    return count


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers N|auto`` to ``parser`` (see `workers_error` for what it excludes)."""
    parser.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        metavar="N",
        help="serve from N processes sharing the port and one key, restarted if they die "
        f"(default 1; auto: one per core, {min(available_cores(), MAX_WORKERS)} here; at "
        f"most {MAX_WORKERS}; http and ws only)",
    )


def workers_error(arguments: argparse.Namespace) -> str | None:
    """Why ``--workers`` can't be used with the other ``arguments`` (None: it can)."""
    if arguments.workers == 1:
        return None
    if arguments.transport == "stdio":
        return (
            f"--workers {arguments.workers} needs --transport http or ws (over stdio "
            "a client talks to the one process it started)"
        )
    if os.name != "posix":
        return "--workers needs a POSIX system (its workers inherit the listening socket)"
    return None


def worker_command(argv: Sequence[str]) -> list[str]:
    """The command that starts a worker: this process's own, with ``argv`` its arguments.

    `sys.executable`, then the interpreter's options and the script or module as this
    process got them (`sys.orig_argv`), then ``argv``, unchanged (options of which
    this module knows nothing pass through).

    Raises:
        ValueError: ``argv`` is not this process's command line (a ``main(argv)`` called
            by another program, whose workers would run that program).
    """
    arguments = list(argv)
    program = sys.orig_argv[: len(sys.orig_argv) - len(arguments)]
    if not program or sys.argv[1:] != arguments or sys.orig_argv[len(program) :] != arguments:
        raise ValueError(
            "--workers starts this process's own command line again, and these arguments are not it"
        )
    return [sys.executable, *program[1:], *arguments]


def restart_delay(previous: float | None, lived: float) -> float:
    """Seconds to wait before restarting a worker that died after ``lived`` seconds.

    ``previous``: the wait before its last restart (None: it has not been restarted).
    """
    if previous is None or lived >= STEADY_AFTER:
        return RESTART_DELAY
    return min(previous * 2, MAX_RESTART_DELAY)


def run_workers(
    count: int,
    argv: Sequence[str],
    *,
    host: str,
    port: int,
    name: str,
    announce: Callable[[int], None],
) -> int:
    """Serve from ``count`` worker processes until SIGINT or SIGTERM; the exit status.

    0 once stopped. While starting, a worker that exits before it serves stops them all:
    then its own exit status (1 if a signal ended it; see the module docstring).

    Args:
        count: How many workers.
        argv: This process's arguments, which every worker gets too.
        host: The address to bind (as ``--host``).
        port: The port (0: one chosen now, shared by every worker).
        name: What the supervisor's lines on stderr start with (``mcpcore serve``).
        announce: Called with the bound port once every worker serves (the banner).

    Raises:
        OSError: ``host`` and ``port`` can't be bound (a port in use...).
        ValueError: ``argv`` is not this process's command line (see `worker_command`).
    """
    supervisor = _Supervisor(worker_command(argv), name)
    status: int = trio.run(supervisor.run, count, host, port, announce)
    return status


@dataclass(frozen=True)
class _Exited:
    """A worker that has exited (and been reaped)."""

    pid: int
    status: int  # (negative: the signal that killed it)
    lived: float  # (seconds since it was started)

    @property
    def cause(self) -> str:
        return f"signal {-self.status}" if self.status < 0 else f"status {self.status}"


class _Supervisor:
    """Starts the workers and keeps them running until cancelled (see `run_workers`)."""

    def __init__(self, command: list[str], name: str) -> None:
        self._command = command
        self._name = name
        self._key = secrets.token_bytes(SECRET_SIZE)
        self._listening: list[int] = []
        self._failed: tuple[int, _Exited] | None = None  # (a first worker that never served)

    async def run(self, count: int, host: str, port: int, announce: Callable[[int], None]) -> int:
        """Bind, start the workers, announce, and supervise until SIGINT or SIGTERM."""
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            listeners = await trio.open_tcp_listeners(port, host=host)
            self._listening = [listener.socket.fileno() for listener in listeners]
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_cancel_on_signal, signals, nursery.cancel_scope)
                    await self._start(nursery, count)
                    announce(listeners[0].socket.getsockname()[1])
            except BaseException as exc:
                raise_sole(exc)
            finally:
                for listener in listeners:  # (after the workers: the nursery waited for them)
                    listener.socket.close()
        if self._failed is None:
            return 0
        number, exited = self._failed
        self._log(f"worker {number} (pid {exited.pid}) exited ({exited.cause}) before serving")
        return exited.status if exited.status > 0 else 1

    async def _start(self, nursery: trio.Nursery, count: int) -> None:
        """Start the workers, the first alone; return once every one serves."""
        serving = [trio.Event() for _ in range(count)]
        for number, served in enumerate(serving, 1):
            nursery.start_soon(self._keep_running, number, served, nursery.cancel_scope)
            if number == 1:
                await served.wait()  # (a setup that can't work fails once, here)
        for served in serving:
            await served.wait()

    async def _keep_running(
        self, number: int, first_served: trio.Event, everything: trio.CancelScope
    ) -> None:
        """Run worker ``number``, restarting it whenever it exits, until cancelled."""
        delay: float | None = None
        while True:
            exited = await self._run_worker(number, first_served)
            await trio.lowlevel.checkpoint_if_cancelled()  # (stopping: why it exited)
            if not first_served.is_set():
                self._failed = (number, exited)
                everything.cancel()
                return
            delay = restart_delay(delay, exited.lived)
            self._log(
                f"worker {number} (pid {exited.pid}) died ({exited.cause}); "
                f"restarting in {delay:g} s"
            )
            await trio.sleep(delay)

    async def _run_worker(self, number: int, first_served: trio.Event) -> _Exited:
        """Run worker ``number`` once, until it exits; set ``first_served`` when it serves."""
        ours, theirs = socket.socketpair()
        with ours, theirs:
            ours.sendall(self._key)  # (into the socket's buffer: the worker reads it first)
            began = trio.current_time()
            async with trio.open_nursery() as nursery:
                process: trio.Process = await nursery.start(
                    partial(
                        trio.run_process,
                        self._command,
                        check=False,
                        deliver_cancel=_stop_worker,
                        stdin=subprocess.DEVNULL,
                        pass_fds=[*self._listening, theirs.fileno()],
                        env={**os.environ, WORKER_VARIABLE: self._handover(number, theirs)},
                        start_new_session=True,  # (see the module docstring, step 4)
                    )
                )
                theirs.close()  # (the worker's alone now: its exit is end of file on ours)
                control = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
                if await control.receive_some(1):  # (nothing: it exited first)
                    self._log(f"worker {number} (pid {process.pid}) ready")
                    first_served.set()
            # (run_process has returned: the worker has exited and been reaped)
        assert process.returncode is not None
        return _Exited(process.pid, process.returncode, trio.current_time() - began)

    def _handover(self, number: int, control: socket.socket) -> str:
        return handover_text(number, control.fileno(), self._listening)

    def _log(self, text: str) -> None:
        print(f"{self._name}: {text}", file=sys.stderr, flush=True)


async def _cancel_on_signal(signals: AsyncIterator[int], scope: trio.CancelScope) -> None:
    async for _ in signals:
        scope.cancel()
        return


async def _stop_worker(process: trio.Process) -> None:
    """Stop a worker (``trio.run_process``'s ``deliver_cancel``): SIGTERM, then SIGKILL."""
    process.terminate()
    await trio.sleep(SHUTDOWN_GRACE)
    process.kill()
