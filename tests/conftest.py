"""Settings shared by the whole test suite."""

from __future__ import annotations

import signal

from hypothesis import settings

# No per-example deadline: a deadline is a timing assertion, and on a shared, loaded
# machine a slow example is not a failure (speed is measured in bench/, never asserted).
# The failing example's reproduction blob is printed, so any failure can be replayed.
settings.register_profile("mcpcore", deadline=None, print_blob=True)
settings.load_profile("mcpcore")

# A suite started in the background (`pytest &`, a job of a non-interactive shell, some CI
# runners) inherits SIGINT ignored, and an ignored signal stays ignored in every process
# it starts: the servers the tests stop with Ctrl+C would never hear it (a Python process
# leaves an inherited SIG_IGN alone). A handler of our own is reset to the default at
# exec, so each server starts with SIGINT as it would from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
