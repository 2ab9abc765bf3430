"""Checking, outside any timing, that a variant really did the job.

A codec's output must parse to the same JSON value as its input: key order and
whitespace may differ, content may not.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["BenchmarkError", "json_differences"]

#: How many differences a note lists before it stops.
_MAX_LISTED = 4


class BenchmarkError(Exception):
    """mcpcore did not do the job it is measured on; its numbers would be meaningless."""


def json_differences(expected: bytes, actual: bytes) -> list[str]:
    """Where ``actual`` differs from ``expected`` as JSON values (empty when equal).

    Each difference is a path such as ``result.ttlMs`` with what happened there:
    ``added``, ``missing`` or ``changed``. At most a few are listed.
    """
    found: list[str] = []
    _compare(json.loads(expected), json.loads(actual), "", found)
    if len(found) > _MAX_LISTED:
        found[_MAX_LISTED:] = [f"... {len(found) - _MAX_LISTED} more"]
    return found


def _compare(expected: Any, actual: Any, path: str, found: list[str]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(expected.keys() | actual.keys()):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                found.append(f"{where} missing")
            elif key not in expected:
                found.append(f"{where} added")
            else:
                _compare(expected[key], actual[key], where, found)
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            _compare(left, right, f"{path}[{index}]", found)
    elif expected != actual or (
        type(expected) is not type(actual) and not _same_number(expected, actual)
    ):
        found.append(f"{path or '<message>'} changed")


def _same_number(left: Any, right: Any) -> bool:
    # 50 and 50.0 are the same JSON number: a float-typed field may re-encode an integer.
    numbers = (int, float)
    return (
        isinstance(left, numbers)
        and isinstance(right, numbers)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
        and left == right
    )
