"""The busy-poll budget mcpcore's transports get in every layer (``--busy-poll``).

`transports` spins briefly before its event loop sleeps (`transports.RECOMMENDED_BUSY_POLL`,
see transports/_runtime/busypoll.py): on a request-response connection that saves the wake-up,
which on a virtual machine is most of a round trip. The raw ceilings and the official
SDK do not spin. ``python -m bench --busy-poll 0`` measures mcpcore without it, for the
like-for-like comparison of the protocol work; the default measures what a user gets.

The value travels in an environment variable so that the server processes the layers
start (``bench/_*_servers.py``) see it too.
"""

from __future__ import annotations

import os
from typing import Final

from transports import RECOMMENDED_BUSY_POLL

__all__ = ["ENVIRONMENT_VARIABLE", "busy_poll", "set_busy_poll"]

#: Where `set_busy_poll` leaves the budget for this process and its children.
ENVIRONMENT_VARIABLE: Final = "MCPCORE_BENCH_BUSY_POLL"


def set_busy_poll(seconds: float) -> None:
    """Give mcpcore's transports ``seconds`` of busy polling from now on (0: none)."""
    if seconds < 0:
        raise ValueError("the busy-poll budget can't be negative")
    os.environ[ENVIRONMENT_VARIABLE] = repr(seconds)


def busy_poll() -> float:
    """The budget to pass as ``busy_poll=`` to mcpcore's transports in a layer."""
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    return RECOMMENDED_BUSY_POLL if value is None else float(value)
