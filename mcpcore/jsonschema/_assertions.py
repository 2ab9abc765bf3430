"""Checks for the assertions that apply no subschema (2020-12 Validation §6.1-6.3).

``enum`` and ``const`` for any type, the numeric keywords, ``pattern``, and the size
bounds shared by strings, arrays and objects (``minLength``, ``maxItems``,
``minProperties``…). Each compiles to a closure that only compares the instance with a
value fixed at compile time. ``type`` itself is no check: a `_Node` tests it first.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from mcpcore.jsonschema._errors import _LimitError, _TooDeepError
from mcpcore.jsonschema._state import (
    _Budget,
    _Check,
    _Issues,
    _Notes,
    _Path,
    _pointer,
    _report,
    _show,
)
from mcpcore.jsonschema._values import _value_key

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
