"""The RFC 6570 §2 grammar: its character sets, its operators, and the parser.

A template parses once into a list of parts, literal text (already in its expanded form)
and expressions, which expansion (`_expansion`) and the match compiler (`_matching`) both
walk. `InvalidTemplate` is the parser's error; the character sets here (RFC 3986 §2, as
RFC 6570 §1.5 uses them) are shared by all three.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple
from urllib.parse import quote

from mcpcore.uritemplate._limits import (
    MAX_EXPRESSIONS,
    MAX_PREFIX_LENGTH,
    MAX_TEMPLATE_LENGTH,
    MAX_VARSPECS,
)


class InvalidTemplate(ValueError):  # noqa: N818 (reads as a reason, like ValueError)
    """A URI template that does not follow the RFC 6570 grammar (§2), or exceeds a limit.

    Attributes:
        template: the text that failed to parse.
        position: the offset of the offending character, or None for a limit on the whole
            template.
    """

    def __init__(self, message: str, template: str, position: int | None = None) -> None:
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"invalid URI template{where}: {message}")
        self.template = template
        self.position = position


# --- Characters (RFC 3986 §2, as RFC 6570 §1.5 uses them) -----------------------------------

_UNRESERVED: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_RESERVED: Final = ":/?#[]@!$&'()*+,;="
_PCT_TRIPLET: Final = re.compile(r"%[0-9A-Fa-f]{2}")
# §2.1 literals: besides ASCII, "ucschar / iprivate" (RFC 3987 §2.2), as code point ranges.
_LITERAL_RANGES: Final = (
    (0xA0, 0xD7FF),
    (0xE000, 0xFDCF),  # iprivate E000-F8FF, then ucschar F900-FDCF
    (0xFDF0, 0xFFEF),
    *((plane << 16, (plane << 16) + 0xFFFD) for plane in range(1, 14)),
    (0xE1000, 0xEFFFD),
    (0xF0000, 0xFFFFD),
    (0x100000, 0x10FFFD),
)
# §2.1: ASCII characters a literal may not contain ("%" only as part of a pct-encoded
# triplet, checked separately). Note "'": the ABNF excludes it although RFC 3986 reserves it.
_LITERAL_ASCII: Final = frozenset(
    chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"'%<>\\^`{|}"
)


def _is_literal_char(char: str) -> bool:
    if char.isascii():
        return char in _LITERAL_ASCII
    code = ord(char)
    return any(low <= code <= high for low, high in _LITERAL_RANGES)


# --- Parsing (RFC 6570 §2) ------------------------------------------------------------------


class _Operator(NamedTuple):
    """One column of the expansion table (RFC 6570 Appendix A)."""

    first: str  # written before the first defined value
    sep: str  # written between values
    named: bool  # values are written as name=value
    ifemp: str  # written after the name when the value is empty
    allow_reserved: bool  # U+R rather than U


_OPERATORS: Final = {
    "": _Operator("", ",", False, "", False),  # §3.2.2 simple string
    "+": _Operator("", ",", False, "", True),  # §3.2.3 reserved
    "#": _Operator("#", ",", False, "", True),  # §3.2.4 fragment
    ".": _Operator(".", ".", False, "", False),  # §3.2.5 label
    "/": _Operator("/", "/", False, "", False),  # §3.2.6 path segment
    ";": _Operator(";", ";", True, "", False),  # §3.2.7 path-style parameter
    "?": _Operator("?", "&", True, "=", False),  # §3.2.8 form-style query
    "&": _Operator("&", "&", True, "=", False),  # §3.2.9 form-style continuation
}
# §2.2 op-reserve: "reserved as future operator extensions".
_RESERVED_OPERATORS: Final = "=,!@|"
# §2.3 varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
_VARCHARS: Final = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+"
_VARNAME: Final = re.compile(rf"{_VARCHARS}(?:\.{_VARCHARS})*")


class _VarSpec(NamedTuple):
    name: str
    prefix: int | None  # §2.4.1 prefix modifier ":n"
    explode: bool  # §2.4.2 explode modifier "*"


class _Expression(NamedTuple):
    operator: _Operator
    varspecs: tuple[_VarSpec, ...]


def _parse(template: str) -> list[str | _Expression]:
    """The template as literal text (in its expanded form) and expressions (§2)."""
    if len(template) > MAX_TEMPLATE_LENGTH:
        raise InvalidTemplate(f"longer than {MAX_TEMPLATE_LENGTH} characters", template)
    parts: list[str | _Expression] = []
    literal: list[str] = []
    expressions = varspecs = 0
    pos = 0
    while pos < len(template):
        char = template[pos]
        if char == "{":
            if literal:
                parts.append("".join(literal))
                literal = []
            expression, pos = _parse_expression(template, pos)
            expressions += 1
            varspecs += len(expression.varspecs)
            if expressions > MAX_EXPRESSIONS:
                raise InvalidTemplate(f"more than {MAX_EXPRESSIONS} expressions", template)
            if varspecs > MAX_VARSPECS:
                raise InvalidTemplate(f"more than {MAX_VARSPECS} variables", template)
            parts.append(expression)
        elif char == "%" and _PCT_TRIPLET.match(template, pos):
            literal.append(template[pos : pos + 3])  # §3.1: pct-encoded is copied as is
            pos += 3
        elif _is_literal_char(char):
            # §3.1: a literal allowed in a URI is copied; any other (non-ASCII) is encoded.
            literal.append(char if char.isascii() else quote(char, safe=""))
            pos += 1
        else:
            what = "an unmatched '}'" if char == "}" else f"the character {char!r}"
            if char == "%":
                what = "a '%' that does not start a pct-encoded octet"
            raise InvalidTemplate(f"{what} can't appear outside an expression", template, pos)
    if literal:
        parts.append("".join(literal))
    return parts


def _parse_expression(template: str, start: int) -> tuple[_Expression, int]:
    """The expression whose "{" is at ``start`` (§2.2-2.4), and the position after it."""
    close = template.find("}", start)
    nested = template.find("{", start + 1)
    if close < 0 or 0 <= nested < close:
        raise InvalidTemplate("an expression is not closed with '}'", template, start)
    operator, pos = _parse_operator(template, start + 1, close)
    varspecs: list[_VarSpec] = []
    while True:
        varspec, pos = _parse_varspec(template, pos, close)
        varspecs.append(varspec)
        if pos == close:
            return _Expression(_OPERATORS[operator], tuple(varspecs)), close + 1
        if template[pos] != ",":
            raise InvalidTemplate("expected ',' or '}' after a variable", template, pos)
        pos += 1


def _parse_operator(template: str, pos: int, close: int) -> tuple[str, int]:
    """The operator at ``pos`` ("" for none, §2.2), and the position after it."""
    operator = template[pos] if pos < close else ""
    if operator and operator in _RESERVED_OPERATORS:
        raise InvalidTemplate(f"the operator {operator!r} is reserved", template, pos)
    if operator in _OPERATORS:
        return operator, pos + len(operator)
    if _VARNAME.match(template, pos, close) is None:
        raise InvalidTemplate(f"{operator!r} is not an operator or a variable name", template, pos)
    return "", pos


def _parse_varspec(template: str, pos: int, close: int) -> tuple[_VarSpec, int]:
    """The variable at ``pos`` with its modifier (§2.3-2.4), and the position after it."""
    found = _VARNAME.match(template, pos, close)
    if found is None:
        raise InvalidTemplate("expected a variable name", template, pos)
    name, pos = found[0], found.end()
    prefix: int | None = None
    if template.startswith(":", pos):
        digits = pos + 1
        while digits < close and template[digits] in "0123456789":
            digits += 1
        text = template[pos + 1 : digits]
        # §2.4.1 max-length = %x31-39 0*3DIGIT: 1 to 9999, no leading zero.
        if not text or text[0] == "0" or int(text) > MAX_PREFIX_LENGTH:
            raise InvalidTemplate(
                f"a prefix length must be an integer from 1 to {MAX_PREFIX_LENGTH}",
                template,
                pos + 1,
            )
        prefix = int(text)
        pos += 1 + len(text)
    if not template.startswith("*", pos):
        return _VarSpec(name, prefix, False), pos
    if prefix is not None:
        raise InvalidTemplate(
            "a variable can't have both a prefix (:n) and explode (*) modifier", template, pos
        )
    return _VarSpec(name, prefix, True), pos + 1
