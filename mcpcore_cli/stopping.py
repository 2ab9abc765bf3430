"""Stopping a server run from the command line: Ctrl+C and SIGTERM end it cleanly.

Ctrl+C (SIGINT) makes trio raise `KeyboardInterrupt` in the main task; SIGTERM (a
service manager, ``kill``) cancels the serving nursery through `stop_on_terminate`.
What leaves a trio nursery comes wrapped in an exception group; `raise_sole` unwraps
a group of one, so that ``except KeyboardInterrupt`` and ``except OSError`` work.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any, NoReturn

import trio

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


def raise_sole(exc: BaseException) -> NoReturn:
    """Raise the one exception in a group of one (trio wraps what leaves a nursery)."""
    sole = exc
    while True:
        inner: Any = getattr(sole, "exceptions", None)
        if not (isinstance(inner, tuple) and len(inner) == 1):
            break
        sole = inner[0]
    raise sole from None
