"""`mcpcore.http`: header values and ``x-mcp-header`` (2026-07-28 Streamable HTTP).

The cases of the conformance suite's ``http-custom-header-server-validation`` and
``http-custom-headers`` / ``http-invalid-tool-headers`` scenarios (CONFORMANCE.md §8.6,
§9.3) are here one by one, plus the round trip as a property.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore.http import (
    MAX_SCHEMA_NODES,
    HeaderParam,
    InvalidHeaderAnnotationError,
    MalformedHeaderValueError,
    check_param_headers,
    decode_value,
    encode_value,
    header_params,
    name_of,
    param_headers,
)

# ------------------------------------------------------------------ values


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),  # inner spaces are fine
        ("", ""),
        ("日本", "=?base64?5pel5pys?="),
        (" lead", "=?base64?IGxlYWQ=?="),
        ("trail ", "=?base64?dHJhaWwg?="),
        ("tab\there", "=?base64?dGFiCWhlcmU=?="),
        ("a\r\nb", "=?base64?YQ0KYg==?="),
        ("\x7f", "=?base64?fw==?="),
        # A plain value that looks encoded is encoded, so it decodes to itself.
        ("=?base64?SGVsbG8=?=", "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?="),
    ],
)
def test_values_are_plain_when_safe_else_base64(value: str, header: str) -> None:
    assert encode_value(value) == header
    assert decode_value(header) == value


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("SGVsbG8=", "SGVsbG8="),  # no prefix: a literal
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no suffix: a literal
        ("  padded\t", "padded"),  # optional whitespace is not part of the value
    ],
)
def test_decoding_follows_the_markers(header: str, value: str) -> None:
    assert decode_value(header) == value


@pytest.mark.parametrize(
    "header",
    [
        "=?base64?SGVsbG8?=",  # bad padding
        "=?base64?SGVs!!!bG8=?=",  # bad characters
        "=?base64?SGVsbG9=?=",  # stray bits: not the canonical form of any value
        "=?base64?/w==?=",  # not UTF-8
    ],
)
def test_a_malformed_base64_value_is_refused(header: str) -> None:
    with pytest.raises(MalformedHeaderValueError):
        decode_value(header)


@given(st.text())
def test_every_string_survives_the_round_trip(value: str) -> None:
    header = encode_value(value)
    assert header.isascii()
    assert header.isprintable()
    assert header == header.strip(" \t")
    assert decode_value(header) == value


# ------------------------------------------------------------- annotations


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_annotations_are_read_in_document_order_nested_ones_included() -> None:
    found = header_params(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            target={
                "type": "object",
                "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}},
            },
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
            plain={"type": "string"},
        )
    )
    assert found == (
        HeaderParam(("region",), "Region", "string"),
        HeaderParam(("target", "zone"), "Zone", "integer"),
        HeaderParam(("verbose",), "Verbose", "boolean"),
    )
    assert [param.header for param in found] == [
        "Mcp-Param-Region",
        "Mcp-Param-Zone",
        "Mcp-Param-Verbose",
    ]


def test_annotations_in_instance_data_are_not_annotations() -> None:
    found = header_params(
        schema(
            region={"type": "string", "default": {"x-mcp-header": "no"}, "enum": ["a"]},
        )
    )
    assert found == ()


@pytest.mark.parametrize(
    "bad",
    [
        schema(a={"type": "string", "x-mcp-header": ""}),
        schema(a={"type": "string", "x-mcp-header": "Has Space"}),
        schema(a={"type": "string", "x-mcp-header": "Colon:Name"}),
        schema(a={"type": "string", "x-mcp-header": "Régión"}),
        schema(a={"type": "string", "x-mcp-header": "Ctl\x01"}),
        schema(a={"type": "string", "x-mcp-header": 7}),
        schema(a={"type": "number", "x-mcp-header": "Num"}),
        schema(a={"type": "object", "x-mcp-header": "Obj"}),
        schema(a={"type": "array", "x-mcp-header": "Arr"}),
        schema(a={"type": "null", "x-mcp-header": "Null"}),
        schema(a={"x-mcp-header": "Untyped"}),
        schema(
            a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "string", "x-mcp-header": "dUP"}
        ),
        # Off the properties path: under items, a composition, $defs, a conditional.
        schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}),
        {"type": "object", "anyOf": [schema(a={"type": "string", "x-mcp-header": "Any"})]},
        {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "Def"}}},
        {"type": "object", "if": schema(a={"type": "string", "x-mcp-header": "If"})},
        {"type": "object", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidHeaderAnnotationError):
        header_params(bad)


def test_a_huge_schema_is_refused_not_walked() -> None:
    wide = schema(**{f"p{i}": {"type": "string"} for i in range(MAX_SCHEMA_NODES + 1)})
    with pytest.raises(InvalidHeaderAnnotationError, match="subschemas"):
        header_params(wide)


def test_a_deep_schema_is_walked_without_recursion() -> None:
    node: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(5_000):
        node = schema(next=node)
    [param] = header_params(node)
    assert len(param.path) == 5_000


# ----------------------------------------------------------- client and server

FIXTURE = header_params(
    schema(
        region={"type": "string", "x-mcp-header": "Region"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        empty={"type": "string", "x-mcp-header": "EmptyVal"},
        method={"type": "string", "x-mcp-header": "Method"},
        odd={"type": "string", "x-mcp-header": "NonAscii"},
        query={"type": "string"},
    )
)


def test_a_client_mirrors_present_values_and_omits_null_ones() -> None:
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": False,
        "empty": "",
        "method": "test-method",
        "odd": "café",
        "query": "never mirrored",
    }
    assert param_headers(FIXTURE, arguments) == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-Method": "test-method",
        "Mcp-Param-NonAscii": "=?base64?Y2Fmw6k=?=",
    }
    assert param_headers(FIXTURE, {"region": None, "verbose": True}) == {
        "Mcp-Param-Verbose": "true"
    }
    assert param_headers(FIXTURE, None) == {}


def lookup(headers: dict[str, str]) -> Any:
    folded = {name.lower(): value for name, value in headers.items()}
    return lambda name: folded.get(name.lower())


REGION = header_params(schema(region={"type": "string", "x-mcp-header": "Region"}))


@pytest.mark.parametrize(
    ("header", "body", "accepted"),
    [
        ("=?base64?SGVsbG8=?=", "Hello", True),
        ("=?base64?SGVsbG8?=", "Hello", False),
        ("=?base64?SGVs!!!bG8=?=", "Hello", False),
        ("SGVsbG8=", "SGVsbG8=", True),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", True),
        (None, "test-value", False),
        ("  test-value ", "test-value", True),
        ("other", "test-value", False),
        ("x", None, False),  # a header for an argument that is not there
        (None, None, True),
    ],
)
def test_the_server_checks_each_header_against_the_body(
    header: str | None, body: str | None, accepted: bool
) -> None:
    headers = {} if header is None else {"mcp-param-region": header}
    arguments = {} if body is None else {"region": body}
    problem = check_param_headers(REGION, arguments, lookup(headers))
    assert (problem is None) is accepted, problem


@pytest.mark.parametrize(
    ("header", "body", "accepted"),
    [
        ("42", 42, True),
        ("42", 42.0, True),
        ("42.0", 42, True),
        ("41", 42, False),
        ("4x", 42, False),
        ("nan", 42, False),
        ("42", "42", False),
        ("1", True, False),
    ],
)
def test_integers_compare_as_numbers(header: str, body: Any, accepted: bool) -> None:
    priority = header_params(schema(p={"type": "integer", "x-mcp-header": "P"}))
    problem = check_param_headers(priority, {"p": body}, lookup({"Mcp-Param-P": header}))
    assert (problem is None) is accepted


def test_booleans_are_exactly_true_or_false() -> None:
    flag = header_params(schema(f={"type": "boolean", "x-mcp-header": "F"}))
    assert check_param_headers(flag, {"f": True}, lookup({"Mcp-Param-F": "true"})) is None
    assert check_param_headers(flag, {"f": True}, lookup({"Mcp-Param-F": "True"})) is not None
    assert check_param_headers(flag, {"f": False}, lookup({"Mcp-Param-F": "true"})) is not None


def test_what_the_client_sends_the_server_accepts() -> None:
    arguments = {"region": " spaced ", "priority": -7, "verbose": True, "odd": "日本\n"}
    assert (
        check_param_headers(FIXTURE, arguments, lookup(param_headers(FIXTURE, arguments))) is None
    )


def test_mcp_name_is_the_name_or_the_uri() -> None:
    assert name_of("tools/call", {"name": "echo"}) == "echo"
    assert name_of("resources/read", {"uri": "test://a"}) == "test://a"
    assert name_of("prompts/get", {"name": 3}) is None
    assert name_of("tools/list", {}) is None
