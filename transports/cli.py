"""The ``mcpcore`` command.

    mcpcore --help
    mcpcore --version

Subcommands arrive with the issues that build them (``mcpcore serve``, the directory
resource server, is issue 8).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

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
    command.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = parser().parse_args(argv)
    if arguments.command is None:
        parser().print_help(sys.stderr)
        return 2
    return 0  # (no subcommand exists yet: argparse refuses any name)


if __name__ == "__main__":
    sys.exit(main())
