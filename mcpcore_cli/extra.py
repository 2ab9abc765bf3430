"""Telling a user who installed mcpcore without the ``trio`` extra what to install.

``pip install mcpcore`` installs the core (msgspec only) and the ``mcpcore`` command,
whose every subcommand needs the transports, and so the ``trio`` extra. This module
imports nothing beyond the standard library, so that the command can always say so.
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRIO_EXTRA", "missing_extra", "missing_extra_message"]

#: The command that installs what the transports need.
TRIO_EXTRA: Final = "pip install 'mcpcore[trio]'"
#: The packages of this distribution: a module of theirs that is missing is a bug, not
#: a missing extra.
_OURS: Final = frozenset({"mcpcore", "transports", "mcpcore_cli"})


def missing_extra(error: ImportError) -> bool:
    """Whether ``error`` says that a third-party module is not installed.

    Every third-party module the transports import, besides the core's msgspec, comes
    with the ``trio`` extra (tests/test_extras.py checks it).
    """
    name = error.name or ""
    return bool(name) and name.partition(".")[0] not in _OURS


def missing_extra_message(prog: str, error: ImportError, install: str = TRIO_EXTRA) -> str:
    """The one line that says what is missing and how to install it."""
    return f"{prog}: needs {error.name}, which is not installed: {install}"
