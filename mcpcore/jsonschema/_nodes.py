"""The compiled form of a schema: a graph of nodes, and the loop that evaluates one.

Each subschema becomes a `_Node`: the set of JSON types it allows plus a tuple of keyword
checks (closures built by `_assertions`, `_arrays`, `_objects` and `_composition`), some
of which run on every instance and some only on one JSON type. ``$ref`` cycles are
ordinary edges of the graph; evaluation is bounded by a `_Budget` (depth and steps), not
by the shape of the schema. The boolean schemas (Core §4.3.2) and type-only leaves get
their own shorter paths, since they are most of the nodes a tool schema has.

The JSON type of an instance (`_KINDS`, `_kind`) is defined here, beside the loop that
tests ``type`` first on every node: the lookup must be this module's own global (an
imported name makes CPython 3.11+ compile ``_KINDS.get(…)`` as an attribute load plus a
bound-method call, a measurable cost on the hot path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcpcore.jsonschema._state import _Budget, _Check, _Issues, _Notes, _Path, _report

# JSON types of Python values (2020-12 Validation §6.1.1). bool is checked by exact type
# before int could claim it: JSON Schema keeps booleans and numbers apart. A float with
# a zero fractional part is an "integer" (Validation §6.1.1; Core §4.2.2).
_KINDS: Final[Mapping[type, str]] = {
    str: "string",
    int: "integer",
    dict: "object",
    list: "array",
    tuple: "array",
    bool: "boolean",
    type(None): "null",
}
TYPE_NAMES: Final = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


# The JSON types of the values `_KINDS` does not map exactly, in the order to try them
# (a bool is an int to isinstance: it goes first).
_KINDS_BY_CLASS: Final = (
    (bool, "boolean"),
    (int, "integer"),
    (str, "string"),
    (Mapping, "object"),
    (list, "array"),
    (tuple, "array"),
)


def _kind(value: Any) -> str:
    """The JSON type of a value `_KINDS` doesn't map: floats and subclasses."""
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    for cls, kind in _KINDS_BY_CLASS:
        if isinstance(value, cls):
            return kind
    return "not a JSON value"


class _Node:
    """A compiled subschema: allowed types, then checks for any type, then per type."""

    __slots__ = ("cost", "generic", "type_message", "typed", "types")

    def __init__(self) -> None:
        self.cost = 1
        self.types: frozenset[str] | None = None
        self.type_message = ""
        self.generic: tuple[_Check, ...] = ()
        self.typed: dict[str, tuple[_Check, ...]] = {}

    def evaluate(
        self, instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        budget.steps -= self.cost
        budget.depth += 1
        if budget.steps < 0 or budget.depth > budget.max_depth:
            raise budget.exceeded(path)
        kind = _KINDS.get(type(instance)) or _kind(instance)
        valid = True
        if self.types is not None and kind not in self.types:
            if issues is None:
                budget.depth -= 1
                return False
            _report(issues, path, "type", self.type_message)
            valid = False
        for check in self.generic:
            if not check(instance, path, budget, issues, notes):
                if issues is None:
                    budget.depth -= 1
                    return False
                valid = False
        for check in self.typed.get(kind, ()):
            if not check(instance, path, budget, issues, notes):
                if issues is None:
                    budget.depth -= 1
                    return False
                valid = False
        budget.depth -= 1
        return valid


class _LeafNode(_Node):
    """A subschema with no keyword but ``type``, such as ``{"type": "string"}``.

    The commonest property schema, so it gets the same answers as `_Node` on a shorter
    path: nothing below it can nest, so the depth is checked but not counted.
    """

    __slots__ = ()

    @classmethod
    def of(cls, node: _Node) -> _LeafNode:
        """A leaf with ``node``'s ``type`` rule (``node`` has no other check)."""
        leaf = cls()
        leaf.types, leaf.type_message = node.types, node.type_message
        return leaf

    def evaluate(
        self, instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        budget.steps -= 1
        if budget.steps < 0 or budget.depth >= budget.max_depth:
            raise budget.exceeded(path)
        if self.types is None or (_KINDS.get(type(instance)) or _kind(instance)) in self.types:
            return True
        if issues is not None:
            _report(issues, path, "type", self.type_message)
        return False


class _TrueNode(_Node):
    """The ``true`` schema (Core §4.3.2): everything is valid."""

    __slots__ = ()

    def evaluate(
        self, instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        budget.steps -= 1
        if budget.steps < 0:
            raise budget.exceeded(path)
        return True


class _FalseNode(_Node):
    """The ``false`` schema (Core §4.3.2): nothing is valid."""

    __slots__ = ()

    def evaluate(
        self, instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if issues is not None:
            _report(issues, path, "false", "no value is allowed here")
        return False


_TRUE: Final = _TrueNode()
_FALSE: Final = _FalseNode()
