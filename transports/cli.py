"""The ``mcpcore`` command.

mcpcore --help
mcpcore --version
mcpcore serve [PATH]        # a folder's files, to any MCP client (see serve --help)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from transports._folder._command import add_serve_command, run_serve_command

__all__ = ["main"]


def _version() -> str:
    try:
        return version("mcpcore")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def parser() -> argparse.ArgumentParser:
    """The command line: ``--help``, ``--version``, and the subcommands."""
    command = argparse.ArgumentParser(
        prog="mcpcore",
        description="mcpcore: a fast, sans-IO Model Context Protocol implementation.",
    )
    command.add_argument("--version", action="version", version=f"mcpcore {_version()}")
    commands = command.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    add_serve_command(commands)
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = parser().parse_args(argv)
    if arguments.command is None:
        parser().print_help(sys.stderr)
        return 2
    # argparse refuses any other name.
    assert arguments.command == "serve"
    return run_serve_command(arguments)


if __name__ == "__main__":
    sys.exit(main())
