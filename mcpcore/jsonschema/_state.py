"""The state one validation threads through every check, and how issues are written.

Every keyword check has the signature ``(instance, path, budget, issues, notes) -> bool``:

* ``path`` is the instance location as a linked list ``(parent, key)``, turned into a
  JSON pointer only when an issue is recorded, so valid instances never build strings;
* ``budget`` is the `_Budget` of depth and steps left, shared by the whole call;
* ``issues`` is the list to report into, or None when only validity matters (inside
  ``anyOf``/``oneOf``/``not``/``if``, and for `Validator.is_valid`), which lets a check
  stop at the first failure;
* ``notes`` collects the annotations ``unevaluatedProperties``/``unevaluatedItems`` read
  (2020-12 Core §11). It is None unless the document uses one of those keywords, so
  schemas without them pay nothing for annotation tracking.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeAlias

from mcpcore.jsonschema._errors import ValidationIssue, _LimitError

_Path: TypeAlias = "tuple[_Path, str | int] | None"
_Issues: TypeAlias = "list[ValidationIssue] | None"
_Check: TypeAlias = "Callable[[Any, _Path, _Budget, _Issues, _Notes | None], bool]"


class _Budget:
    """What one `errors`/`is_valid` call may still spend, and how deep it is now."""

    __slots__ = ("depth", "max_depth", "max_steps", "steps")

    def __init__(self, max_depth: int, max_steps: int) -> None:
        self.depth = 0
        self.max_depth = max_depth
        self.max_steps = max_steps
        self.steps = max_steps

    def exceeded(self, path: _Path) -> _LimitError:
        if self.steps < 0:
            why = f"validation stopped after {self.max_steps} keyword evaluations"
        else:
            why = f"validation stopped at the nesting limit of {self.max_depth}"
        return _LimitError(_pointer(path), why)


class _Notes:
    """Annotations about one instance location, for ``unevaluated*`` (2020-12 Core §11).

    ``properties`` holds the names evaluated by ``properties``, ``patternProperties``,
    ``additionalProperties`` and ``unevaluatedProperties``; items are evaluated when
    below ``prefix`` (``prefixItems``), in ``indices`` (``contains``) or when
    ``all_items`` (``items``, ``unevaluatedItems``). Only a subschema that validates
    contributes its notes (Core §7.7.1.2), so each in-place subschema gets fresh notes,
    merged into its parent's on success.
    """

    __slots__ = ("all_items", "indices", "prefix", "properties")

    def __init__(self) -> None:
        self.properties: set[str] = set()
        self.prefix = 0
        self.indices: set[int] = set()
        self.all_items = False

    def merge(self, other: _Notes) -> None:
        self.properties |= other.properties
        self.prefix = max(self.prefix, other.prefix)
        self.indices |= other.indices
        self.all_items = self.all_items or other.all_items


def _tracked(notes: _Notes | None) -> _Notes:
    """The notes an ``unevaluated*`` keyword reads: a document with one always tracks them."""
    if notes is None:
        raise AssertionError("unreachable: unevaluated* compiled without annotation tracking")
    return notes


def _fresh(notes: _Notes | None) -> _Notes | None:
    return None if notes is None else _Notes()


def _pointer(path: _Path) -> str:
    """The JSON pointer (RFC 6901 §3: ``~`` is ``~0``, ``/`` is ``~1``) for a path."""
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + part for part in reversed(parts))


def _report(issues: list[ValidationIssue], path: _Path, keyword: str, message: str) -> None:
    issues.append(ValidationIssue(_pointer(path), keyword, message))


def _show(value: Any) -> str:
    """A schema value as JSON text for a message, cut short if long."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
