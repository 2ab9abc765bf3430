"""Settings shared by the whole test suite."""

from __future__ import annotations

from hypothesis import settings

# No per-example deadline: a deadline is a timing assertion, and on a shared, loaded
# machine a slow example is not a failure (speed is measured in bench/, never asserted).
# The failing example's reproduction blob is printed, so any failure can be replayed.
settings.register_profile("mcpcore", deadline=None, print_blob=True)
settings.load_profile("mcpcore")
