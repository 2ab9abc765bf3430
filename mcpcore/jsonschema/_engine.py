"""The machinery behind `mcpcore.jsonschema`: a schema compiled once into a graph of nodes.

Each subschema becomes a `_Node`: the set of JSON types it allows plus a tuple of keyword
checks (closures), some of which run on every instance and some only on one JSON type.
`$ref` cycles are ordinary edges of the graph; evaluation is bounded by a `_Budget`
(depth and steps), not by the shape of the schema.

Every check has the signature ``(instance, path, budget, issues, notes) -> bool``:

* ``path`` is the instance location as a linked list ``(parent, key)``, turned into a
  JSON pointer only when an issue is recorded, so valid instances never build strings;
* ``issues`` is the list to report into, or None when only validity matters (inside
  ``anyOf``/``oneOf``/``not``/``if``, and for `Validator.is_valid`), which lets a check
  stop at the first failure;
* ``notes`` collects the annotations ``unevaluatedProperties``/``unevaluatedItems`` read
  (2020-12 Core §11). It is None unless the document uses one of those keywords, so
  schemas without them pay nothing for annotation tracking.
"""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final, TypeAlias
from urllib.parse import unquote

#: How deeply evaluation may nest: one level per subschema entered (through a property,
#: an item, ``allOf``, ``$ref``…). Flat tool schemas use a handful; a recursive schema
#: spends 2-3 levels per level of the instance (node, ``items``, ``$ref``), so 128 admits
#: trees some 40 levels deep. A level costs about two Python frames, so even with
#: `MAX_VALUE_NESTING` on top the stack stays well inside Python's default limit of
#: 1000. The same bound applies to how deeply the schema document nests (at compile).
MAX_DEPTH: Final = 128
#: Keyword evaluations allowed per `errors`/`is_valid` call. MCP 2026-07-28 asks
#: validators to bound composition cost with a time budget; the sans-IO core reads no
#: clock, so it counts steps instead (one per keyword of each subschema evaluated).
#: Exhausting 100 000 steps takes some 30-70 ms, while a flat tool schema needs a dozen
#: steps per call. The count includes linear work: an array of 100 000 typed items uses
#: it all, so a caller validating outputs that large should raise ``max_steps``.
MAX_STEPS: Final = 100_000
#: Subschemas one document may compile to (MCP 2026-07-28's "maximum subschema count"):
#: bounds compile time and memory for a hostile schema. Generated tool schemas with many
#: ``$defs`` have hundreds at most.
MAX_SUBSCHEMAS: Final = 10_000
#: How deeply a JSON value compared by ``enum``, ``const`` or ``uniqueItems`` may nest.
#: The comparison recurses, so a hostile instance nested thousands deep must stop with a
#: "limit" issue rather than exhaust Python's stack; real arguments nest a few levels.
MAX_VALUE_NESTING: Final = 256

DRAFT_2020_12: Final = "2020-12"
DRAFT_07: Final = "draft-07"
#: The ``$schema`` values we honour (MCP 2025-11-25: 2020-12 is the default and MUST be
#: supported; other dialects MUST be validated by their own rules or fail gracefully).
#: An empty fragment names the same resource, so ``…/schema#`` is accepted too.
DIALECTS: Final[Mapping[str, str]] = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "https://json-schema.org/draft/2020-12/schema#": DRAFT_2020_12,
    **{
        f"{scheme}://json-schema.org/draft-07/schema{hash_}": DRAFT_07
        for scheme in ("http", "https")
        for hash_ in ("", "#")
    },
}


class SchemaError(ValueError):
    """The schema itself is unusable, so no instance can be validated against it.

    Raised while compiling: an unsupported ``$schema`` dialect, a ``$ref`` that leaves
    the document (never fetched) or points nowhere, a malformed keyword value, an
    unsupported keyword (``$dynamicRef``), or a schema past `MAX_SUBSCHEMAS` or the
    depth limit. The message names the schema location, e.g. ``#/properties/age``.
    """


@dataclasses.dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One reason an instance doesn't match its schema.

    Attributes:
        path: JSON pointer (RFC 6901) to the offending value inside the instance, such
            as ``"/address/city"``; ``""`` is the instance itself.
        keyword: the schema keyword that failed (``"type"``, ``"required"``…), or
            ``"limit"`` when validation stopped at the depth or step budget.
        message: a short English explanation. It quotes the schema where useful but
            never the instance's values, so it is safe to send back to the peer.
    """

    path: str
    keyword: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.message}"


class InvalidInstance(ValueError):  # noqa: N818 -- public name, fixed by the API
    """The instance does not match the schema; raised by `Validator.validate`.

    Attributes:
        issues: every issue found, in evaluation order (never empty).
    """

    def __init__(self, issues: Sequence[ValidationIssue]) -> None:
        self.issues: tuple[ValidationIssue, ...] = tuple(issues)
        shown = "; ".join(str(issue) for issue in self.issues[:5])
        more = len(self.issues) - 5
        super().__init__(shown + (f" (and {more} more)" if more > 0 else ""))


class _LimitError(Exception):
    """Validation hit the depth or step budget: reported as one "limit" issue."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class _TooDeepError(Exception):
    """A value compared by enum/const/uniqueItems nests past `MAX_VALUE_NESTING`."""


# -- evaluation state -------------------------------------------------------------------

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


def _kind(value: Any) -> str:
    """The JSON type of a value `_KINDS` doesn't map: floats and subclasses."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return "not a JSON value"


def _value_key(value: Any, depth: int = 0) -> Any:
    """A hashable key under which two values collide iff they are equal as JSON.

    JSON equality (Validation §4.2.2): 1 and 1.0 are equal (Python agrees), while true
    and 1 are not, so booleans are wrapped; arrays compare item by item, objects by
    their members regardless of order.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value
    if kind is bool:
        return ("boolean", value)
    if depth >= MAX_VALUE_NESTING:
        raise _TooDeepError
    if kind is list or kind is tuple:
        return ("array", tuple([_value_key(item, depth + 1) for item in value]))
    if kind is dict:
        members = [(name, _value_key(item, depth + 1)) for name, item in value.items()]
        return ("object", frozenset(members))
    return _odd_value_key(value, depth)


def _odd_value_key(value: Any, depth: int) -> Any:
    """`_value_key` for subclasses of the JSON builtins (and anything else)."""
    if isinstance(value, bool):
        return ("boolean", bool(value))
    for base in (int, float, str):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, Mapping):
        return _value_key(dict(value), depth)
    if isinstance(value, (list, tuple)):
        return _value_key(list(value), depth)
    return ("opaque", id(value))  # not JSON: equal only to itself


# -- nodes ------------------------------------------------------------------------------


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


# -- checks: in-place applicators (Core §10.2) -------------------------------------------


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


# -- checks: any type (Validation §6.1) ---------------------------------------------------


def _equals_one_of(values: Sequence[Any], keyword: str, message: str) -> _Check:
    """``enum`` (Validation §6.1.2) and ``const`` (§6.1.3), by JSON equality."""
    keys = frozenset(_value_key(value) for value in values)
    wrapped = any(isinstance(key, tuple) for key in keys)  # booleans, arrays, objects

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        kind = type(instance)
        if kind is str or kind is int or kind is float or instance is None:
            if instance in keys:
                return True
        elif wrapped:
            try:
                if _value_key(instance) in keys:
                    return True
            except _TooDeepError:
                raise _LimitError(_pointer(path), "value nests too deeply to compare") from None
        if issues is not None:
            _report(issues, path, keyword, message)
        return False

    return check


# -- checks: numbers (Validation §6.2) ------------------------------------------------------


def _exact(number: float) -> Fraction:
    """A number as the decimal its JSON text spelled (``0.1`` is one tenth, exactly)."""
    if isinstance(number, int):
        return Fraction(number)
    return Fraction(Decimal(repr(number)))


def _multiple_of(divisor: float) -> _Check:
    """``multipleOf`` (Validation §6.2.1): the quotient is an integer.

    Decided on exact decimals, not binary floats: 0.3 is a multiple of 0.1 here.
    """
    exact = _exact(divisor)
    whole = divisor if isinstance(divisor, int) else None

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if type(instance) is int and whole is not None:
            if instance % whole == 0:
                return True
        elif (type(instance) is not float or math.isfinite(instance)) and (
            _exact(instance) % exact == 0
        ):
            return True
        if issues is not None:
            _report(issues, path, "multipleOf", f"must be a multiple of {_show(divisor)}")
        return False

    return check


_COMPARISONS: Final[Mapping[str, tuple[Callable[[Any, Any], bool], str]]] = {
    "maximum": (operator.le, "<="),
    "exclusiveMaximum": (operator.lt, "<"),
    "minimum": (operator.ge, ">="),
    "exclusiveMinimum": (operator.gt, ">"),
}


def _bound(keyword: str, limit: float) -> _Check:
    """``maximum``, ``exclusiveMaximum``, ``minimum``, ``exclusiveMinimum`` (§6.2.2-5)."""
    holds, symbol = _COMPARISONS[keyword]
    message = f"must be {symbol} {_show(limit)}"

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if holds(instance, limit):
            return True
        if issues is not None:
            _report(issues, path, keyword, message)
        return False

    return check


# -- checks: sizes (Validation §6.3.1-2, §6.4.1-2, §6.5.1-2) ------------------------------


def _size(keyword: str, limit: int, at_most: bool, unit: str) -> _Check:
    """Bounds on ``len()``: a str's length counts code points, as §6.3.1 asks."""
    many = unit if limit == 1 else unit + "s"
    message = f"must have {'at most' if at_most else 'at least'} {limit} {many}"

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if (len(instance) <= limit) if at_most else (len(instance) >= limit):
            return True
        if issues is not None:
            _report(issues, path, keyword, message)
        return False

    return check


def _pattern(regex: re.Pattern[str], source: str) -> _Check:
    """``pattern`` (Validation §6.3.3): unanchored, so a search, not a match."""
    message = f"must match the pattern {_show(source)}"

    def check(
        instance: Any, path: _Path, budget: _Budget, issues: _Issues, notes: _Notes | None
    ) -> bool:
        if regex.search(instance) is not None:
            return True
        if issues is not None:
            _report(issues, path, "pattern", message)
        return False

    return check


# -- checks: arrays (Core §10.3.1, §11.2; Validation §6.4) ----------------------------------


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
        assert notes is not None  # the compiler turns tracking on for this keyword
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


# -- checks: objects (Core §10.3.2, §11.3; Validation §6.5) ---------------------------------


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
            for regex, node in patterns:
                if regex.search(name if type(name) is str else str(name)) is not None:
                    matched = True
                    if not node.evaluate(value, (path, name), budget, issues, _fresh(notes)):
                        if issues is None:
                            return False
                        valid = False
            if not matched and additional is not None:
                matched = True
                if additional is _FALSE:
                    if issues is None:
                        return False
                    message = "is not allowed (no additional properties)"
                    _report(issues, (path, name), "additionalProperties", message)
                    valid = False
                elif not additional.evaluate(value, (path, name), budget, issues, _fresh(notes)):
                    if issues is None:
                        return False
                    valid = False
            if matched and notes is not None:
                notes.properties.add(name)
        return valid

    return check


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
        assert notes is not None  # the compiler turns tracking on for this keyword
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


def _pointer_tokens(fragment: str) -> Iterator[str]:
    """RFC 6901 §4/§6: percent-decode the fragment, split on ``/``, unescape ``~1``, ``~0``."""
    for token in unquote(fragment).split("/")[1:]:
        yield token.replace("~1", "/").replace("~0", "~")
