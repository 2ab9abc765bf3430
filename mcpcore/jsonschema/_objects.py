"""Checks for objects (2020-12 Core §10.3.2, §11.3; Validation §6.5).

``properties``, ``patternProperties``, ``additionalProperties``, ``propertyNames``,
``required``, ``dependentRequired`` (draft-07: array-valued ``dependencies``) and
``unevaluatedProperties``. Property-count bounds are in `_assertions`, and
``dependentSchemas`` (an in-place applicator) in `_composition`. The member applicators
record the names they evaluated in `_Notes`, which is what ``unevaluatedProperties``
reads. `_declared_properties` is the path a typical tool's ``inputSchema`` takes on
every call, so it stays lean.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mcpcore.jsonschema._nodes import _FALSE, _Node
from mcpcore.jsonschema._state import (
    _Budget,
    _Check,
    _fresh,
    _Issues,
    _Notes,
    _Path,
    _report,
    _show,
    _tracked,
)


def _members(
    properties: Mapping[str, _Node],
    patterns: Sequence[tuple[re.Pattern[str], _Node]],
    additional: _Node | None,
) -> _Check:
    """``properties``, ``patternProperties``, ``additionalProperties`` in one pass.

    Core §10.3.2.1-3: a member is "additional" when neither of the others matched it.
    """

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name, value in instance.items():
            node = properties.get(name)
            matched = node is not None
            if node is not None and not node.evaluate(
                value, (path, name), budget, issues, None if notes is None else _Notes()
            ):
                if issues is None:
                    return False
                valid = False
            if patterns:
                found, ok = _pattern_members(
                    patterns, name, value, path=path, budget=budget, issues=issues, notes=notes
                )
                if not ok:
                    if issues is None:
                        return False
                    valid = False
                matched = matched or found
            if not matched and additional is not None:
                matched = True
                if not _additional_member(
                    additional, name, value, path=path, budget=budget, issues=issues, notes=notes
                ):
                    if issues is None:
                        return False
                    valid = False
            if matched and notes is not None:
                notes.properties.add(name)
        return valid

    return check


def _pattern_members(
    patterns: Sequence[tuple[re.Pattern[str], _Node]],
    name: Any,
    value: Any,
    *,
    path: _Path,
    budget: _Budget,
    issues: _Issues,
    notes: _Notes | None,
) -> tuple[bool, bool]:
    """``patternProperties`` for one member: whether a pattern matched, and all held."""
    matched, valid = False, True
    for regex, node in patterns:
        if regex.search(name if type(name) is str else str(name)) is not None:
            matched = True
            if not node.evaluate(value, (path, name), budget, issues, _fresh(notes)):
                if issues is None:
                    return True, False
                valid = False
    return matched, valid


def _additional_member(
    additional: _Node,
    name: Any,
    value: Any,
    *,
    path: _Path,
    budget: _Budget,
    issues: _Issues,
    notes: _Notes | None,
) -> bool:
    """``additionalProperties`` for one member no other keyword matched."""
    if additional is _FALSE:
        if issues is not None:
            message = "is not allowed (no additional properties)"
            _report(issues, (path, name), "additionalProperties", message)
        return False
    return additional.evaluate(value, (path, name), budget, issues, _fresh(notes))


def _declared_properties(properties: Mapping[str, _Node]) -> _Check:
    """``properties`` alone: walk the schema's names, usually fewer than the instance's."""
    entries = tuple(properties.items())

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name, node in entries:
            if name in instance:
                mine = None if notes is None else _Notes()  # inlined _fresh: the hot path
                if not node.evaluate(instance[name], (path, name), budget, issues, mine):
                    if issues is None:
                        return False
                    valid = False
                if notes is not None:
                    notes.properties.add(name)
        return valid

    return check


def _property_names(node: _Node) -> _Check:
    """``propertyNames`` (Core §10.3.2.4): each member name validates against a schema."""

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name in instance:
            if not node.evaluate(name, (path, name), budget, None, _fresh(notes)):
                if issues is None:
                    return False
                _report(issues, (path, name), "propertyNames", "property name is not allowed")
                valid = False
        return valid

    return check


def _required(names: Sequence[str], keyword: str, because: str = "") -> _Check:
    """``required`` (Validation §6.5.3) and one ``dependentRequired`` entry (§6.5.4)."""

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name in names:
            if name not in instance:
                if issues is None:
                    return False
                _report(issues, path, keyword, f"missing required property {_show(name)}{because}")
                valid = False
        return valid

    return check


def _dependent_required(entries: Sequence[tuple[str, _Check]]) -> _Check:
    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name, needs in entries:
            if name in instance and not needs(instance, path, budget, issues, notes):
                if issues is None:
                    return False
                valid = False
        return valid

    return check


def _unevaluated_properties(node: _Node) -> _Check:
    """``unevaluatedProperties`` (Core §11.3): members nothing else evaluated."""

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        notes = _tracked(notes)  # (the compiler turns tracking on for this keyword)
        valid = True
        for name, value in instance.items():
            if name in notes.properties:
                continue
            if node is _FALSE:
                if issues is None:
                    return False
                message = "is not allowed (no unevaluated properties)"
                _report(issues, (path, name), "unevaluatedProperties", message)
                valid = False
            elif not node.evaluate(value, (path, name), budget, issues, _Notes()):
                if issues is None:
                    return False
                valid = False
        notes.properties.update(instance)
        return valid

    return check
