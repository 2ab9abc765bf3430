"""Every message a test makes the core emit is checked against the revision's schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.pair import LIVE_PAIRS


@pytest.fixture(autouse=True)
def every_emitted_message_matches_the_schema() -> Iterator[None]:
    """After each test, validate what every Pair it made recorded (2026-07-28 issue 2)."""
    LIVE_PAIRS.clear()
    yield
    pairs = list(LIVE_PAIRS)
    LIVE_PAIRS.clear()
    for pair in pairs:
        pair.check_schema()
