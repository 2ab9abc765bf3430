"""What a benchmark layer is: a name, a one-line summary, and a function that measures.

Each layer module (``bench.codec``, ``bench.roundtrip``, ...) exports one `Layer` named
``LAYER``; ``bench.__main__`` lists them. A new layer (stdio, HTTP, WebSocket, server
dispatch) is a new module with its own ``LAYER``, added to that list.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from bench._busy_poll import RECOMMENDED_BUSY_POLL
from bench._optional import Availability
from bench._progress import Progress
from bench._results import WorkloadResult
from mcpcore_cli.bench.timing import Settings

__all__ = ["Context", "Layer"]


@dataclass(frozen=True)
class Context:
    """What every layer gets: how to measure, which comparisons can run, where to report.

    Attributes:
        settings: How to measure.
        available: Which optional comparisons can run.
        progress: The run's progress display; None: `log` prints plain lines.
        busy_poll: The busy-poll budget, in seconds, of the rows measured with busy
            polling on (the sequential rows of the stdio, HTTP and WebSocket layers);
            0 leaves those rows out. Every other row runs with busy polling off
            (`bench._busy_poll`).
    """

    settings: Settings
    available: Availability
    progress: Progress | None = None
    busy_poll: float = RECOMMENDED_BUSY_POLL

    def log(self, message: str) -> None:
        """Report progress on stderr (stdout carries only the table): a workload starts."""
        if self.progress is None:
            print(message, file=sys.stderr, flush=True)
        else:
            self.progress.log(message)


@dataclass(frozen=True)
class Layer:
    """One benchmark layer.

    Attributes:
        name: What ``--only`` selects it by.
        summary: One line for ``--help``.
        run: Measures every workload of the layer.
    """

    name: str
    summary: str
    run: Callable[[Context], list[WorkloadResult]]
