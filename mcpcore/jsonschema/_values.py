"""Equality of JSON values held as Python builtins, for ``enum``, ``const``, ``uniqueItems``.

Python's `bool` is an `int` and ``True == 1``, while JSON equality (2020-12 Validation
§4.2.2) keeps booleans apart from numbers, compares arrays item by item and objects by
their members regardless of order. `_value_key` turns a value into a hashable key under
which exactly the JSON-equal values collide, so matching an ``enum`` becomes one set
lookup, and finding duplicate items one dict lookup per item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpcore.jsonschema._errors import MAX_VALUE_NESTING, _TooDeepError


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
