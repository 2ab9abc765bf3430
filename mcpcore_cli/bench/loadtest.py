"""One load test: each level run against the target, then reported.

`main` takes the arguments of ``mcpcore bench run`` (`mcpcore_cli.bench.run`), opens
fresh clients for each level (`targets.open_clients`: the connections of one level
never carry over to the next), runs it (`engine.run_level`), and prints the table,
writes the JSON and the chart. The exit status is 0, or 1 when the target could not be
reached or every request of every level failed (a one-line error says which), or 2
for arguments that make no test.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from functools import partial
from typing import Any, Final

import trio
from rich.console import Console

from mcpcore import McpError, ProtocolError
from mcpcore.client import ConnectMode
from mcpcore_cli.bench.engine import Level, LevelResult, Load, run_level
from mcpcore_cli.bench.operations import Operation, bind
from mcpcore_cli.bench.progress import Counter, LiveProgress, wanted
from mcpcore_cli.bench.report import TABLE_WIDTH, print_report, write_json, write_plot
from mcpcore_cli.bench.run import DEFAULT_DURATION, PROG
from mcpcore_cli.bench.targets import Target, open_clients, parse_target
from mcpcore_cli.stopping import raise_sole

__all__ = ["FAILED", "INTERRUPTED", "USAGE", "main", "run_levels"]

#: The exit status of a test that measured nothing: target unreachable, all failed.
FAILED: Final = 1
#: The exit status of arguments that make no test (argparse's own).
USAGE: Final = 2
#: The exit status after Ctrl+C (128 + SIGINT, as shells report it).
INTERRUPTED: Final = 130
#: What opening a client raises when the target is down, refuses us, or is no MCP
#: server we can speak to (OSError covers refused connections, timeouts, a missing
#: command, and the transports' `ConnectionClosedError`).
UNREACHABLE: Final = (OSError, McpError, ProtocolError)


def _operation(arguments: argparse.Namespace) -> Operation:
    if arguments.tool is not None:
        return Operation(kind="tool", name=arguments.tool, arguments=arguments.args)
    if arguments.resource is not None:
        if arguments.args is not None:
            raise ValueError("--args goes with --tool or --prompt, not --resource")
        return Operation(kind="resource", name=arguments.resource)
    if arguments.args is not None and not all(isinstance(v, str) for v in arguments.args.values()):
        raise ValueError("a prompt's --args are strings")
    return Operation(kind="prompt", name=arguments.prompt, arguments=arguments.args)


def _load(arguments: argparse.Namespace) -> Load:
    duration = arguments.duration
    if arguments.requests is None and duration is None:
        duration = DEFAULT_DURATION
    return Load(
        requests=arguments.requests,
        duration=duration,
        rate=arguments.rate,
        warmup=arguments.warmup,
    )


async def run_levels(
    target: Target,
    operation: Operation,
    load: Load,
    levels: Sequence[int],
    *,
    mode: ConnectMode = "auto",
    timeout: float,
    progress: LiveProgress | None = None,
) -> tuple[list[LevelResult], dict[str, Any]]:
    """Run each level against ``target``; the results, and what the records say about it.

    Raises:
        OSError, McpError, ProtocolError: The target could not be reached (`UNREACHABLE`).
    """
    results: list[LevelResult] = []
    about: dict[str, Any] = {"target": target.describe(), "operation": operation.describe()}
    for concurrency in levels:
        async with open_clients(target, concurrency, mode=mode, timeout=timeout) as clients:
            about.update(transport=target.transport, protocol_version=clients[0].protocol_version)
            level = Level(concurrency, [bind(operation, client, timeout) for client in clients])
            answered = Counter()
            async with trio.open_nursery() as nursery:
                if progress is not None:
                    total, done = _measure_of(load, answered)
                    nursery.start_soon(progress.follow, f"concurrency {concurrency}", total, done)
                results.append(await run_level(level, load, answered))
                nursery.cancel_scope.cancel()
    return results, about


def _measure_of(load: Load, answered: Counter) -> tuple[float, Callable[[], float]]:
    """How a level's progress is measured: answers of the total, or seconds of the run."""
    total = load.total()
    if total is not None:
        return total, lambda: answered.count
    start, seconds = trio.current_time(), load.warmup + (load.duration or 0.0)
    return seconds, lambda: min(trio.current_time() - start, seconds)


def _expected_seconds(load: Load, levels: int) -> float | None:
    """About how long the run takes (None when it goes by count: unknown)."""
    if load.duration is None:
        return None
    return levels * (load.warmup + load.duration)


def main(arguments: argparse.Namespace) -> int:
    """Run ``mcpcore bench run`` with its parsed ``arguments``; the exit status."""
    try:
        target = parse_target(arguments.target)
        operation = _operation(arguments)
    except ValueError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return USAGE
    load = _load(arguments)
    show = wanted(sys.stderr, _expected_seconds(load, len(arguments.concurrency)))
    try:
        with LiveProgress() if show else nullcontext() as progress:
            results, about = _run(target, operation, load, arguments, progress)
    except UNREACHABLE as error:
        print(f"{PROG}: can't load {target.describe()}: {_reason(error)}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:
        return INTERRUPTED
    title = f"{about['operation']} on {about['target']} ({about['protocol_version']})"
    console = Console(width=None if sys.stdout.isatty() else TABLE_WIDTH, highlight=False)
    print_report(results, title, console)
    if arguments.json is not None:
        write_json(arguments.json, results, about)
    if arguments.plot is not None:
        write_plot(arguments.plot, results, title)
    if all(result.successes == 0 for result in results):
        print(f"{PROG}: every request failed", file=sys.stderr)
        return FAILED
    return 0


def _run(
    target: Target,
    operation: Operation,
    load: Load,
    arguments: argparse.Namespace,
    progress: LiveProgress | None,
) -> tuple[list[LevelResult], dict[str, Any]]:
    """`run_levels` under trio, what leaves it as it was raised (not in a group)."""
    try:
        return trio.run(
            partial(
                run_levels,
                target,
                operation,
                load,
                arguments.concurrency,
                mode=arguments.mode,
                timeout=arguments.timeout,
                progress=progress,
            )
        )
    except BaseException as exc:  # (re-raised: a group of one as its one exception)
        raise_sole(exc)


def _reason(error: BaseException) -> str:
    """The error in one line: its first line, and its last when it has more.

    (`ServerExitedError` quotes the end of a stdio server's stderr: its last line says why.)
    """
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    return lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
