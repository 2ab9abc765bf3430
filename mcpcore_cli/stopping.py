"""Stopping a server run from the command line: Ctrl+C and SIGTERM end it cleanly.

Ctrl+C (SIGINT) makes trio raise `KeyboardInterrupt` in the main task; SIGTERM (a
service manager, ``kill``) cancels the serving nursery through `stop_on_terminate`.
What leaves a trio nursery comes wrapped in an exception group; `raise_sole` unwraps
a group of one, so that ``except KeyboardInterrupt`` and ``except OSError`` work.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import trio

# The one copy, shared with the transports' client openers (an application of this
# distribution may use that much of their runtime).
from transports._runtime.groups import reraise_sole as raise_sole

__all__ = ["raise_sole", "stop_on_terminate"]


async def stop_on_terminate(
    scope: trio.CancelScope,
    on_stop: Callable[[], None],
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """On SIGTERM, call ``on_stop`` and cancel ``scope`` (as Ctrl+C stops the server).

    Start it with ``nursery.start``: it is started once SIGTERM is caught, so that a
    server that starts serving after it can't die of SIGTERM's default action.
    """
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            on_stop()
            scope.cancel()
            return
