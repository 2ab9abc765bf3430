"""The IO policy of a benchmark row: how long its clients and servers busy-poll.

`transports` can spin briefly before its event loop sleeps (``busy_poll=SECONDS`` on
every ``serve_*`` / ``open_*``, off by default; see transports/_runtime/busypoll.py): on
a request-response connection that saves the wake-up, which on a virtual machine is most
of a round trip. A raw ceiling that sleeps between messages next to an mcpcore that spins
would be no ceiling at all ("vs ceiling" above 1 by unequal rules), so every row runs
under one policy: mcpcore's client and server and the ceiling's client and server spin
with the same budget (`busy_polling` registers the ceiling's own descriptors through the
public `transports.BusyPolling`, as mcpcore's transports register theirs), or none of
them does. The official SDK never spins (it can't: it has no such option, and asyncio no
hook before its loop sleeps); the rows that busy-poll say so in their notes.

Every row runs with busy polling off (`OFF`, the library's default: what a user gets out
of the box); the sequential rows of the stdio, HTTP and WebSocket layers are measured a
second time with it on, at `RECOMMENDED_BUSY_POLL` or ``python -m bench --busy-poll
SECONDS``. A server process is told its budget on its command line (`server_arguments`,
read back by `parse_server_arguments`), so that ``ps`` shows it too.
"""

from __future__ import annotations

import math
from typing import Final

import transports
from transports import BusyPolling

__all__ = [
    "OFF",
    "OPTION",
    "RECOMMENDED_BUSY_POLL",
    "busy_poll_words",
    "busy_polling",
    "parse_server_arguments",
    "server_arguments",
]

#: No busy polling: the library's default, and every row's unless it says otherwise.
OFF: Final = 0.0


#: The budget of the rows measured with busy polling on, unless ``--busy-poll`` says
#: otherwise: the one `transports` recommends when you opt in.
RECOMMENDED_BUSY_POLL: Final = transports.RECOMMENDED_BUSY_POLL

#: How a server script is told its budget: its first argument, ``--busy-poll=SECONDS``.
OPTION: Final = "--busy-poll="


def busy_polling(fd: int, budget: float) -> BusyPolling:
    """Spin up to ``budget`` seconds on ``fd`` before this trio run sleeps, until closed.

    What a raw ceiling's client or server calls for each descriptor its peer's messages
    arrive on (a pipe, a socket), as mcpcore's transports do for theirs; a budget of 0
    registers nothing. Close it (or leave its ``with`` block) before the descriptor.
    """
    return BusyPolling(fd, budget)


def server_arguments(budget: float) -> list[str]:
    """The arguments that give a server script ``budget`` (put before the others)."""
    return [f"{OPTION}{budget!r}"]


def parse_server_arguments(argv: list[str]) -> tuple[float, list[str]]:
    """The budget a server script was given (`OFF` without the option), and the rest.

    Raises:
        ValueError: The budget is not a finite number of seconds, at least 0.
    """
    if not argv or not argv[0].startswith(OPTION):
        return OFF, argv
    budget = float(argv[0].removeprefix(OPTION))
    if not math.isfinite(budget) or budget < 0:
        raise ValueError(f"a busy-poll budget is seconds, at least 0: {argv[0]!r}")
    return budget, argv[1:]


def busy_poll_words(budget: float) -> str:
    """How a row's name says its budget: ``"busy poll 500 µs"`` (empty when off)."""
    return f"busy poll {budget * 1e6:g} µs" if budget > 0 else ""
