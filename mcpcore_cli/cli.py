"""The ``mcpcore`` command.

mcpcore --help
mcpcore --version
mcpcore serve [PATH]        # a folder's files, to any MCP client (see serve --help)
mcpcore bench run TARGET    # load-test any MCP server (see bench run --help)
mcpcore bench codec FILE    # time your own messages (when installed)
mcpcore bench [ARGS]        # the benchmarks, as python -m bench (from a source checkout)
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mcpcore_cli.extra import missing_extra, missing_extra_message

__all__ = ["BENCH_SUBCOMMANDS", "bench_subcommands", "main", "run_bench", "run_bench_command"]

#: The source checkout this module was loaded from (an editable install runs from one).
CHECKOUT = Path(__file__).resolve().parent.parent
#: What ``mcpcore bench`` says when there are no benchmarks to run.
NO_BENCHMARKS = (
    "mcpcore bench: the benchmarks live in the source checkout (bench/), which this "
    "installation does not include; in a checkout run pip install -e '.[bench]', then "
    "mcpcore bench (or python -m bench)"
)
#: The exit status of a command interrupted by Ctrl+C before it began serving (128 + SIGINT,
#: as shells report it); once serving, Ctrl+C is the way to stop, and the status is 0.
INTERRUPTED = 130
#: How the benchmarks' dependencies are installed (in a checkout).
BENCH_EXTRA = "pip install -e '.[bench]'"
#: ``mcpcore bench``'s installed subcommands: name, module (each module has
#: ``add_arguments(parser)`` and ``run(arguments) -> int``), and its one-line help. Any
#: other ``mcpcore bench`` arguments go to the checkout's ``python -m bench``.
BENCH_SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("run", "mcpcore_cli.bench.run", "load-test an MCP server (URL or stdio command)"),
    ("codec", "mcpcore_cli.bench.codec", "time your own MCP messages through the codecs"),
)


def _version() -> str:
    try:
        return version("mcpcore")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def parser(add_serve_command: Callable[[Any], None] | None = None) -> argparse.ArgumentParser:
    """The command line: ``--help``, ``--version``, and the subcommands.

    Args:
        add_serve_command: Adds ``serve`` and its options (None: the trio extra is not
            installed, and ``serve`` takes any arguments, to say so).
    """
    command = argparse.ArgumentParser(
        prog="mcpcore",
        description="mcpcore: a fast, sans-IO Model Context Protocol implementation.",
    )
    command.add_argument("--version", action="version", version=f"mcpcore {_version()}")
    commands = command.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    if add_serve_command is not None:
        add_serve_command(commands)
    else:
        stub = commands.add_parser(
            "serve",
            help="serve a folder's files to MCP clients (needs the trio extra)",
            add_help=False,
        )
        stub.add_argument("arguments", nargs=argparse.REMAINDER)
    # Listed for --help only: `main` hands everything after "bench" to `run_bench_command`.
    commands.add_parser(
        "bench",
        help="load-test an MCP server (bench run), and the benchmarks "
        "(mcpcore bench --help lists them)",
        add_help=False,
    )
    return command


def bench_subcommands() -> dict[str, str]:
    """The installed `BENCH_SUBCOMMANDS` (name: module): those whose module exists."""
    return {
        name: module
        for name, module, _ in BENCH_SUBCOMMANDS
        if importlib.util.find_spec(module) is not None
    }


def bench_parser() -> argparse.ArgumentParser:
    """``mcpcore bench``'s own subcommands (the rest is ``python -m bench``'s)."""
    installed = bench_subcommands()
    command = argparse.ArgumentParser(
        prog="mcpcore bench",
        description="Load-test any MCP server, and time messages, from this installation. "
        "Other arguments run the project's benchmark suite (python -m bench, from a "
        "source checkout), whose options follow.",
    )
    commands = command.add_subparsers(title="commands", dest="bench_command", metavar="COMMAND")
    for name, module, summary in BENCH_SUBCOMMANDS:
        if name in installed:
            subcommand = commands.add_parser(name, help=summary, description=summary)
            importlib.import_module(module).add_arguments(subcommand)
    return command


def run_bench_command(arguments: Sequence[str], checkout: Path = CHECKOUT) -> int:
    """``mcpcore bench ARGS``: an installed subcommand, else ``python -m bench`` (`run_bench`).

    ``mcpcore bench --help`` shows both: the subcommands, then the suite's options.
    """
    if arguments[:1] and arguments[0] in bench_subcommands():
        parsed = bench_parser().parse_args(arguments)
        module = importlib.import_module(bench_subcommands()[parsed.bench_command])
        status: int = module.run(parsed)
        return status
    if arguments[:1] in (["--help"], ["-h"]):
        bench_parser().print_help()
        print()
        if not (checkout / "bench" / "__main__.py").is_file():
            print(NO_BENCHMARKS)
            return 0
    return run_bench(arguments, checkout)


def run_bench(arguments: Sequence[str], checkout: Path = CHECKOUT) -> int:
    """``mcpcore bench``: run ``python -m bench`` of ``checkout`` with ``arguments``.

    The benchmarks are not part of the wheel (they need the official SDK and the
    repository's server scripts), so they run from a source checkout: the one this
    module comes from when mcpcore is installed in editable mode. Elsewhere a one-line
    error says so (exit status 2).
    """
    if not (checkout / "bench" / "__main__.py").is_file():
        print(NO_BENCHMARKS, file=sys.stderr)
        return 2
    if sys.path[:1] != [str(checkout)]:  # this checkout's bench, not another one
        sys.path.insert(0, str(checkout))
    try:
        bench = importlib.import_module("bench.__main__")
    except ImportError as error:
        if not missing_extra(error):
            raise
        print(missing_extra_message("mcpcore bench", error, BENCH_EXTRA), file=sys.stderr)
        return 2
    status: int = bench.main(list(arguments), prog="mcpcore bench")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:  # its own subcommands, or python -m bench's options
        return run_bench_command(argv[1:])
    try:
        from mcpcore_cli.folder.command import add_serve_command, run_serve_command
    except ImportError as error:
        if not missing_extra(error):
            raise
        return _without_the_extra(argv, error)
    arguments = parser(add_serve_command).parse_args(argv)
    if arguments.command is None:
        parser(add_serve_command).print_help(sys.stderr)
        return 2
    # argparse refuses any other name.
    assert arguments.command == "serve"
    try:
        return run_serve_command(arguments, argv=argv)
    except KeyboardInterrupt:  # Ctrl+C before serving began (while a large folder is read)
        return INTERRUPTED


def _without_the_extra(argv: Sequence[str], error: ImportError) -> int:
    """Installed without the trio extra: ``--help`` and ``--version``, and what to install."""
    arguments, _ = parser().parse_known_args(argv)  # (--help and --version exit here)
    if arguments.command is None:
        parser().print_help(sys.stderr)
    print(missing_extra_message("mcpcore", error), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
