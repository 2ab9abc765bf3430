r"""``pattern`` and ``patternProperties`` regexes: ECMA-262 syntax read by Python's `re`.

JSON Schema regexes should follow the ECMA-262 dialect (2020-12 Core §6.4, Validation
§6.3.3, Core §10.3.2.2). Python's `re` is close but differs on ``$``, named groups and
the meaning of ``\d``/``\w``/``\b``; `_regex` translates those and compiles once, at
schema compile time.
"""

from __future__ import annotations

import re
from typing import Any

from mcpcore.jsonschema._errors import SchemaError
from mcpcore.jsonschema._state import _show


def _ecma_regex(source: str) -> str:
    r"""Rewrite the ECMA-262 constructs Python's `re` reads differently or not at all.

    ``$`` becomes ``\Z``: in ECMA-262 it matches only at the very end, while Python's
    also matches before a final newline (so ``^[a-z]+$`` would accept ``"abc\n"``).
    Named groups ``(?<n>…)`` and backreferences ``\k<n>`` get Python's spelling. The
    pattern is then compiled with `re.ASCII`, which gives ``\d``, ``\w`` and ``\b``
    their ECMA-262 (ASCII) meaning.
    """
    out: list[str] = []
    index, length, in_class = 0, len(source), False
    while index < length:
        char = source[index]
        if char == "\\":
            named = re.match(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>", source[index:])
            if named and not in_class:
                out.append(f"(?P={named.group(1)})")
                index += named.end()
                continue
            out.append(source[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            # As in Python's parser, a `]` first in a class (after any `^`) is literal.
            end = index + 1 + (source.startswith("^", index + 1))
            end += source.startswith("]", end)
            out.append(source[index:end])
            index, in_class = end, True
            continue
        elif char == "$":
            char = r"\Z"
        elif source.startswith("(?<", index) and not source.startswith(("(?<=", "(?<!"), index):
            char, index = "(?P<", index + 2
        out.append(char)
        index += 1
    return "".join(out)


def _regex(source: Any, where: str) -> re.Pattern[str]:
    if not isinstance(source, str):
        raise SchemaError(f"{where} must be a string")
    try:
        return re.compile(_ecma_regex(source), re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise SchemaError(f"{where}: {_show(source)} is not a valid regex ({exc})") from None
