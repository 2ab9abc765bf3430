"""mcpcore.jsonschema: every keyword by example, the limits, and a differential fuzz.

The `jsonschema` package is the reference: example cases are cross-checked against it
(except where we deliberately differ, marked ``ours_only``), and hypothesis compares
the two on random schemas and instances.
"""

from __future__ import annotations

import ast
import dataclasses
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft7Validator, Draft202012Validator

from examples.everything import JSON_SCHEMA_2020_12
from mcpcore.jsonschema import (
    MAX_DEPTH,
    MAX_SUBSCHEMAS,
    MAX_VALUE_NESTING,
    InvalidInstance,
    SchemaError,
    ValidationIssue,
    Validator,
    check_schema,
)

DRAFT7 = "http://json-schema.org/draft-07/schema#"
D2020 = "https://json-schema.org/draft/2020-12/schema"


def verdict(schema: Any, instance: Any, **limits: int) -> bool:
    """Our answer, checking that `errors` and `is_valid` agree."""
    validator = Validator(schema, **limits)
    issues = validator.errors(instance)
    valid = validator.is_valid(instance)
    assert valid == (not issues), (schema, instance, issues)
    return valid


def reference(schema: Any, instance: Any) -> bool:
    draft7 = isinstance(schema, dict) and str(schema.get("$schema", "")).find("draft-07") >= 0
    cls = Draft7Validator if draft7 else Draft202012Validator
    return bool(cls(schema).is_valid(instance))


@dataclasses.dataclass
class Case:
    name: str
    schema: Any
    valid: list[Any]
    invalid: list[Any]
    ours_only: bool = False  # we deliberately differ from the reference here


CASES = [
    # -- type (Validation §6.1.1) ----------------------------------------------------------
    Case("string", {"type": "string"}, ["", "é"], [1, None, True, [], {}]),
    Case("integer", {"type": "integer"}, [1, -3, 1.0, -0.0, 10**30], [True, False, 1.5, "1"]),
    Case("number", {"type": "number"}, [1, 1.5, 1.0, -2], [True, False, "1", None]),
    Case("boolean", {"type": "boolean"}, [True, False], [0, 1, None, "true"]),
    Case("null", {"type": "null"}, [None], [0, False, "", []]),
    Case("array", {"type": "array"}, [[], [1]], [{}, "a", None]),
    Case("object", {"type": "object"}, [{}, {"a": 1}], [[], None, "{}"]),
    Case("type list", {"type": ["string", "null"]}, ["a", None], [1, False, []]),
    Case("number list", {"type": ["number"]}, [1, 2.5], [True]),
    Case("integer list", {"type": ["integer", "boolean"]}, [2.0, False], [2.5, "x"]),
    # -- enum and const (Validation §6.1.2-3): JSON equality ---------------------------------
    Case("enum", {"enum": [1, "a", None]}, [1, 1.0, "a", None], [True, "b", [1], 0]),
    Case("enum false", {"enum": [False]}, [False], [0, 0.0, None, []]),
    Case("enum true", {"enum": [True, "x"]}, [True, "x"], [1, 1.0]),
    Case(
        "enum nested",
        {"enum": [[1, {"a": False}]]},
        [[1, {"a": False}], [1.0, {"a": False}]],
        [[True, {"a": False}], [1, {"a": 0}], [{"a": False}, 1], [1]],
    ),
    Case("enum empty", {"enum": []}, [], [None, 1, "a"]),
    Case("const false", {"const": False}, [False], [0, 0.0, None, "", []]),
    Case("const 0", {"const": 0}, [0, 0.0, -0.0], [False, None, "0"]),
    Case("const 1.0", {"const": 1.0}, [1, 1.0], [True]),
    Case(
        "const object",
        {"const": {"a": [1, 2], "b": None}},
        [{"b": None, "a": [1, 2.0]}],
        [{"a": [2, 1], "b": None}, {"a": [1, 2]}, {"a": [1, 2], "b": None, "c": 1}],
    ),
    Case("const null", {"const": None}, [None], [False, 0, "null"]),
    # -- numbers (Validation §6.2) -----------------------------------------------------------
    Case("multipleOf int", {"multipleOf": 2}, [4, 4.0, -2, 0, "x", True], [3, 4.5, 1e-9]),
    Case("multipleOf half", {"multipleOf": 0.5}, [1.5, 2, 0], [1.25, 1.1]),
    Case("multipleOf tenth", {"multipleOf": 0.1}, [0.3, 1.7, 2], [0.35], ours_only=True),
    Case("multipleOf big", {"multipleOf": 3}, [3 * 10**40], [3 * 10**40 + 1]),
    Case("maximum", {"maximum": 3}, [3, 2.5, -10, "a", True], [3.5, 4]),
    Case("exclusiveMaximum", {"exclusiveMaximum": 3}, [2.9, 2], [3, 3.0, 4]),
    Case("minimum", {"minimum": 1.5}, [1.5, 2, None], [1, -2]),
    Case("exclusiveMinimum", {"exclusiveMinimum": 0}, [0.1, 1], [0, -0.0, -1]),
    Case("integer range", {"type": "integer", "minimum": 0, "maximum": 10}, [0, 10], [-1, 11, 5.5]),
    # -- strings (Validation §6.3): code points ----------------------------------------------
    Case("maxLength", {"maxLength": 2}, ["ab", "é€", "😀😀", "", 123], ["abc", "😀😀😀"]),
    Case("minLength", {"minLength": 2}, ["😀😀", "ab", 1], ["😀", "é", ""]),
    Case("maxLength 2.0", {"maxLength": 2.0}, ["ab"], ["abc"]),
    Case("pattern", {"pattern": "^a+$"}, ["aaa", 1, None], ["ab", "b", ""]),
    Case("pattern search", {"pattern": "b"}, ["abc", "b"], ["ac"]),
    Case("pattern class", {"pattern": "^[$a]+$"}, ["$a$"], ["b"]),
    Case("pattern end", {"pattern": "^a$"}, ["a"], ["a\n"], ours_only=True),
    Case("pattern digit", {"pattern": r"^\d+$"}, ["123"], ["١٢٣"], ours_only=True),
    Case("pattern word", {"pattern": r"^\w+$"}, ["ab_1"], ["é"], ours_only=True),
    Case("named group", {"pattern": r"^(?<x>a)\k<x>$"}, ["aa"], ["ab"], ours_only=True),
    Case("escaped dollar", {"pattern": r"^a\$$"}, ["a$"], ["a"]),
    # -- arrays (Core §10.3.1, Validation §6.4) ----------------------------------------------
    Case("maxItems", {"maxItems": 1}, [[], [1], "ab"], [[1, 2]]),
    Case("minItems", {"minItems": 1}, [[1], {}], [[]]),
    Case(
        "uniqueItems",
        {"uniqueItems": True},
        [[1, True], [0, False], [[1], [True]], [{"a": 1}, {"a": True}], [1, "1"], [], "x"],
        [[1, 1.0], [[1], [1.0]], [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [None, None], [1, 2, 1]],
    ),
    Case("uniqueItems false", {"uniqueItems": False}, [[1, 1]], []),
    Case("items", {"items": {"type": "integer"}}, [[], [1, 2], "x"], [[1, "2"]]),
    Case(
        "prefixItems",
        {"prefixItems": [{"type": "string"}, {"type": "integer"}]},
        [[], ["a"], ["a", 1], ["a", 1, None]],
        [[1], ["a", "b"]],
    ),
    Case(
        "prefixItems closed",
        {"prefixItems": [{"type": "string"}], "items": False},
        [[], ["a"]],
        [["a", 1], [1]],
    ),
    Case(
        "prefixItems then items",
        {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
        [["a", 1, 2]],
        [["a", "b"]],
    ),
    Case("contains", {"contains": {"type": "string"}}, [["a"], [1, "a"], {}], [[], [1, 2]]),
    Case(
        "minContains",
        {"contains": {"const": 1}, "minContains": 2},
        [[1, 1], [1, 2, 1.0]],
        [[1], [1, 2]],
    ),
    Case(
        "maxContains",
        {"contains": {"const": 1}, "maxContains": 1},
        [[1], [1, 2]],
        [[1, 1], [2]],
    ),
    Case("minContains 0", {"contains": {"const": 1}, "minContains": 0}, [[], [2]], []),
    Case("maxContains alone", {"maxContains": 0}, [[1]], []),
    # -- objects (Core §10.3.2, Validation §6.5) ---------------------------------------------
    Case("maxProperties", {"maxProperties": 1}, [{}, {"a": 1}, [1, 2]], [{"a": 1, "b": 2}]),
    Case("minProperties", {"minProperties": 1}, [{"a": 1}, []], [{}]),
    Case("required", {"required": ["a", "b"]}, [{"a": 1, "b": None}, [], "a"], [{"a": 1}, {}]),
    Case(
        "dependentRequired",
        {"dependentRequired": {"card": ["billing"]}},
        [{}, {"billing": 1}, {"card": 1, "billing": 2}],
        [{"card": 1}],
    ),
    Case(
        "properties",
        {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
        [{}, {"a": "x"}, {"a": "x", "b": 1, "c": None}, []],
        [{"a": 1}, {"b": "x"}],
    ),
    Case(
        "patternProperties",
        {"patternProperties": {"^x-": {"type": "string"}}},
        [{"x-a": "s", "y": 1}],
        [{"x-a": 1}],
    ),
    Case(
        "additionalProperties false",
        {
            "properties": {"a": True},
            "patternProperties": {"^x": True},
            "additionalProperties": False,
        },
        [{"a": 1, "xy": 2}, {}],
        [{"b": 1}, {"a": 1, "yx": 2}],
    ),
    Case(
        "additionalProperties schema",
        {"properties": {"a": True}, "additionalProperties": {"type": "integer"}},
        [{"a": "s", "b": 1}],
        [{"b": "s"}],
    ),
    Case(
        "propertyNames",
        {"propertyNames": {"maxLength": 2, "pattern": "^[a-z]+$"}},
        [{}, {"ab": 1}, [1]],
        [{"abc": 1}, {"A": 1}],
    ),
    Case("propertyNames false", {"propertyNames": False}, [{}], [{"a": 1}]),
    # -- composition (Core §10.2) ------------------------------------------------------------
    Case(
        "allOf",
        {"allOf": [{"type": "integer"}, {"minimum": 2}]},
        [2, 3],
        [1, "a", 2.5],
    ),
    Case("anyOf", {"anyOf": [{"type": "string"}, {"minimum": 2}]}, ["a", 3], [1]),
    Case(
        "oneOf",
        {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
        [1, 2.5],
        [3, 1.5],
    ),
    Case("not", {"not": {"type": "string"}}, [1, None], ["a"]),
    Case(
        "if then else",
        {"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}},
        [1, "a"],
        [-1, None],
    ),
    Case("if then", {"if": {"type": "integer"}, "then": {"minimum": 0}}, [1, None], [-1]),
    Case("if else", {"if": {"type": "integer"}, "else": {"type": "string"}}, [-1, "a"], [None]),
    Case("then without if", {"then": False, "else": False}, [1], []),
    Case(
        "dependentSchemas",
        {"dependentSchemas": {"card": {"required": ["billing"]}}},
        [{}, {"card": 1, "billing": 1}],
        [{"card": 1}],
    ),
    # -- boolean schemas (Core §4.3.2) -------------------------------------------------------
    Case("true", True, [None, 1, {}, []], []),
    Case("false", False, [], [None, 1, {}, []]),
    Case("false property", {"properties": {"a": False}}, [{}, {"b": 1}], [{"a": None}]),
    # -- $ref (Core §8.2.3.1) ----------------------------------------------------------------
    Case(
        "ref defs",
        {"$defs": {"pos": {"type": "integer", "minimum": 1}}, "items": {"$ref": "#/$defs/pos"}},
        [[1, 2]],
        [[0], ["a"]],
    ),
    Case(
        "ref anchor",
        {"$defs": {"pos": {"$anchor": "positive", "minimum": 1}}, "$ref": "#positive"},
        [1],
        [0],
    ),
    Case(
        "ref pointer escapes",
        {
            "$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}, "e%f": {"minimum": 5}},
            "properties": {
                "x": {"$ref": "#/$defs/a~1b"},
                "y": {"$ref": "#/$defs/c~0d"},
                "z": {"$ref": "#/$defs/e%25f"},
            },
        },
        [{"x": 1, "y": "s", "z": 7}],
        [{"x": "s"}, {"y": 1}, {"z": 1}],
    ),
    Case(
        "ref into array",
        {
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": {"$ref": "#/prefixItems/1"},
        },
        [["a", 1, 2]],
        [["a", 1, "b"]],
    ),
    Case(
        "ref with siblings",
        {"$defs": {"int": {"type": "integer"}}, "$ref": "#/$defs/int", "minimum": 5},
        [5],
        [4, "a"],
    ),
    Case(
        "ref to root",
        {"properties": {"child": {"$ref": "#"}}, "required": ["v"]},
        [{"v": 1}, {"v": 1, "child": {"v": 2, "child": {"v": 3}}}],
        [{"v": 1, "child": {}}, {"v": 1, "child": {"v": 1, "child": {}}}],
    ),
    Case(
        "recursive tree",
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "required": ["value"],
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    },
                    "additionalProperties": False,
                }
            },
            "$ref": "#/$defs/node",
        },
        [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}],
        [{"value": 1, "children": [{"value": "x"}]}, {"value": 1, "children": [{}]}],
    ),
    Case(
        "embedded id",
        {
            "$id": "https://example.com/root.json",
            "$defs": {"item": {"$id": "item.json", "type": "integer"}},
            "items": {"$ref": "item.json"},
            "properties": {"x": {"$ref": "https://example.com/root.json#/$defs/item"}},
        },
        [[1, 2], {"x": 1}],
        [["a"], {"x": "a"}],
    ),
    Case(
        "anchor in embedded resource",
        {
            "$id": "https://example.com/root.json",
            "$defs": {"item": {"$id": "other/item.json", "$anchor": "it", "type": "integer"}},
            "$ref": "other/item.json#it",
        },
        [1],
        ["a"],
    ),
    Case(
        "relative base",
        {"$id": "tool.json", "$defs": {"a": {"type": "string"}}, "items": {"$ref": "#/$defs/a"}},
        [["a"]],
        [[1]],
        ours_only=True,  # the reference needs an absolute base to resolve against
    ),
    # -- unevaluated* (Core §11), by annotation --------------------------------------------
    Case(
        "unevaluatedProperties",
        {"properties": {"a": True}, "unevaluatedProperties": False},
        [{"a": 1}, {}],
        [{"b": 1}],
    ),
    Case(
        "unevaluatedProperties through allOf",
        {"allOf": [{"properties": {"a": True}}], "unevaluatedProperties": False},
        [{"a": 1}],
        [{"a": 1, "b": 2}],
    ),
    Case(
        "unevaluatedProperties through ref",
        {
            "$defs": {"base": {"properties": {"a": True}}},
            "$ref": "#/$defs/base",
            "properties": {"b": True},
            "unevaluatedProperties": False,
        },
        [{"a": 1, "b": 2}],
        [{"c": 1}],
    ),
    Case(
        "unevaluatedProperties failed branch",
        {
            "anyOf": [{"properties": {"a": True}, "required": ["a"]}, {"required": ["b"]}],
            "unevaluatedProperties": False,
        },
        [{"a": 1}],
        [{"b": 1}, {"a": 1, "c": 1}],
    ),
    Case(
        "unevaluatedProperties if",
        {"if": {"properties": {"a": {"const": 1}}}, "unevaluatedProperties": False},
        [{"a": 1}, {}],
        [{"a": 2}],
    ),
    Case(
        "unevaluatedProperties not adjacent in subschema",
        {
            "properties": {"a": True},
            "allOf": [{"unevaluatedProperties": False}],
        },
        [{}],
        [{"a": 1}],
    ),
    Case(
        "unevaluatedProperties ignores a failed branch",
        {
            "anyOf": [{"properties": {"b": True, "x": True}, "required": ["x"]}, True],
            "unevaluatedProperties": False,
        },
        [{}, {"x": 1, "b": 2}],
        [{"b": 2}],
    ),
    Case(
        "unevaluatedProperties ignores nested objects",
        {"properties": {"a": {"properties": {"b": True}}}, "unevaluatedProperties": False},
        [{"a": {"b": 1}}],
        [{"a": {"b": 1}, "b": 2}],
    ),
    Case(
        "unevaluatedItems ignores nested arrays",
        {"prefixItems": [{"prefixItems": [True, True]}], "unevaluatedItems": False},
        [[[1, 2]]],
        [[[1, 2], 3]],
    ),
    Case(
        "unevaluatedProperties schema",
        {"patternProperties": {"^x": True}, "unevaluatedProperties": {"type": "integer"}},
        [{"xa": "s", "b": 1}],
        [{"b": "s"}],
    ),
    Case(
        "unevaluatedProperties nested",
        {"properties": {"o": {"unevaluatedProperties": False}}, "unevaluatedProperties": False},
        [{"o": {}}],
        [{"o": {"a": 1}}, {"p": 1}],
    ),
    Case(
        "unevaluatedItems",
        {"prefixItems": [{"type": "string"}], "unevaluatedItems": False},
        [["a"], []],
        [["a", 1]],
    ),
    Case(
        "unevaluatedItems contains",
        {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
        [["a", 1, "b"]],
        [["a", None]],
    ),
    Case(
        "unevaluatedItems oneOf",
        {
            "oneOf": [{"prefixItems": [True, True]}, {"items": {"type": "string"}}],
            "unevaluatedItems": False,
        },
        [[1, 2]],
        [[1, 2, 3]],
    ),
    Case(
        "unevaluatedItems items",
        {"allOf": [{"items": True}], "unevaluatedItems": False},
        [[1, 2]],
        [],
    ),
    # -- ignored keywords (Core §4.3.1; format is an annotation in 2020-12) -------------------
    Case(
        "annotations",
        {
            "title": "t",
            "description": "d",
            "default": 3,
            "examples": [1],
            "deprecated": True,
            "readOnly": True,
            "writeOnly": False,
            "$comment": "c",
            "x-mcp-header": "X-Thing",
            "format": "email",
            "contentEncoding": "base64",
            "unknownKeyword": {"type": "string"},
        },
        ["not an email", 1],
        [],
    ),
    # -- draft-07 (where it differs in what tools use) ---------------------------------------
    Case(
        "draft-07 items array",
        {"$schema": DRAFT7, "items": [{"type": "string"}, {"type": "integer"}]},
        [["a", 1], ["a", 1, None], []],
        [[1], ["a", "b"]],
    ),
    Case(
        "draft-07 additionalItems",
        {"$schema": DRAFT7, "items": [{"type": "string"}], "additionalItems": False},
        [["a"]],
        [["a", 1]],
    ),
    Case(
        "draft-07 additionalItems schema",
        {"$schema": DRAFT7, "items": [True], "additionalItems": {"type": "integer"}},
        [["a", 1]],
        [["a", "b"]],
    ),
    Case(
        "draft-07 additionalItems ignored",
        {"$schema": DRAFT7, "items": {"type": "integer"}, "additionalItems": False},
        [[1, 2]],
        [["a"]],
    ),
    Case(
        "draft-07 definitions",
        {
            "$schema": DRAFT7,
            "definitions": {"s": {"type": "string"}},
            "items": {"$ref": "#/definitions/s"},
        },
        [["a"]],
        [[1]],
    ),
    Case(
        "draft-07 dependencies",
        {"$schema": DRAFT7, "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
        [{}, {"a": 1, "b": 1}, {"c": 1, "d": 1}],
        [{"a": 1}, {"c": 1}],
    ),
    Case(
        "draft-07 ref siblings ignored",
        {
            "$schema": DRAFT7,
            "definitions": {"i": {"type": "integer"}},
            "$ref": "#/definitions/i",
            "minimum": 5,
        },
        [1, 7],
        ["a"],
    ),
    Case(
        "draft-07 id anchor",
        {
            "$schema": DRAFT7,
            "definitions": {"s": {"$id": "#str", "type": "string"}},
            "items": {"$ref": "#str"},
        },
        [["a"]],
        [[1]],
    ),
    Case(
        "draft-07 ignores 2020 keywords",
        {"$schema": DRAFT7, "prefixItems": [False], "unevaluatedProperties": False},
        [[1], {"a": 1}],
        [],
    ),
    Case(
        "draft-07 contains",
        {"$schema": DRAFT7, "contains": {"const": 1}, "minContains": 2},
        [[1]],
        [[2]],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_keyword(case: Case) -> None:
    for instance in case.valid:
        assert verdict(case.schema, instance), instance
    for instance in case.invalid:
        assert not verdict(case.schema, instance), instance


@pytest.mark.parametrize("case", [c for c in CASES if not c.ours_only], ids=lambda c: c.name)
def test_keyword_cases_agree_with_the_reference(case: Case) -> None:
    for instance in case.valid:
        assert reference(case.schema, instance), instance
    for instance in case.invalid:
        assert not reference(case.schema, instance), instance


# -- the conformance suite's tool schema ------------------------------------------------

# The schema the everything example publishes for the suite's json_schema_2020_12_tool.
CONFORMANCE = JSON_SCHEMA_2020_12

CONFORMANCE_VALID = [
    {"name": "Ada", "contactMethod": "phone", "phone": "555"},
    {"contactMethod": "email", "email": "a@b.c"},
    {"contactMethod": "email", "email": "a@b.c", "address": {"street": "1 Main", "city": "X"}},
    # No contactMethod: `if` holds vacuously, so `then` asks for a phone.
    {"phone": "555"},
    {"phone": "555", "email": "a@b.c", "address": {}},
]
CONFORMANCE_INVALID = [
    ({}, {("", "required"), ("", "anyOf")}),
    ({"contactMethod": "phone", "email": "a@b.c"}, {("", "required")}),
    ({"contactMethod": "email", "phone": "555"}, {("", "required")}),
    ({"contactMethod": "fax", "phone": "1", "email": "2"}, {("/contactMethod", "enum")}),
    ({"phone": "1", "address": {"city": 7}}, {("/address/city", "type")}),
    ({"phone": "1", "address": "Main St"}, {("/address", "type")}),
    ({"phone": "1", "nickname": "x"}, {("/nickname", "additionalProperties")}),
    ({"phone": 555}, {("/phone", "type")}),
    ("not an object", {("", "type")}),
]


@pytest.mark.parametrize("instance", CONFORMANCE_VALID)
def test_conformance_schema_accepts(instance: dict[str, Any]) -> None:
    validator = Validator(CONFORMANCE)
    assert validator.errors(instance) == []
    assert Draft202012Validator(CONFORMANCE).is_valid(instance)


@pytest.mark.parametrize(("instance", "expected"), CONFORMANCE_INVALID)
def test_conformance_schema_rejects(instance: Any, expected: set[tuple[str, str]]) -> None:
    issues = Validator(CONFORMANCE).errors(instance)
    assert {(issue.path, issue.keyword) for issue in issues} >= expected
    assert not Draft202012Validator(CONFORMANCE).is_valid(instance)


def test_conformance_schema_anchor_is_usable() -> None:
    properties = {**CONFORMANCE["properties"], "home": {"$ref": "#addressDef"}}
    validator = Validator({**CONFORMANCE, "properties": properties})
    issues = validator.errors({"phone": "1", "home": {"city": 1}})
    assert [(i.path, i.keyword) for i in issues] == [("/home/city", "type")]


# -- issues -------------------------------------------------------------------------------


def test_issues_point_into_the_instance() -> None:
    schema = {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["zip"],
            },
            "tags": {"type": "array", "items": {"type": "string"}},
            "a/b~c": {"type": "integer"},
        },
    }
    issues = Validator(schema).errors({"address": {"city": 3}, "tags": ["x", 2], "a/b~c": "s"})
    assert issues == [
        ValidationIssue("/address/city", "type", "must be of type string"),
        ValidationIssue("/address", "required", 'missing required property "zip"'),
        ValidationIssue("/tags/1", "type", "must be of type string"),
        ValidationIssue("/a~1b~0c", "type", "must be of type integer"),
    ]


def test_messages_are_short_and_quote_the_schema_not_the_instance() -> None:
    secret = "hunter2-secret"
    schema = {
        "type": "object",
        "properties": {
            "a": {"enum": ["x", "y"]},
            "b": {"const": 3},
            "c": {"maximum": 5},
            "d": {"pattern": "^[a-z]+$"},
            "e": {"maxLength": 2},
            "f": {"type": ["string", "null"]},
            "g": {"uniqueItems": True},
            "h": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "i": {"oneOf": [{"type": "string"}, {"maxLength": 100}]},
            "j": {"not": {"type": "string"}},
            "k": {"multipleOf": 2},
            "l": {"contains": {"const": secret}},
        },
        "additionalProperties": False,
        "dependentRequired": {"a": ["z"]},
    }
    instance = {
        "a": secret,
        "b": secret,
        "c": 6,
        "d": secret.upper(),
        "e": secret,
        "f": 1,
        "g": [secret, secret],
        "h": 1,
        "i": secret,
        "j": secret,
        "k": 3,
        "l": [],
        secret: 1,
    }
    issues = Validator(schema).errors(instance)
    messages = {issue.keyword: issue.message for issue in issues}
    assert messages == {
        "enum": 'must be one of "x", "y"',
        "const": "must be 3",
        "maximum": "must be <= 5",
        "pattern": 'must match the pattern "^[a-z]+$"',
        "maxLength": "must have at most 2 characters",
        "type": "must be of type string or null",
        "uniqueItems": "must not contain duplicates (items 0 and 1 are equal)",
        "anyOf": "must match at least one of 2 schemas",
        "oneOf": "must match exactly one of 2 schemas (matched more than one)",
        "not": "must not match the schema in 'not'",
        "multipleOf": "must be a multiple of 2",
        "contains": "must contain at least 1 item matching 'contains'",
        "additionalProperties": "is not allowed (no additional properties)",
        "dependentRequired": 'missing required property "z" (required when "a" is present)',
    }
    for issue in issues:
        assert issue.path == "" or issue.path.startswith("/")
        if issue.keyword != "additionalProperties":
            assert secret not in issue.message
    assert str(issues[0]) == f"{issues[0].path}: {issues[0].message}"
    assert str(ValidationIssue("", "type", "m")) == "/: m"


def test_validate_raises_with_the_issues() -> None:
    validator = Validator({"type": "object", "required": ["a", "b", "c", "d", "e", "f"]})
    validator.validate({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1})
    with pytest.raises(InvalidInstance) as caught:
        validator.validate({})
    assert len(caught.value.issues) == 6
    assert isinstance(caught.value, ValueError)
    assert "(and 1 more)" in str(caught.value)
    issue = caught.value.issues[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        issue.path = "/x"  # type: ignore[misc]
    assert issue == ValidationIssue("", "required", 'missing required property "a"')
    assert hash(issue) == hash(ValidationIssue("", "required", 'missing required property "a"'))


def test_is_valid_and_errors_on_odd_instances() -> None:
    validator = Validator({"type": ["object", "array", "string", "number", "null", "boolean"]})
    assert not validator.is_valid({1, 2})
    assert not validator.is_valid(b"bytes")
    assert validator.is_valid(MappingProxyType({"a": 1}))
    assert validator.is_valid((1, 2))
    assert Validator({"uniqueItems": True}).errors([{1}, {1}]) == []
    assert not Validator({"enum": [[1, 2]]}).is_valid({1, 2})


def test_the_validator_reports_its_dialect_and_accepts_mappings() -> None:
    assert Validator({}).dialect == "2020-12"
    assert Validator(True).dialect == "2020-12"
    assert Validator(MappingProxyType({"type": "string"})).is_valid("a")
    for uri in (
        D2020,
        D2020 + "#",
    ):
        assert Validator({"$schema": uri}).dialect == "2020-12"
    for uri in (
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft-07/schema",
    ):
        assert Validator({"$schema": uri}).dialect == "draft-07"


def test_the_draft_07_dialect_follows_its_own_rules_for_arrays() -> None:
    with pytest.raises(SchemaError, match="prefixItems"):
        Validator({"items": [{"type": "string"}]})
    assert Validator({"$schema": DRAFT7, "items": [{"type": "string"}]}).is_valid(["a", 1])
    issues = Validator({"$schema": DRAFT7, "items": [True], "additionalItems": False}).errors(
        [1, 2]
    )
    assert [(i.path, i.keyword) for i in issues] == [("", "additionalItems")]


# -- schema errors -------------------------------------------------------------------------

BAD_SCHEMAS = {
    "draft-04": {"$schema": "http://json-schema.org/draft-04/schema#"},
    "2019-09": {"$schema": "https://json-schema.org/draft/2019-09/schema"},
    "http 2020-12": {"$schema": "http://json-schema.org/draft/2020-12/schema"},
    "garbage dialect": {"$schema": "nonsense"},
    "dialect not a string": {"$schema": 7},
    "mixed dialects": {"properties": {"a": {"$schema": DRAFT7}}},
    "network ref": {"$ref": "https://example.com/schema.json"},
    "network ref in defs": {"$defs": {"x": {"$ref": "http://evil.example/x#/a"}}},
    "relative external ref": {"$ref": "other.json#/x"},
    "metaschema ref": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
    "external ref beside id": {"$id": "https://example.com/a.json", "$ref": "b.json"},
    "dangling pointer": {"$ref": "#/$defs/missing"},
    "pointer past array": {"prefixItems": [True], "items": {"$ref": "#/prefixItems/1"}},
    "pointer leading zero": {"prefixItems": [True], "items": {"$ref": "#/prefixItems/00"}},
    "pointer to non-schema": {"required": ["a"], "items": {"$ref": "#/required/0"}},
    "missing anchor": {"$ref": "#nowhere"},
    "ref not a string": {"$ref": 3},
    "dynamicRef": {"$dynamicRef": "#meta"},
    "id with fragment": {"$id": "https://example.com/a.json#frag"},
    "id not a string": {"$id": 1},
    "bad anchor": {"$anchor": "1bad"},
    "duplicate anchor": {"$defs": {"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}},
    "duplicate id": {"$defs": {"a": {"$id": "https://e.x/a"}, "b": {"$id": "https://e.x/a"}}},
    "schema a string": {"properties": {"a": "string"}},
    "schema a number": {"not": 1},
    "schema null": {"items": None},
    "type unknown": {"type": "str"},
    "type empty": {"type": []},
    "type number": {"type": 3},
    "type any": {"type": "any"},
    "enum not array": {"enum": "a"},
    "multipleOf zero": {"multipleOf": 0},
    "multipleOf negative": {"multipleOf": -2},
    "multipleOf bool": {"multipleOf": True},
    "maximum string": {"maximum": "3"},
    "minimum bool": {"minimum": False},
    "exclusiveMaximum draft-04 style": {"exclusiveMaximum": True},
    "maxLength negative": {"maxLength": -1},
    "maxLength fraction": {"maxLength": 1.5},
    "maxLength bool": {"maxLength": True},
    "minItems string": {"minItems": "1"},
    "minContains negative": {"contains": True, "minContains": -1},
    "maxContains without contains": {"maxContains": "1"},
    "pattern invalid": {"pattern": "("},
    "pattern not a string": {"pattern": 3},
    "pattern bad repeat": {"pattern": "a{2,1}"},
    "patternProperties invalid": {"patternProperties": {"[": True}},
    "required string": {"required": "a"},
    "required numbers": {"required": [1]},
    "properties array": {"properties": []},
    "allOf empty": {"allOf": []},
    "anyOf object": {"anyOf": {}},
    "prefixItems empty": {"prefixItems": []},
    "uniqueItems string": {"uniqueItems": "yes"},
    "dependentRequired string": {"dependentRequired": {"a": "b"}},
    "dependentSchemas array": {"dependentSchemas": []},
    "draft-07 dependencies array": {"$schema": DRAFT7, "dependencies": []},
    "bad def unused": {"$defs": {"unused": {"type": "strin"}}},
}


@pytest.mark.parametrize("schema", BAD_SCHEMAS.values(), ids=BAD_SCHEMAS.keys())
def test_unusable_schemas_are_schema_errors(schema: Any) -> None:
    with pytest.raises(SchemaError):
        Validator(schema)
    with pytest.raises(SchemaError):
        check_schema(schema)


def test_schema_errors_say_where_and_why() -> None:
    with pytest.raises(SchemaError, match=r"unsupported dialect"):
        Validator({"$schema": "https://json-schema.org/draft/2019-09/schema"})
    with pytest.raises(SchemaError, match=r"^#/properties/a/\$ref: .*never fetched"):
        Validator({"properties": {"a": {"$ref": "https://example.com/x.json"}}})
    with pytest.raises(SchemaError, match=r"^#/properties/age/minimum must be a number"):
        Validator({"properties": {"age": {"minimum": "0"}}})
    with pytest.raises(SchemaError, match=r"^#/\$defs/a~1b/pattern"):
        Validator({"$defs": {"a/b": {"pattern": "("}}})
    with pytest.raises(SchemaError, match=r"unsupported keyword"):
        Validator({"$dynamicRef": "#x"})
    check_schema(CONFORMANCE)
    assert issubclass(SchemaError, ValueError)


def test_a_schema_that_is_neither_object_nor_bool_is_rejected() -> None:
    for schema in (None, 1, "string", [True]):
        with pytest.raises(SchemaError):
            Validator(schema)  # type: ignore[arg-type]


# -- nothing is ever fetched -------------------------------------------------------------

PACKAGE = Path(__file__).parents[2] / "mcpcore" / "jsonschema"
NETWORK_MODULES = {"socket", "ssl", "http", "urllib.request", "requests", "httpx", "asyncio"}


# Pure standard library, none of it able to do IO: `urllib.parse` only splits strings.
ALLOWED_IMPORTS = {
    *("__future__", "collections.abc", "dataclasses", "decimal", "fractions", "json"),
    *("math", "operator", "re", "typing", "urllib.parse"),
}


def test_the_module_imports_only_pure_standard_library() -> None:
    sources = sorted(PACKAGE.rglob("*.py")) or [PACKAGE.with_suffix(".py")]
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert module in ALLOWED_IMPORTS or module.startswith("mcpcore.jsonschema"), (
                    path,
                    module,
                )


def test_importing_and_refusing_a_network_ref_loads_no_network_module() -> None:
    probe = (
        "import sys\n"
        "import mcpcore\n"
        "before = set(sys.modules)\n"
        "from mcpcore.jsonschema import SchemaError, Validator\n"
        "try:\n"
        "    Validator({'$ref': 'https://example.com/schema.json'})\n"
        "except SchemaError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('no SchemaError')\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert not set(loaded) & NETWORK_MODULES, loaded


def test_an_external_ref_never_opens_a_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for ref in ("https://example.com/s.json", "http://127.0.0.1:9/x", "//example.com/a"):
        with pytest.raises(SchemaError, match="never fetched"):
            Validator({"properties": {"a": {"$ref": ref}}})


# -- limits ---------------------------------------------------------------------------------


def only_limit(issues: list[ValidationIssue]) -> ValidationIssue:
    assert len(issues) == 1, issues
    assert issues[0].keyword == "limit"
    return issues[0]


def tree(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"value": 0}
    for _ in range(levels):
        node = {"value": 0, "children": [node]}
    return node


TREE = CASES[[case.name for case in CASES].index("recursive tree")].schema


def test_a_ref_cycle_without_progress_is_a_limit_not_a_crash() -> None:
    for schema in (
        {"$ref": "#"},
        {"allOf": [{"$ref": "#"}]},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
    ):
        validator = Validator(schema)
        assert "nesting limit" in only_limit(validator.errors(1)).message
        assert not validator.is_valid(1)
        with pytest.raises(InvalidInstance):
            validator.validate(1)


def test_recursive_schemas_validate_trees_up_to_the_depth_limit() -> None:
    validator = Validator(TREE)
    assert validator.errors(tree(30)) == []
    issue = only_limit(validator.errors(tree(200)))
    assert issue.path.startswith("/children/0/children/0")
    assert not validator.is_valid(tree(200))
    assert Validator(TREE, max_depth=1000).errors(tree(100)) == []
    # Past what Python's stack holds, a raised max_depth still ends in a "limit" issue.
    only_limit(Validator(TREE, max_depth=100_000).errors(tree(2000)))
    assert not Validator(TREE, max_depth=100_000).is_valid(tree(2000))


def test_max_depth_counts_nested_evaluation() -> None:
    schema = {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}}
    assert Validator(schema, max_depth=3).errors({"a": {"b": 1}}) == []
    issue = only_limit(Validator(schema, max_depth=2).errors({"a": {"b": 1}}))
    assert issue.path == "/a/b"
    assert Validator(schema, max_depth=2).errors({"a": {}}) == []


def test_the_step_budget_stops_exponential_composition() -> None:
    # Each level doubles the work: 2**40 evaluations without a budget.
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 2} for i in range(40)
    }
    defs["l40"] = {"type": "string"}
    validator = Validator({"$defs": defs, "$ref": "#/$defs/l0"})
    # Without the budget this never returns (the suite's timeout would end it): the limit
    # issue proves the evaluation was cut by the count of keyword evaluations.
    issue = only_limit(validator.errors(1))
    assert not validator.is_valid(1)
    assert "keyword evaluations" in issue.message
    assert validator.is_valid("s")  # anyOf stops at the first valid branch


def test_max_steps_is_per_call() -> None:
    schema = {"items": {"type": "integer"}}
    validator = Validator(schema, max_steps=10)
    assert validator.errors([1] * 5) == []
    assert validator.errors([1] * 5) == []
    only_limit(validator.errors([1] * 50))
    assert Validator(schema).errors([1] * 50) == []


def test_deep_values_compared_by_value_are_a_limit() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    only_limit(Validator({"uniqueItems": True}).errors([deep, 1]))
    only_limit(Validator({"const": [[1]]}).errors(deep))
    only_limit(Validator({"enum": [[1]]}).errors(deep))
    assert Validator({"type": "array"}).errors(deep) == []
    shallow: Any = 1
    for _ in range(MAX_VALUE_NESTING - 1):
        shallow = [shallow]
    assert Validator({"const": shallow}).is_valid(shallow)
    with pytest.raises(SchemaError, match="too deeply"):
        Validator({"const": deep})


def test_compiling_is_bounded() -> None:
    nested: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH + 5):
        nested = {"properties": {"a": nested}}
    with pytest.raises(SchemaError, match="nests deeper"):
        Validator(nested)
    ok: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH - 1):
        ok = {"properties": {"a": ok}}
    Validator(ok)
    wide = {"properties": {f"p{i}": {"type": "string"} for i in range(MAX_SUBSCHEMAS + 1)}}
    with pytest.raises(SchemaError, match="more than"):
        Validator(wide)
    very_deep: Any = True
    for _ in range(20_000):
        very_deep = {"not": very_deep}
    with pytest.raises(SchemaError):
        Validator(very_deep, max_depth=100_000)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Validator({}, max_depth=0)
    with pytest.raises(ValueError, match="positive"):
        Validator({}, max_steps=0)


# -- differential testing against the reference -----------------------------------------

NAMES = ("a", "b", "c")
KEYS = ("a", "b", "c", "d")
ALPHABET = "abé"  # no newline: Python's `$` matches before one, the reference uses Python
# Hypothesis favours the first choice: the subtle types lead.
TYPES = ("integer", "number", "boolean", "object", "array", "string", "null")
NUMBERS = (-1, 0, 1, 2, 3, 0.5, 1.0, 1.5, 2.5, -0.5, 0.0)
# Only finite binary fractions for multipleOf: the reference divides floats.
DIVISORS = (1, 2, 3, 0.5, 0.25, 1.5)
# Patterns without \d, \w, \s or \b: we read those as ECMA-262 (ASCII), the reference not.
PATTERNS = ("^a", "b$", "^[ab]*$", "é", "^.{2}$", "a|b", "^$", "a.?b", "(ab)+")

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NUMBERS),
    st.text(ALPHABET, max_size=3),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    ),
    max_leaves=6,
)
DEFS = {
    "s": {"type": "string", "minLength": 1},
    "n": {"$anchor": "num", "type": "number", "minimum": 0},
    "pair": {"prefixItems": [{"$ref": "#/$defs/s"}, {"$ref": "#num"}]},
    "props": {"properties": {"a": True}, "patternProperties": {"^b": {"type": "integer"}}},
    "head": {"prefixItems": [True], "contains": {"type": "string"}},
}
REFS = ("#/$defs/s", "#num", "#/$defs/pair", "#/$defs/props", "#/$defs/head")
Keyword = st.SearchStrategy[tuple[str, Any]]


# Each schema draws its keywords mostly from one family, as real schemas do: mixing
# them at random makes nearly every instance fail for a trivial reason.
SIMPLE = st.one_of(
    st.booleans(),
    st.builds(lambda kind: {"type": kind}, st.sampled_from(TYPES)),
    st.builds(lambda value: {"const": value}, SCALARS),
    st.builds(lambda bound: {"minimum": bound}, st.sampled_from(NUMBERS)),
)


def object_keywords(sub: st.SearchStrategy[Any], descend: st.SearchStrategy[Any]) -> list[Keyword]:
    names = st.sampled_from(NAMES)
    name_lists = st.lists(names, min_size=1, max_size=2, unique=True)
    return [
        st.tuples(st.just("type"), st.just("object")),
        st.tuples(st.just("properties"), st.dictionaries(names, descend, min_size=1, max_size=3)),
        st.tuples(
            st.just("patternProperties"),
            st.dictionaries(st.sampled_from(["^a", "b", "^c$"]), sub, min_size=1, max_size=2),
        ),
        st.tuples(st.just("additionalProperties"), descend),
        st.tuples(st.sampled_from(["unevaluatedProperties", "propertyNames"]), sub),
        st.tuples(st.just("required"), name_lists),
        st.tuples(
            st.just("dependentRequired"), st.dictionaries(names, name_lists, min_size=1, max_size=2)
        ),
        st.tuples(st.just("dependentSchemas"), st.dictionaries(names, sub, min_size=1, max_size=2)),
        st.tuples(st.sampled_from(["minProperties", "maxProperties"]), st.integers(0, 3)),
    ]


def array_keywords(sub: st.SearchStrategy[Any], descend: st.SearchStrategy[Any]) -> list[Keyword]:
    return [
        st.tuples(st.just("type"), st.just("array")),
        st.tuples(st.just("items"), descend),
        st.tuples(st.just("prefixItems"), st.lists(sub, min_size=1, max_size=2)),
        st.tuples(st.sampled_from(["contains", "unevaluatedItems"]), sub),
        st.tuples(
            st.sampled_from(["minContains", "maxContains", "minItems", "maxItems"]),
            st.integers(0, 3),
        ),
        st.tuples(st.just("uniqueItems"), st.booleans()),
    ]


def scalar_keywords() -> list[Keyword]:
    return [
        st.tuples(
            st.just("type"),
            st.one_of(
                st.sampled_from(TYPES),
                st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
            ),
        ),
        st.tuples(st.sampled_from(["minLength", "maxLength"]), st.integers(0, 3)),
        st.tuples(st.just("pattern"), st.sampled_from(PATTERNS)),
        st.tuples(
            st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
            st.sampled_from(NUMBERS),
        ),
        st.tuples(st.just("multipleOf"), st.sampled_from(DIVISORS)),
    ]


def generic_keywords(sub: st.SearchStrategy[Any]) -> list[Keyword]:
    return [
        st.tuples(st.just("enum"), st.lists(JSON, min_size=1, max_size=3)),
        st.tuples(st.just("const"), JSON),
        st.tuples(
            st.sampled_from(["allOf", "anyOf", "oneOf"]), st.lists(sub, min_size=1, max_size=3)
        ),
        st.tuples(st.sampled_from(["not", "if", "then", "else"]), sub),
        st.tuples(st.just("$ref"), st.sampled_from(REFS)),
        st.tuples(st.sampled_from(["title", "format", "x-mcp-header"]), st.just("email")),
    ]


def schemas(depth: int) -> st.SearchStrategy[Any]:
    sub = st.deferred(lambda: schemas(depth - 1)) if depth > 0 else SIMPLE
    # A root reference only where the instance gets smaller, so recursion ends.
    descend = st.one_of(sub, sub, st.just({"$ref": "#"}))
    generic = generic_keywords(sub)
    families = [object_keywords(sub, descend), array_keywords(sub, descend), scalar_keywords()]
    objects = [
        st.lists(st.one_of(*family, *family, *generic), min_size=1, max_size=4).map(dict)
        for family in families
    ]
    return st.one_of(*objects, *objects, st.booleans())


def annotating_schemas(depth: int) -> st.SearchStrategy[Any]:
    """Schemas full of the keywords whose annotations ``unevaluated*`` reads (Core §11)."""
    sub = st.deferred(lambda: annotating_schemas(depth - 1)) if depth > 0 else SIMPLE
    names = st.sampled_from(NAMES)
    keywords = [
        *object_keywords(SIMPLE, SIMPLE),
        *array_keywords(SIMPLE, SIMPLE),
        st.tuples(st.just("$ref"), st.sampled_from(["#/$defs/props", "#/$defs/head"])),
    ]
    if depth > 0:
        keywords += 2 * [
            st.tuples(
                st.sampled_from(["allOf", "anyOf", "oneOf"]), st.lists(sub, min_size=1, max_size=3)
            ),
            st.tuples(st.sampled_from(["if", "then", "else", "not"]), sub),
            st.tuples(st.just("dependentSchemas"), st.dictionaries(names, sub, min_size=1)),
            st.tuples(st.just("properties"), st.dictionaries(names, sub, min_size=1)),
        ]
    return st.lists(st.one_of(*keywords), min_size=1, max_size=4).map(dict)


def constants(schema: Any) -> Iterator[Any]:
    """Values and names the schema mentions, to draw instances that meet it."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("enum", "required"):
                yield from value
            elif key == "const":
                yield value
            elif key in ("properties", "dependentRequired", "dependentSchemas"):
                yield from value
                yield from (item for sub in value.values() for item in constants(sub))
            else:
                yield from constants(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from constants(item)


def twins(value: Any) -> list[Any]:
    """Values Python finds equal but JSON may not: true/1, 0/false, 1/1.0, deeply."""
    if isinstance(value, bool):
        return [value, int(value), float(value)]
    if isinstance(value, int):
        return [value, float(value), *([bool(value)] if value in (0, 1) else [])]
    if isinstance(value, float) and value.is_integer():
        return [value, int(value)]
    if isinstance(value, list):
        return [value, [twins(item)[-1] for item in value]]
    if isinstance(value, dict):
        return [value, {name: twins(item)[-1] for name, item in value.items()}]
    return [value]


def instances_for(schema: Any) -> st.SearchStrategy[Any]:
    """JSON values, often built from the schema's own constants, names and their twins."""
    seen = [twin for value in constants(schema) for twin in twins(value)]
    names = st.sampled_from(sorted({name for name in seen if isinstance(name, str)} | set(KEYS)))
    leaf = st.one_of(SCALARS, st.sampled_from(seen), st.sampled_from(seen)) if seen else SCALARS
    shallow = st.one_of(leaf, st.lists(leaf, max_size=4), st.dictionaries(names, leaf, max_size=4))
    return st.one_of(
        leaf, shallow, st.lists(shallow, max_size=3), st.dictionaries(names, shallow, max_size=3)
    )


HINTS = {
    "object": {"properties", "patternProperties", "additionalProperties", "required"},
    "array": {"items", "prefixItems", "contains", "uniqueItems", "minItems", "maxItems"},
    "string": {"pattern", "minLength", "maxLength"},
    "integer": {"multipleOf", "minimum", "maximum"},
    "number": {"multipleOf", "exclusiveMinimum", "exclusiveMaximum"},
}


def guess(schema: Any, data: st.DataObject, depth: int = 0) -> Any:
    """An instance aimed at ``schema``: near its boundary, so both outcomes are common.

    Hypothesis favours the first, "simplest" choice of each draw, so the aimed choice
    comes first and the random instance is the exception.
    """
    if not isinstance(schema, dict) or depth > 3 or data.draw(st.integers(0, 5)) == 5:
        return data.draw(instances_for(schema))
    if ("const" in schema or "enum" in schema) and data.draw(st.integers(0, 2)) < 2:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return data.draw(st.sampled_from([twin for value in values for twin in twins(value)]))
    branches = [sub for key in ("allOf", "anyOf", "oneOf") for sub in schema.get(key, [])]
    branches += [schema[key] for key in ("if", "then", "else", "not") if key in schema]
    branches += [DEFS[ref.split("/")[-1]] for ref in [schema.get("$ref", "")] if "/" in ref]
    if branches and data.draw(st.integers(0, 2)) == 2:
        return guess(data.draw(st.sampled_from(branches)), data, depth + 1)
    kinds = schema.get("type", [kind for kind, words in HINTS.items() if words & set(schema)])
    kind = kinds if isinstance(kinds, str) else data.draw(st.sampled_from(kinds or TYPES))
    if kind == "object":
        named = [*schema.get("properties", {}), *schema.get("required", []), *KEYS]
        keys = data.draw(st.lists(st.sampled_from(named), min_size=1, max_size=4, unique=True))
        properties = schema.get("properties", {})
        fallback = schema.get("additionalProperties", True)
        return {key: guess(properties.get(key, fallback), data, depth + 1) for key in keys}
    if kind == "array":
        prefix = schema.get("prefixItems", [])
        prefix = prefix if isinstance(prefix, list) else []  # draft-07 ignores it
        rest = [schema[key] for key in ("items", "contains") if key in schema] or [True]
        size = data.draw(st.integers(1, len(prefix) + 2))
        subs = [*prefix, *[data.draw(st.sampled_from(rest)) for _ in range(size)]][:size]
        return [guess(sub, data, depth + 1) for sub in subs]
    strategies = {
        "null": st.none(),
        "boolean": st.booleans(),
        "integer": st.sampled_from([1.0, 1, 0, 2, 3, -1, 2.0, 0.0, True]),
        "number": st.sampled_from(NUMBERS),
        "string": st.text(ALPHABET, max_size=4),
    }
    return data.draw(strategies[kind])


FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def compare(root: Any, schema: Any, data: st.DataObject, reference: Any) -> None:
    ours = Validator(root)
    theirs = reference(root)
    for _ in range(4):
        instance = guess(schema, data)
        expected = theirs.is_valid(instance)
        assert ours.is_valid(instance) == expected, instance
        assert (ours.errors(instance) == []) == expected, instance


@FUZZ
@given(schemas(3), st.data())
def test_differential_2020_12(schema: Any, data: st.DataObject) -> None:
    root = {"$schema": D2020, "$defs": DEFS, "allOf": [schema]}
    compare(root, schema, data, Draft202012Validator)


@FUZZ
@given(annotating_schemas(2), st.data())
def test_differential_unevaluated(schema: Any, data: st.DataObject) -> None:
    closing = data.draw(st.sampled_from([False, {"type": "integer"}, {"const": 1}]))
    root = {
        "$defs": DEFS,
        **schema,
        data.draw(st.sampled_from(["unevaluatedProperties", "unevaluatedItems"])): closing,
    }
    compare(root, schema, data, Draft202012Validator)


def draft7_keywords(sub: st.SearchStrategy[Any]) -> list[Keyword]:
    names = st.sampled_from(NAMES)
    return [
        # Not `items: true/false`: beside additionalItems, the reference crashes on it.
        st.tuples(
            st.just("items"),
            st.one_of(
                sub.filter(lambda schema: isinstance(schema, dict)),
                st.lists(sub, min_size=1, max_size=2),
            ),
        ),
        st.tuples(st.just("additionalItems"), sub),
        st.tuples(
            st.just("dependencies"),
            st.dictionaries(
                names, st.one_of(st.lists(names, max_size=2, unique=True), sub), max_size=2
            ),
        ),
        # Not the "#num" anchor: the reference crashes looking anchors up once a
        # `dependencies` entry is an array (it walks the array as a schema).
        st.tuples(st.just("$ref"), st.sampled_from(["#/definitions/s", "#/definitions/n"])),
        st.tuples(st.just("properties"), st.dictionaries(names, sub, max_size=2)),
        st.tuples(
            st.sampled_from(["allOf", "anyOf", "oneOf"]), st.lists(sub, min_size=1, max_size=2)
        ),
        st.tuples(st.sampled_from(["contains", "not", "if", "then", "else"]), sub),
    ]


def draft7_schemas(depth: int) -> st.SearchStrategy[Any]:
    keywords: list[Keyword] = [
        st.tuples(st.just("type"), st.sampled_from(TYPES)),
        st.tuples(st.just("enum"), st.lists(JSON, min_size=1, max_size=3)),
        st.tuples(st.sampled_from(["minItems", "maxItems", "minLength"]), st.integers(0, 2)),
        st.tuples(st.just("required"), st.lists(st.sampled_from(NAMES), max_size=2, unique=True)),
        # 2020-12 keywords are unknown, so ignored, in draft-07.
        st.tuples(st.sampled_from(["prefixItems", "unevaluatedItems"]), st.just(False)),
    ]
    if depth > 0:
        keywords += 2 * draft7_keywords(st.deferred(lambda: draft7_schemas(depth - 1)))
    objects = st.lists(st.one_of(*keywords), min_size=1, max_size=4).map(dict)
    return st.one_of(objects, objects, st.booleans())


@settings(FUZZ, max_examples=150)
@given(draft7_schemas(2), st.data())
def test_differential_draft_07(schema: Any, data: st.DataObject) -> None:
    definitions = {"s": {"type": "string"}, "n": {"$id": "#num", "type": "number"}}
    root = {"$schema": DRAFT7, "definitions": definitions, "allOf": [schema]}
    compare(root, schema, data, Draft7Validator)


def test_the_fuzz_sees_both_outcomes() -> None:
    outcomes: set[bool] = set()

    @settings(FUZZ, max_examples=60)
    @given(schemas(2), st.data())
    def probe(schema: Any, data: st.DataObject) -> None:
        root = {"$defs": DEFS, "allOf": [schema]}
        outcomes.add(Validator(root).is_valid(guess(schema, data)))

    probe()
    assert outcomes == {True, False}
