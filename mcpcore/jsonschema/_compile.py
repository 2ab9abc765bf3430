"""Pass 2 of compiling: one `_nodes._Node` per subschema, each keyword checked on the way.

`_resources._Document` has scanned the document first (dialect, base URIs, resources,
anchors), so any ``$ref`` resolves. `_Compiler` then builds one node per subschema,
memoised by identity, which is how ``$ref`` cycles close, and turns each keyword into
a check from `_assertions`, `_arrays`, `_objects` or `_composition` after checking its
value, so that a schema we can't honour fails here rather than at validation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from mcpcore.jsonschema._arrays import _contains, _items, _unevaluated_items, _unique_items
from mcpcore.jsonschema._assertions import _bound, _equals_one_of, _multiple_of, _pattern, _size
from mcpcore.jsonschema._composition import (
    _all_of,
    _any_of,
    _dependent_schemas,
    _if,
    _in_place,
    _not,
    _one_of,
)
from mcpcore.jsonschema._errors import SchemaError, _TooDeepError
from mcpcore.jsonschema._nodes import _FALSE, _TRUE, TYPE_NAMES, _LeafNode, _Node
from mcpcore.jsonschema._objects import (
    _declared_properties,
    _dependent_required,
    _members,
    _property_names,
    _required,
    _unevaluated_properties,
)
from mcpcore.jsonschema._regex import _regex
from mcpcore.jsonschema._resources import _Document, _escape
from mcpcore.jsonschema._state import _Check, _show


@dataclasses.dataclass(frozen=True)
class Compiled:
    """A compiled document: its root node, dialect, and whether it tracks annotations."""

    root: _Node
    dialect: str
    tracking: bool


def compile_schema(schema: Any, max_depth: int) -> Compiled:
    """Compile a whole document. Raises SchemaError for anything we can't honour."""
    try:
        compiler = _Compiler(schema, max_depth)
        root = compiler.compile(schema, "", "#", 0)
    except RecursionError:
        raise SchemaError("the schema nests too deeply to compile") from None
    return Compiled(root, compiler.dialect, compiler.tracking)


def _count(schema: Mapping[str, Any], key: str, loc: str) -> int | None:
    """A non-negative integer keyword value; 2020-12 counts 2.0 as an integer."""
    if key not in schema:
        return None
    value = schema[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise SchemaError(f"{loc}/{key} must be a non-negative integer")


def _number(schema: Mapping[str, Any], key: str, loc: str) -> float | None:
    if key not in schema:
        return None
    value = schema[key]
    # JSON has no NaN or infinity, so neither may a schema.
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    raise SchemaError(f"{loc}/{key} must be a number")


def _names(value: Any, where: str) -> list[str]:
    if isinstance(value, (list, tuple)) and all(isinstance(name, str) for name in value):
        return list(value)
    raise SchemaError(f"{where} must be an array of strings")


class _Compiler(_Document):
    """One document's compile: the scanned document, and the nodes built so far."""

    def __init__(self, schema: Any, max_depth: int) -> None:
        super().__init__(schema, max_depth)
        self.nodes: dict[int, _Node] = {}
        self.tracking = False

    def compile(self, schema: Any, base: str, loc: str, depth: int) -> _Node:
        if schema is True:
            return _TRUE
        if schema is False:
            return _FALSE
        if not isinstance(schema, Mapping):
            raise SchemaError(f"{loc} must be a schema (an object or a boolean)")
        node = self.nodes.get(id(schema))
        if node is not None:
            return node  # compiled already, or being compiled: a `$ref` cycle closes here
        self._check_size(loc, depth, len(self.nodes))
        node = self.nodes[id(schema)] = _Node()
        known = self.bases.get(id(schema))
        base = known if known is not None else self._enter(schema, base, loc, register=False)
        self._build(node, schema, base, loc, depth)
        if node.cost == 1:
            # Nothing but ``type``: `_LeafNode`'s shorter path gives the same answers, so
            # whoever asks from now on gets one. (A `$ref` cycle that closed on this node
            # while it was being built keeps the general node: it answers alike.)
            node = self.nodes[id(schema)] = _LeafNode.of(node)
        return node

    def _sub(self, schema: Mapping[str, Any], key: str, base: str, loc: str, depth: int) -> _Node:
        return self.compile(schema[key], base, f"{loc}/{key}", depth + 1)

    def _sub_list(
        self, schema: Mapping[str, Any], key: str, base: str, loc: str, depth: int
    ) -> list[_Node]:
        value = schema[key]
        if not isinstance(value, (list, tuple)) or not value:
            raise SchemaError(f"{loc}/{key} must be a non-empty array of schemas")
        return [
            self.compile(item, base, f"{loc}/{key}/{index}", depth + 1)
            for index, item in enumerate(value)
        ]

    def _sub_map(
        self, schema: Mapping[str, Any], key: str, base: str, loc: str, depth: int
    ) -> dict[str, _Node]:
        value = schema[key]
        if not isinstance(value, Mapping):
            raise SchemaError(f"{loc}/{key} must be an object of schemas")
        return {
            name: self.compile(item, base, f"{loc}/{key}/{_escape(name)}", depth + 1)
            for name, item in value.items()
        }

    def _build(
        self, node: _Node, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> None:
        generic: list[_Check] = []
        by_kind: dict[str, list[_Check]] = {"object": [], "array": [], "string": [], "number": []}
        defs = "definitions" if self.draft7 else "$defs"
        if defs in schema:  # compiled even if unused, so that check_schema sees them
            self._sub_map(schema, defs, base, loc, depth)
        if self.draft7 and "$ref" in schema:
            # draft-07 Core §8.3: "All other properties in a "$ref" object MUST be ignored."
            generic.append(self._ref(schema, base, loc, depth))
        else:
            if "$dynamicRef" in schema:
                raise SchemaError(f"{loc}/$dynamicRef: unsupported keyword")
            self._any_type(node, schema, loc, generic)
            self._applicators(schema, base, loc, depth, generic)
            self._numbers(schema, loc, by_kind["number"])
            self._strings(schema, loc, by_kind["string"])
            self._arrays(schema, base, loc, depth, by_kind["array"])
            self._objects(schema, base, loc, depth, by_kind["object"])
        node.generic = tuple(generic)
        node.typed = {kind: tuple(checks) for kind, checks in by_kind.items() if checks}
        if "number" in node.typed:
            node.typed["integer"] = node.typed["number"]
        node.cost = 1 + len(generic) + sum(len(checks) for checks in by_kind.values())

    def _ref(self, schema: Mapping[str, Any], base: str, loc: str, depth: int) -> _Check:
        target, target_base = self._resolve(schema["$ref"], base, loc)
        where = schema["$ref"] if schema["$ref"].startswith("#") else f"{loc}/$ref"
        return _in_place(self.compile(target, target_base, where, depth + 1))

    def _any_type(
        self, node: _Node, schema: Mapping[str, Any], loc: str, generic: list[_Check]
    ) -> None:
        """``type``, ``enum``, ``const`` (Validation §6.1)."""
        if "type" in schema:
            value = schema["type"]
            names = [value] if isinstance(value, str) else value
            if (
                not isinstance(names, (list, tuple))
                or not names
                or not all(isinstance(name, str) and name in TYPE_NAMES for name in names)
            ):
                raise SchemaError(f"{loc}/type must be a type name or a non-empty array of them")
            # An integer is a number (Validation §6.1.1), so "number" admits both.
            node.types = frozenset(names) | ({"integer"} if "number" in names else set())
            node.type_message = "must be of type " + " or ".join(names)
        try:
            if "enum" in schema:
                values = schema["enum"]
                if not isinstance(values, (list, tuple)):
                    raise SchemaError(f"{loc}/enum must be an array")
                shown = ", ".join(_show(value) for value in values[:10])
                more = ", ..." if len(values) > 10 else ""
                generic.append(_equals_one_of(values, "enum", f"must be one of {shown}{more}"))
            if "const" in schema:
                message = f"must be {_show(schema['const'])}"
                generic.append(_equals_one_of([schema["const"]], "const", message))
        except _TooDeepError:
            raise SchemaError(f"{loc}: an enum or const value nests too deeply") from None

    def _applicators(
        self, schema: Mapping[str, Any], base: str, loc: str, depth: int, generic: list[_Check]
    ) -> None:
        """The in-place applicators (2020-12 Core §10.2, §8.2.3.1)."""
        if "$ref" in schema:
            generic.append(self._ref(schema, base, loc, depth))
        if "allOf" in schema:
            nodes = self._sub_list(schema, "allOf", base, loc, depth)
            generic.append(_all_of([_in_place(node) for node in nodes]))
        if "anyOf" in schema:
            generic.append(_any_of(self._sub_list(schema, "anyOf", base, loc, depth)))
        if "oneOf" in schema:
            generic.append(_one_of(self._sub_list(schema, "oneOf", base, loc, depth)))
        if "not" in schema:
            generic.append(_not(self._sub(schema, "not", base, loc, depth)))
        branches = {
            key: self._sub(schema, key, base, loc, depth)
            for key in ("if", "then", "else")
            if key in schema
        }
        if "if" in branches:  # Core §10.2.2.2-3: `then`/`else` without `if` do nothing
            generic.append(_if(branches["if"], branches.get("then"), branches.get("else")))

    def _numbers(self, schema: Mapping[str, Any], loc: str, checks: list[_Check]) -> None:
        """Validation §6.2 (draft-07 §6.2 spells them the same way)."""
        for keyword in ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"):
            limit = _number(schema, keyword, loc)
            if limit is not None:
                checks.append(_bound(keyword, limit))
        divisor = _number(schema, "multipleOf", loc)
        if divisor is not None:
            if divisor <= 0:
                raise SchemaError(f"{loc}/multipleOf must be greater than 0")
            checks.append(_multiple_of(divisor))

    def _strings(self, schema: Mapping[str, Any], loc: str, checks: list[_Check]) -> None:
        """Validation §6.3."""
        for keyword, at_most in (("maxLength", True), ("minLength", False)):
            limit = _count(schema, keyword, loc)
            if limit is not None:
                checks.append(_size(keyword, limit, at_most, "character"))
        if "pattern" in schema:
            source = schema["pattern"]
            checks.append(_pattern(_regex(source, f"{loc}/pattern"), source))

    def _arrays(
        self, schema: Mapping[str, Any], base: str, loc: str, depth: int, checks: list[_Check]
    ) -> None:
        """Core §10.3.1 and §11.2, Validation §6.4 (draft-07: Validation §6.4)."""
        prefix, rest, keyword = self._items(schema, base, loc, depth)
        if prefix or rest is not None:
            checks.append(_items(prefix, rest, keyword))
        # minContains/maxContains only qualify `contains` (Validation §6.4.4-5), and
        # draft-07 has neither: there `contains` means "at least one".
        least = None if self.draft7 else _count(schema, "minContains", loc)
        most = None if self.draft7 else _count(schema, "maxContains", loc)
        if "contains" in schema:
            node = self._sub(schema, "contains", base, loc, depth)
            checks.append(_contains(node, 1 if least is None else least, most))
        for key, at_most in (("maxItems", True), ("minItems", False)):
            limit = _count(schema, key, loc)
            if limit is not None:
                checks.append(_size(key, limit, at_most, "item"))
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise SchemaError(f"{loc}/uniqueItems must be a boolean")
        if unique:
            checks.append(_unique_items)
        if "unevaluatedItems" in schema and not self.draft7:
            # Last: it reads what every other keyword of this schema object evaluated.
            self.tracking = True
            checks.append(
                _unevaluated_items(self._sub(schema, "unevaluatedItems", base, loc, depth))
            )

    def _items(
        self, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> tuple[list[_Node], _Node | None, str]:
        """The positional item schemas, the schema of the rest, and the rest's keyword.

        2020-12 spells them ``prefixItems`` and ``items``; draft-07 ``items`` (an array)
        and ``additionalItems``.
        """
        prefix: list[_Node] = []
        rest: _Node | None = None
        if isinstance(schema.get("items"), (list, tuple)):
            if not self.draft7:
                raise SchemaError(
                    f"{loc}/items must be a schema in 2020-12: use prefixItems, "
                    "or declare draft-07 in $schema"
                )
            prefix = self._sub_list(schema, "items", base, loc, depth)
            if "additionalItems" in schema:
                rest = self._sub(schema, "additionalItems", base, loc, depth)
                return prefix, rest, "additionalItems"
            return prefix, None, "items"
        if "prefixItems" in schema and not self.draft7:
            prefix = self._sub_list(schema, "prefixItems", base, loc, depth)
        if "items" in schema:
            rest = self._sub(schema, "items", base, loc, depth)
        if "additionalItems" in schema and self.draft7:
            self._sub(schema, "additionalItems", base, loc, depth)  # ignored; still checked
        return prefix, rest, "items"

    def _objects(
        self, schema: Mapping[str, Any], base: str, loc: str, depth: int, checks: list[_Check]
    ) -> None:
        """Core §10.3.2 and §11.3, Validation §6.5 (draft-07: Validation §6.5)."""
        properties = {}
        if "properties" in schema:
            properties = self._sub_map(schema, "properties", base, loc, depth)
        patterns = []
        if "patternProperties" in schema:
            nodes = self._sub_map(schema, "patternProperties", base, loc, depth)
            where = f"{loc}/patternProperties"
            patterns = [(_regex(source, where), node) for source, node in nodes.items()]
        additional = None
        if "additionalProperties" in schema:
            additional = self._sub(schema, "additionalProperties", base, loc, depth)
        if patterns or additional is not None:
            checks.append(_members(properties, patterns, additional))
        elif properties:
            checks.append(_declared_properties(properties))
        if "propertyNames" in schema:
            checks.append(_property_names(self._sub(schema, "propertyNames", base, loc, depth)))
        if "required" in schema:
            checks.append(_required(_names(schema["required"], f"{loc}/required"), "required"))
        self._dependencies(schema, base, loc, depth, checks)
        for key, at_most in (("maxProperties", True), ("minProperties", False)):
            limit = _count(schema, key, loc)
            if limit is not None:
                checks.append(_size(key, limit, at_most, "property"))
        if "unevaluatedProperties" in schema and not self.draft7:
            # Last: it reads what every other keyword of this schema object evaluated.
            self.tracking = True
            node = self._sub(schema, "unevaluatedProperties", base, loc, depth)
            checks.append(_unevaluated_properties(node))

    def _dependencies(
        self, schema: Mapping[str, Any], base: str, loc: str, depth: int, checks: list[_Check]
    ) -> None:
        """``dependentRequired`` (Validation §6.5.4), ``dependentSchemas`` (Core §10.2.2.4).

        draft-07's ``dependencies`` (Validation §6.5.7) is either one, entry by entry.
        """
        names: dict[str, Any] = {}
        schemas: dict[str, Any] = {}
        if self.draft7:
            value = schema.get("dependencies", {})
            if not isinstance(value, Mapping):
                raise SchemaError(f"{loc}/dependencies must be an object")
            for name, entry in value.items():
                (names if isinstance(entry, (list, tuple)) else schemas)[name] = entry
            keyword, where = "dependencies", f"{loc}/dependencies"
        else:
            names = schema.get("dependentRequired", {})
            schemas = schema.get("dependentSchemas", {})
            if not isinstance(names, Mapping) or not isinstance(schemas, Mapping):
                raise SchemaError(f"{loc}: dependentRequired/dependentSchemas must be objects")
            keyword, where = "dependentRequired", f"{loc}/dependentRequired"
        required = [
            (
                name,
                _required(
                    _names(needs, f"{where}/{_escape(name)}"),
                    keyword,
                    f" (required when {_show(name)} is present)",
                ),
            )
            for name, needs in names.items()
        ]
        if required:
            checks.append(_dependent_required(required))
        key = "dependencies" if self.draft7 else "dependentSchemas"
        entries = [
            (name, self.compile(entry, base, f"{loc}/{key}/{_escape(name)}", depth + 1))
            for name, entry in schemas.items()
        ]
        if entries:
            checks.append(_dependent_schemas(entries))
