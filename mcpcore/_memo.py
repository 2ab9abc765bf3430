"""A memo of decisions, kept out of the protocol state: speed only, never behaviour.

A `Connection` checks the same few methods over and over in the same state: a client
sends ``tools/call`` after ``tools/call``, a server admits them. Each check reads
nothing but the method and a handful of state values (the phase, the version, both
sides' capabilities, a 2026-07-28 request's envelope), so its answer can be kept and
looked up instead of worked out again.

Why a kept answer is never stale: each answer is stored together with the *state key*
it was worked out in, a tuple of every value the decision read. A lookup passes the
current key, and gets an answer only when that key equals the stored one; storing
under a new key forgets every answer of the old one. So any change to any value a
decision depends on (a new phase, a new version, new capabilities, another envelope)
makes the memo empty for it: there is no invalidation to forget. The caller must put
in the key every value the decision reads, and only values that don't change in
place and that Python compares as the decision reads them: a peer's decoded JSON goes
in as its encoding, since ``True == 1 == 1.0`` where a schema takes only the first.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

__all__ = ["Memo"]

_Key = TypeVar("_Key", bound=Hashable)
_Answer = TypeVar("_Answer")


class Memo(Generic[_Key, _Answer]):
    """Answers worked out in one state, by key (see the module docstring)."""

    __slots__ = ("_answers", "_state")

    def __init__(self) -> None:
        self._state: tuple[Any, ...] | None = None
        self._answers: dict[_Key, _Answer] = {}

    def recall(self, state: tuple[Any, ...], key: _Key) -> _Answer | None:
        """The answer kept for ``key`` in ``state``, or None."""
        if state != self._state:
            return None
        return self._answers.get(key)

    def keep(self, state: tuple[Any, ...], key: _Key, answer: _Answer) -> None:
        """Keep ``answer`` for ``key`` in ``state``; answers of another state are forgotten."""
        if state != self._state:
            self._answers = {}
            self._state = state
        self._answers[key] = answer
