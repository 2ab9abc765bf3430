"""Checks for the in-place applicators (2020-12 Core §10.2, §8.2.3.1).

``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else`` and
``dependentSchemas`` apply subschemas to the instance itself rather than to its members
or items, so they are where annotations from several subschemas meet: a subschema's
notes count only if it validates (Core §7.7.1.2), so each branch evaluates into fresh
`_Notes`, merged into the caller's on success.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpcore.jsonschema._nodes import _Node
from mcpcore.jsonschema._state import _Budget, _Check, _fresh, _Issues, _Notes, _Path, _report


def _in_place(node: _Node) -> _Check:
    """``$ref`` (Core §8.2.3.1), one ``allOf`` branch, a ``dependentSchemas`` entry."""

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if notes is None:
            return node.evaluate(instance, path, budget, issues, None)
        mine = _Notes()
        if node.evaluate(instance, path, budget, issues, mine):
            notes.merge(mine)
            return True
        return False

    return check


def _any_of(nodes: Sequence[_Node]) -> _Check:
    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        matched = False
        for node in nodes:
            mine = _fresh(notes)
            if node.evaluate(instance, path, budget, None, mine):
                if notes is None or mine is None:
                    return True
                # Every valid branch contributes annotations, so keep going (Core §11.2).
                notes.merge(mine)
                matched = True
        if not matched and issues is not None:
            _report(issues, path, "anyOf", f"must match at least one of {len(nodes)} schemas")
        return matched

    return check


def _one_of(nodes: Sequence[_Node]) -> _Check:
    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        winner: _Notes | None = None
        count = 0
        for node in nodes:
            mine = _fresh(notes)
            if node.evaluate(instance, path, budget, None, mine):
                count += 1
                winner = mine
                if count > 1:
                    break
        if count == 1:
            if notes is not None and winner is not None:
                notes.merge(winner)
            return True
        if issues is not None:
            found = "none" if count == 0 else "more than one"
            message = f"must match exactly one of {len(nodes)} schemas (matched {found})"
            _report(issues, path, "oneOf", message)
        return False

    return check


def _not(node: _Node) -> _Check:
    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        # `not` never contributes annotations (Core §10.2.1.4), so its notes are dropped.
        if not node.evaluate(instance, path, budget, None, _fresh(notes)):
            return True
        if issues is not None:
            _report(issues, path, "not", "must not match the schema in 'not'")
        return False

    return check


def _if(condition: _Node, then: _Node | None, otherwise: _Node | None) -> _Check:
    on_true = None if then is None else _in_place(then)
    on_false = None if otherwise is None else _in_place(otherwise)

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        # Core §10.2.2: `if`'s outcome picks the branch; its own failure is no error.
        if notes is None and on_true is None and on_false is None:
            return True
        mine = _fresh(notes)
        if condition.evaluate(instance, path, budget, None, mine):
            if notes is not None and mine is not None:
                notes.merge(mine)
            branch = on_true
        else:
            branch = on_false
        return branch is None or branch(instance, path, budget, issues, notes)

    return check


def _dependent_schemas(entries: Sequence[tuple[str, _Node]]) -> _Check:
    """``dependentSchemas`` (Core §10.2.2.4): a present member brings a subschema along."""
    checks = [(name, _in_place(node)) for name, node in entries]

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for name, applies in checks:
            if name in instance and not applies(instance, path, budget, issues, notes):
                if issues is None:
                    return False
                valid = False
        return valid

    return check


def _all_of(checks: Sequence[_Check]) -> _Check:
    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        valid = True
        for branch in checks:
            if not branch(instance, path, budget, issues, notes):
                if issues is None:
                    return False
                valid = False
        return valid

    return check
