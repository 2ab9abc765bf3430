r"""Where a benchmark run is, on stderr (stdout carries only the table).

On a terminal one status line is redrawn in place (``\r``): the layer, the workload,
the harness's step (calibrating, repetition k/N) and the time elapsed. Anywhere else
(a log file, CI) nothing is redrawn: each workload prints one plain line as it starts,
with the time elapsed, and that is all.

The harness reports its steps between timed loops, never inside one, so drawing costs
no measured time.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress"]

#: The width assumed when the terminal's can't be read.
_FALLBACK_COLUMNS = 100


def _elapsed(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class Progress:
    """The progress display of one run.

    Args:
        stream: Where to write (stderr by default).
        clock: Seconds, monotonic (for tests).
    """

    def __init__(
        self, stream: TextIO | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = sys.stderr if stream is None else stream
        self._clock = clock
        self._start = clock()
        self._interactive = self._stream.isatty()
        self._layer = ""
        self._workload = ""
        self._drawn = 0  # characters of the status line on screen

    @property
    def interactive(self) -> bool:
        """Whether the status line is redrawn in place (stderr is a terminal)."""
        return self._interactive

    def layer(self, name: str, index: int, count: int) -> None:
        """A layer starts (``index`` counts from 1)."""
        self._layer = f"[{index}/{count} {name}]"
        self._workload = ""
        self.step("starting")

    def log(self, message: str) -> None:
        """A message that stays (a workload starting): its own line, with the time elapsed."""
        self._workload = message.partition(": ")[2] or message
        self._clear()
        print(f"[{_elapsed(self._clock() - self._start)}] {message}", file=self._stream, flush=True)
        self.step("")

    def step(self, status: str) -> None:
        """The harness moved on (``"repetition 2/7"``); redrawn on a terminal only."""
        if not self._interactive:
            return
        parts = [self._layer, self._workload, status, _elapsed(self._clock() - self._start)]
        line = " · ".join(part for part in parts if part)
        width = shutil.get_terminal_size((_FALLBACK_COLUMNS, 24)).columns - 1
        line = line[:width]
        self._stream.write("\r" + line.ljust(self._drawn))
        self._stream.flush()
        self._drawn = len(line)

    def finish(self) -> None:
        """The run is over: the status line goes, the total time stays."""
        self._clear()
        total = _elapsed(self._clock() - self._start)
        print(f"[{total}] done", file=self._stream, flush=True)

    def _clear(self) -> None:
        if self._interactive and self._drawn:
            self._stream.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0
