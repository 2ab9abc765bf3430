"""``mcpcore bench run``: the command line of the load generator.

    mcpcore bench run http://127.0.0.1:3001/mcp --tool echo --args '{"text": "hi"}'
    mcpcore bench run ws://127.0.0.1:3001/ws --resource file:///a.txt --concurrency 1,8
    mcpcore bench run --tool echo --requests 1000 -- python server.py

This module reads the arguments (the standard library only, so that ``mcpcore bench
--help`` works without the extra); `mcpcore_cli.bench.loadtest` runs them, and without
the ``bench`` extra (rich, hdrhistogram) a one-line error says what to install.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from mcpcore_cli.extra import missing_extra, missing_extra_message

__all__ = [
    "BENCH_EXTRA",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_DURATION",
    "DEFAULT_TIMEOUT",
    "MAX_CONCURRENCY",
    "MAX_TIMEOUT",
    "PROG",
    "WARMUP_SECONDS",
    "add_arguments",
    "run",
]

#: How the messages name the command.
PROG: Final = "mcpcore bench run"
#: How the load generator's dependencies are installed.
BENCH_EXTRA: Final = "pip install 'mcpcore[bench]'"
#: The levels of a sweep when none are given: one client alone, a few, many (wrk's
#: default is 10 connections; these bracket it and show where throughput levels off).
DEFAULT_CONCURRENCY: Final = (1, 8, 64)
#: Seconds of load per level when neither a duration nor a count is given (long enough
#: for a stable rate on a loopback server, short enough for a three-level sweep).
DEFAULT_DURATION: Final = 5.0
#: Seconds of unmeasured load before each level: connections opened, the server's
#: caches and the interpreters' warmed, so that the first measured requests are typical.
WARMUP_SECONDS: Final = 1.0
#: Seconds a request waits for its answer before it counts as a timeout (wrk waits 2 s;
#: MCP tools are often slower than a web page).
DEFAULT_TIMEOUT: Final = 10.0
#: The longest timeout allowed: the latency histogram's range ends at 60 s
#: (`mcpcore_cli.bench.latencies.HIGHEST_MICROSECONDS`).
MAX_TIMEOUT: Final = 60.0
#: Workers (and connections) at most in one level: each holds a socket, and past a
#: thousand the open-file limit of an ordinary shell (1,024) is reached first.
MAX_CONCURRENCY: Final = 1000


def _levels(text: str) -> tuple[int, ...]:
    """``1,8,64`` as levels, each 1 to `MAX_CONCURRENCY`."""
    try:
        levels = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not all(1 <= level <= MAX_CONCURRENCY for level in levels):
        raise argparse.ArgumentTypeError(f"each level must be 1 to {MAX_CONCURRENCY}")
    return levels


def _positive(kind: type[int] | type[float], most: float | None = None) -> Any:
    """An argparse type: a number of ``kind`` above 0 (and at most ``most``)."""

    def convert(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not 0 < value < float("inf") or (most is not None and value > most):
            bound = f" and at most {most:g}" if most is not None else ""
            raise argparse.ArgumentTypeError(f"must be above 0{bound}: {text!r}")
        return value

    return convert


def _seconds_or_zero(text: str) -> float:
    """A warm-up: 0 (none) or more seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds: {text!r}")
    return value


def _arguments_object(text: str) -> dict[str, Any]:
    """``--args``: a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``mcpcore bench run`` (see the module)."""
    parser.epilog = (
        "A stdio server's command comes last, after --: mcpcore bench run --tool echo "
        "--requests 1000 -- python server.py"
    )
    parser.add_argument(
        "target",
        nargs="*",
        metavar="TARGET",
        help="an http(s):// or ws(s):// URL, or -- and the command that starts a stdio server",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--tool", metavar="NAME", help="call this tool (tools/call)")
    what.add_argument("--resource", metavar="URI", help="read this resource (resources/read)")
    what.add_argument("--prompt", metavar="NAME", help="get this prompt (prompts/get)")
    parser.add_argument(
        "--args",
        type=_arguments_object,
        metavar="JSON",
        help="the tool's or prompt's arguments, a JSON object",
    )
    parser.add_argument(
        "--concurrency",
        type=_levels,
        default=DEFAULT_CONCURRENCY,
        metavar="N[,N...]",
        help="requests in flight (and connections), one level each "
        f"(default {','.join(map(str, DEFAULT_CONCURRENCY))})",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--duration",
        type=_positive(float),
        metavar="SECONDS",
        help=f"load per level (default {DEFAULT_DURATION:g})",
    )
    amount.add_argument("--requests", type=_positive(int), metavar="N", help="requests per level")
    parser.add_argument(
        "--rate",
        type=_positive(float),
        metavar="RPS",
        help="open loop: this many requests per second, latency from each one's intended "
        "start (default: closed loop, each worker sends when answered)",
    )
    parser.add_argument(
        "--warmup",
        type=_seconds_or_zero,
        default=WARMUP_SECONDS,
        metavar="SECONDS",
        help=f"unmeasured load before each level (default {WARMUP_SECONDS:g}; 0: none)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive(float, MAX_TIMEOUT),
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"a request unanswered this long is an error (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--mode",
        choices=("auto", "legacy", "modern"),
        default="auto",
        help="the protocol era: auto (probe 2026-07-28, else 2025-11-25), legacy, modern",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write one record per level")
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="draw throughput and p99 latency against concurrency (needs matplotlib)",
    )


def run(arguments: argparse.Namespace) -> int:
    """Run the load test the arguments describe; the exit status."""
    try:
        from mcpcore_cli.bench import loadtest
    except ImportError as error:
        if not missing_extra(error):
            raise
        print(missing_extra_message(PROG, error, BENCH_EXTRA), file=sys.stderr)
        return 2
    return loadtest.main(arguments)
