"""``python -m bench``: run the benchmark layers and print one table.

Examples::

    python -m bench                         # every layer, 7 repetitions
    python -m bench --only codec --repeat 9
    python -m bench --quick --json out.json # a smoke run, under a minute
    python -m bench --without sdk           # leave the official SDK out
    python -m bench --plot chart.png        # and the chart (needs matplotlib)
    python -m bench --busy-poll 0.0002      # the busy-polling rows with a 200 µs budget

``mcpcore bench`` runs the same, with the same arguments.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from bench import (
    asgi,
    codec,
    dispatch,
    importtime,
    large,
    loadgen,
    memory,
    roundtrip,
    stdio,
    storms,
    streamable_http,
    websocket,
    workers,
)
from bench._busy_poll import RECOMMENDED_BUSY_POLL
from bench._environment import describe
from bench._layer import Context, Layer
from bench._optional import OPTIONAL, Availability
from bench._plot import PlotUnavailableError, require_matplotlib, write_plot
from bench._progress import Progress
from bench._report import document, format_table, write_json
from bench._results import WorkloadResult
from mcpcore_cli.bench.timing import Settings
from mcpcore_cli.bench.verify import BenchmarkError

#: Every layer, in the order they run and print. New layers are appended here.
LAYERS: tuple[Layer, ...] = (
    codec.LAYER,
    roundtrip.LAYER,
    dispatch.LAYER,
    stdio.LAYER,
    streamable_http.LAYER,
    websocket.LAYER,
    storms.LAYER,
    large.LAYER,
    memory.LAYER,
    importtime.LAYER,
    asgi.LAYER,
    workers.LAYER,
    loadgen.LAYER,
)

DEFAULT_REPEAT, QUICK_REPEAT = 7, 3
#: How long one timed measurement lasts: full and ``--quick``.
TARGET_SECONDS, QUICK_TARGET_SECONDS = 0.15, 0.01


def parse_args(
    argv: Sequence[str] | None = None, prog: str = "python -m bench"
) -> argparse.Namespace:
    """Read the command line (``prog``: how the usage names the command)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="mcpcore benchmarks, side by side with the official SDK and JSON libraries.",
        epilog="layers: " + "; ".join(f"{layer.name}: {layer.summary}" for layer in LAYERS),
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=[layer.name for layer in LAYERS],
        metavar="LAYER",
        help="run only this layer (repeatable): " + ", ".join(layer.name for layer in LAYERS),
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="N",
        help=f"repetitions per variant, medians over these (default {DEFAULT_REPEAT}, "
        f"{QUICK_REPEAT} with --quick)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run (the sweep cut to 1 and 8 in flight); numbers not meaningful",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every number here")
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="also draw throughput per transport and calls in flight (needs matplotlib)",
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=sorted(OPTIONAL),
        help="leave an optional comparison out, as if it were not installed (repeatable)",
    )
    parser.add_argument(
        "--busy-poll",
        type=float,
        default=RECOMMENDED_BUSY_POLL,
        metavar="SECONDS",
        help="every row runs with busy polling off (the library's default); the "
        "sequential rows of stdio, http and websocket run again with mcpcore and its "
        "ceiling both spinning this long before their event loop sleeps (default "
        f"{RECOMMENDED_BUSY_POLL:g}, the budget transports recommends; 0 leaves those "
        "rows out)",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.busy_poll < math.inf:
        parser.error("--busy-poll must be a number of seconds, at least 0")
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def _exit_on_sigterm(signal_number: int, frame: object) -> None:
    raise SystemExit(128 + signal_number)


def main(argv: Sequence[str] | None = None, prog: str = "python -m bench") -> int:
    """Run the selected layers, print the table, write the JSON and the chart; the exit status."""
    args = parse_args(argv, prog)
    if args.plot is not None:
        try:
            require_matplotlib()  # before anything is measured
        except PlotUnavailableError as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return 2
    # Stopped with SIGTERM, unwind as on Ctrl+C: the layers' ``finally`` blocks stop the
    # server processes they started (HTTP and WebSocket servers would outlive us).
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return _run(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    progress = Progress()
    settings = Settings(
        repeat=args.repeat or (QUICK_REPEAT if args.quick else DEFAULT_REPEAT),
        target_seconds=QUICK_TARGET_SECONDS if args.quick else TARGET_SECONDS,
        quick=args.quick,
        report=progress.step,
    )
    available = Availability(args.without)
    context = Context(settings, available, progress, busy_poll=args.busy_poll)
    environment = describe()
    selected = [layer for layer in LAYERS if not args.only or layer.name in args.only]
    results: list[WorkloadResult] = []
    errors: list[str] = []
    for index, layer in enumerate(selected, 1):
        progress.layer(layer.name, index, len(selected))
        try:
            results.extend(layer.run(context))
        except BenchmarkError as exc:  # the other layers still run and report
            errors.append(f"{layer.name}: {exc}")
            context.log(f"{layer.name}: benchmark error, layer left out: {exc}")
    progress.finish()
    print(format_table(results, settings, environment))
    report = document(
        results,
        settings=settings,
        environment=environment,
        available=available.as_dict(),
        busy_poll=context.busy_poll,
    )
    report["errors"] = errors
    if args.json is not None:
        write_json(args.json, report)
    if args.plot is not None:
        write_plot(args.plot, report)
    for error in errors:
        print(f"benchmark error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
