"""`jsonrpc.nests_too_deeply`: the depth of any JSON text, exactly, without parsing it.

Each of its steps (the length, a walk over sparse openers, the byte counts of a dense
message, the pass over the brackets outside strings) is driven to the limit and one
past it, and hypothesis checks the answer against a parser's on JSON whose strings hold
brackets, quotes, backslashes and escapes of every kind.
"""

from __future__ import annotations

import json
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from mcpcore import MAX_JSON_DEPTH, jsonrpc

LIMIT = MAX_JSON_DEPTH
NESTS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def depth_of(value: Any) -> int:
    """How many arrays and objects are open at once at the deepest point (a parser's view)."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return deepest


def nested(depth: int, *, leaf: Any = 1, shape: str = "[") -> Any:
    """A value ``depth`` deep, its levels arrays or objects as ``shape`` says, cyclically."""
    value = leaf
    for level in range(depth):
        value = [value] if shape[level % len(shape)] == "[" else {"k": value}
    return value


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# Strings that trip a scan which ignores strings or escapes: brackets, quotes, and
# backslashes in every position, non-ASCII, the escapes JSON writes for control bytes.
tricky_text = st.text(alphabet=st.sampled_from(list('ab[]{}"\\/\n\t\u00e9\u2028 ,:')), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=30,
)


@NESTS
@given(
    inner=json_values,
    depth=st.integers(0, LIMIT + 40) | st.integers(LIMIT - 3, LIMIT + 3),
    shape=st.sampled_from(["[", "{", "[{", "{[[", "[[{"]),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 0, 1]),
)
def test_the_answer_is_a_parsers_for_any_json(
    inner: Any, depth: int, shape: str, ascii_only: bool, indent: int | None
) -> None:
    value = nested(depth, leaf=inner, shape=shape)
    data = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()
    assert jsonrpc.nests_too_deeply(data) is (depth_of(value) > LIMIT)


@NESTS
@given(
    siblings=st.lists(json_values, min_size=1, max_size=60),
    depth=st.integers(LIMIT - 2, LIMIT + 2),
    spread=st.integers(1, 400),
)
def test_a_dense_message_is_judged_exactly_however_its_brackets_lie(
    siblings: list[Any], depth: int, spread: int
) -> None:
    # Many brackets (a listing) around one deep value: past the byte counts' bound, so
    # the pass over the structure decides; strings full of brackets try to fool it.
    filler = [{"name": "t]" * (i % 3), "schema": {"x": ["[", {"}": i}]}} for i in range(spread)]
    value = {"result": [*filler, nested(depth, leaf=siblings), *filler]}
    data = compact(value)
    assert jsonrpc.nests_too_deeply(data) is (depth_of(value) > LIMIT)


def test_a_short_message_is_judged_by_its_length_alone() -> None:
    # 2 * LIMIT + 1 bytes can't hold more than LIMIT levels of valid JSON...
    at_limit = b"[" * LIMIT + b"]" * LIMIT
    assert len(at_limit) <= 2 * LIMIT + 1
    assert not jsonrpc.nests_too_deeply(at_limit)
    # ...and one level more no longer fits.
    past = b"[" * (LIMIT + 1) + b"]" * (LIMIT + 1)
    assert jsonrpc.nests_too_deeply(past)


@pytest.mark.parametrize("extra", [0, 1])
def test_a_long_text_with_a_few_deep_levels_is_judged_by_its_openers(extra: int) -> None:
    # A long string keeps the openers sparse: the memchr walk counts them all.
    text = "x" * 100_000
    value = nested(LIMIT + extra, leaf=text)
    assert jsonrpc.nests_too_deeply(compact(value)) is bool(extra)


@pytest.mark.parametrize("extra", [0, 1])
def test_a_dense_deep_message_is_judged_exactly(extra: int) -> None:
    # Dense and deep: the byte counts can't clear it, the structure pass decides.
    value = [nested(LIMIT + extra - 1, shape="[{"), ["]]]]" * 50, "[[" * 50, {'a\\"[': []}]]
    assert depth_of(value) == LIMIT + extra
    assert jsonrpc.nests_too_deeply(compact(value)) is bool(extra)


def test_a_listing_of_a_hundred_tools_passes_on_byte_counts_alone() -> None:
    tool = {
        "name": "get_weather",
        "description": 'Weather [by city]: "quoted" \\ and\nmore',
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string", "pattern": "^[A-Z][a-z]+$"}},
        },
    }
    data = compact({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool] * 100}})
    assert data.count(b"{") + data.count(b"[") > LIMIT  # so not on the openers alone
    assert not jsonrpc.nests_too_deeply(data)


@pytest.mark.parametrize(
    "data",
    [
        # Strings that close what they don't open hide nothing: the depth is the parser's.
        compact(["]" * 600, nested(LIMIT + 1)]),
        compact({"]}]}" * 300: nested(LIMIT + 1)}),
        # An escaped quote does not end a string, an escaped backslash does not escape.
        compact(['\\"' + "]" * 600, nested(LIMIT + 1)]),
        compact(["\\", "]" * 600, nested(LIMIT + 1)]),
    ],
)
def test_brackets_in_strings_never_hide_the_depth(data: bytes) -> None:
    assert jsonrpc.nests_too_deeply(data)


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000,  # truncated
        b"[" * 5_000 + b"x" + b"]" * 5_000,  # garbage at the bottom
        b'{"a":' * 3_000 + b"1" + b"}" * 3_000,
        b"\xff" + b"[" * 3_000,
    ],
)
def test_any_bytes_are_judged_without_recursing(data: bytes) -> None:
    # Far past what the stack would hold: the check itself never recurses.
    assert jsonrpc.nests_too_deeply(data)
