"""``--busy-poll [SECONDS]``: opt in to busy polling for a standalone server.

The transports never spin unless asked (`transports.BusyPolling`): a library must not
change the event loop of the application that embeds it. A standalone server owns its
process, so ``mcpcore serve`` (and ``examples/everything.py``) let its user opt in:
``--busy-poll`` alone gives `transports.RECOMMENDED_BUSY_POLL`, ``--busy-poll 0.0002``
a budget of one's own. What it buys: a request-response connection saves the wake-up
of the event loop per message (on a VM, tens of microseconds: about 2.5x the sequential
calls per second over stdio when both sides spin). What it costs: up to the budget of
CPU spinning before each sleep, and other descriptors of the process seen up to the
budget later while a connection spins.
"""

from __future__ import annotations

import argparse
from typing import Final

from transports import RECOMMENDED_BUSY_POLL

__all__ = ["MAX_BUSY_POLL", "add_busy_poll_option", "busy_poll_budget"]

#: The longest budget accepted, in seconds. Past a millisecond a spin costs more CPU
#: than any wake-up it saves (a wake-up costs tens of microseconds), and a typo
#: (``--busy-poll 5``) would have the server spin for seconds before every sleep.
MAX_BUSY_POLL: Final = 0.01


def busy_poll_budget(text: str) -> float:
    """An argparse ``type``: a budget in seconds, from 0 to `MAX_BUSY_POLL`."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= seconds <= MAX_BUSY_POLL:  # (also refuses nan)
        raise argparse.ArgumentTypeError(
            f"must be from 0 to {MAX_BUSY_POLL:g} seconds, not {text} "
            f"(the recommended budget is {RECOMMENDED_BUSY_POLL:g})"
        )
    return seconds


def add_busy_poll_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--busy-poll [SECONDS]`` (``arguments.busy_poll``, 0 when absent)."""
    parser.add_argument(
        "--busy-poll",
        type=busy_poll_budget,
        nargs="?",
        const=RECOMMENDED_BUSY_POLL,
        default=0.0,
        metavar="SECONDS",
        help="spin up to SECONDS waiting for a client's next message before the event "
        "loop sleeps: lower latency per call, more CPU (default: off; alone: "
        f"{RECOMMENDED_BUSY_POLL:g}, the recommended budget; at most {MAX_BUSY_POLL:g})",
    )
