"""The live progress bar of a run, on stderr (rich).

Shown when stderr is a terminal, or when the run is long (`LONG_RUN`) and someone may
be waiting on a log; never in between a short run's output and its caller. On a
terminal it is a bar, redrawn from a counter a few times a second (`REFRESH_INTERVAL`),
never per answer: the workers only add one to an integer. Elsewhere (a log) it is one
plain line as each level starts and one as it ends.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Final, TextIO

import trio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["LONG_RUN", "REFRESH_INTERVAL", "Counter", "LiveProgress", "wanted"]

#: Seconds of load (all levels, warm-ups included) past which a run shows its progress
#: even when stderr is not a terminal.
LONG_RUN: Final = 30.0
#: Seconds between redraws: smooth enough to read, and no load on the workers.
REFRESH_INTERVAL: Final = 0.2


def wanted(stream: TextIO, expected_seconds: float | None) -> bool:
    """Whether to show progress on ``stream`` for a run of about ``expected_seconds``."""
    long_run = expected_seconds is not None and expected_seconds >= LONG_RUN
    return stream.isatty() or long_run


class Counter:
    """The answers of one level so far: the engine calls it once per answer."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        """One more answer."""
        self.count += 1


class LiveProgress:
    """One bar per level, drawn on stderr while the level runs."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._console = Console(file=stream or sys.stderr)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self._console,
            auto_refresh=False,
            transient=True,
        )

    def __enter__(self) -> LiveProgress:
        if self._console.is_terminal:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._console.is_terminal:
            self._progress.stop()

    async def follow(
        self, description: str, total: float | None, done: Callable[[], float]
    ) -> None:
        """Redraw the bar of ``description`` (``done()`` of ``total``) until cancelled."""
        if not self._console.is_terminal:
            print(f"mcpcore bench run: {description}...", file=self._console.file, flush=True)
            try:
                await trio.sleep_forever()
            finally:
                print(f"mcpcore bench run: {description}: done", file=self._console.file)
        task = self._progress.add_task(description, total=total)
        try:
            while True:
                self._progress.update(task, completed=done())
                self._progress.refresh()
                await trio.sleep(REFRESH_INTERVAL)
        finally:
            self._progress.remove_task(task)
