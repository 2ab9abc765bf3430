"""Checks for arrays (2020-12 Core §10.3.1, §11.2; Validation §6.4).

``prefixItems``/``items`` (and draft-07's array ``items`` with ``additionalItems``),
``contains`` with ``minContains``/``maxContains``, ``uniqueItems`` and
``unevaluatedItems``. Item-count bounds are in `_assertions`, shared with strings and
objects. The item applicators record which items they evaluated in `_Notes`
(``prefix``, ``indices``, ``all_items``), which is what ``unevaluatedItems`` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpcore.jsonschema._errors import _LimitError, _TooDeepError
from mcpcore.jsonschema._nodes import _FALSE, _Node
from mcpcore.jsonschema._state import (
    _Budget,
    _Check,
    _fresh,
    _Issues,
    _Notes,
    _Path,
    _pointer,
    _report,
    _tracked,
)
from mcpcore.jsonschema._values import _value_key


def _items(prefix: Sequence[_Node], rest: _Node | None, keyword: str) -> _Check:
    """``prefixItems`` then ``items`` (Core §10.3.1.1-2).

    draft-07's array-form ``items`` with ``additionalItems`` compiles to the same thing.
    """
    size = len(prefix)

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        length = len(instance)
        for index in range(min(size, length)):
            item_path = (path, index)
            if not prefix[index].evaluate(
                instance[index], item_path, budget, issues, _fresh(notes)
            ):
                if issues is None:
                    return False
                valid = False
        if rest is not None and length > size:
            if rest is _FALSE:
                if issues is None:
                    return False
                _report(issues, path, keyword, f"must have at most {size} items")
                valid = False
            else:
                for index in range(size, length):
                    item = instance[index]
                    if not rest.evaluate(item, (path, index), budget, issues, _fresh(notes)):
                        if issues is None:
                            return False
                        valid = False
        if notes is not None:
            notes.prefix = max(notes.prefix, min(size, length))
            notes.all_items = notes.all_items or rest is not None
        return valid

    return check


def _contains(node: _Node, least: int, most: int | None) -> _Check:
    """``contains`` with ``minContains``/``maxContains`` (Core §10.3.1.3, Validation §6.4.4-5)."""
    many = "item" if least == 1 else "items"

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        found = 0
        if least or most is not None or notes is not None:
            for index, item in enumerate(instance):
                if node.evaluate(item, (path, index), budget, None, _fresh(notes)):
                    found += 1
                    if notes is not None:
                        notes.indices.add(index)
                    elif most is None and found >= least:
                        break
        if found < least:
            message = f"must contain at least {least} {many} matching 'contains'"
            keyword = "contains" if least == 1 else "minContains"
        elif most is not None and found > most:
            message = f"must contain at most {most} items matching 'contains'"
            keyword = "maxContains"
        else:
            return True
        if issues is not None:
            _report(issues, path, keyword, message)
        return False

    return check


def _unique_items(
    instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
) -> bool:
    """``uniqueItems: true`` (Validation §6.4.3), by JSON equality, in linear time."""
    seen: dict[Any, int] = {}
    try:
        for index, item in enumerate(instance):
            first = seen.setdefault(_value_key(item), index)
            if first != index:
                if issues is not None:
                    message = f"must not contain duplicates (items {first} and {index} are equal)"
                    _report(issues, path, "uniqueItems", message)
                return False
    except _TooDeepError:
        raise _LimitError(_pointer(path), "value nests too deeply to compare") from None
    return True


def _unevaluated_items(node: _Node) -> _Check:
    """``unevaluatedItems`` (Core §11.2): items no adjacent or in-place keyword evaluated."""

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        notes = _tracked(notes)  # (the compiler turns tracking on for this keyword)
        if notes.all_items:
            return True
        valid = True
        for index in range(notes.prefix, len(instance)):
            if index in notes.indices:
                continue
            item_path = (path, index)
            if node is _FALSE:
                if issues is None:
                    return False
                _report(issues, item_path, "unevaluatedItems", "item is not allowed here")
                valid = False
            elif not node.evaluate(instance[index], item_path, budget, issues, _Notes()):
                if issues is None:
                    return False
                valid = False
        notes.all_items = True
        return valid

    return check
