"""RFC 6570 URI templates: expansion, and matching a URI back to its variables.

MCP resource templates (``ResourceTemplate.uriTemplate``) are RFC 6570 URI templates. A
client expands them (and completes their variables); a server does the inverse: it routes
``resources/read`` of ``test://template/123/data`` to the handler registered for
``test://template/{id}/data`` with ``id="123"``. RFC 6570 defines only expansion (§1.4
leaves matching to regular-expression languages), so the matching rules are ours; they are
documented on `UriTemplate`.

Matching is written by hand rather than compiled to an `re` pattern because the URI comes
from the peer. A backtracking regex costs O(n**k) on a URI that fails to match a template
with k variables that can be split more than one way (``{major}.{minor}.{patch}`` and a
URI of 400 dots already takes a third of a second). The search here remembers which
(template part, URI position) pairs it has tried, so its work grows linearly with the
URI, and a step budget (`MAX_MATCH_STEPS`) bounds it whatever the template.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final, NamedTuple, TypeAlias
from urllib.parse import quote, unquote_to_bytes

__all__ = [
    "MAX_EXPRESSIONS",
    "MAX_MATCH_STEPS",
    "MAX_PREFIX_LENGTH",
    "MAX_TEMPLATE_LENGTH",
    "MAX_URI_LENGTH",
    "MAX_VARSPECS",
    "InvalidTemplate",
    "MatchValue",
    "UriTemplate",
    "is_template",
]

#: The longest template accepted, in characters. Real templates are well under 200; a
#: template can arrive from a peer (``resources/templates/list``), so its size is bounded
#: before any work is done on it.
MAX_TEMPLATE_LENGTH: Final = 2048
#: The most ``{...}`` expressions in one template: bounds the match program's size, and so
#: the cost of every match (which is linear in the URI times the program size).
MAX_EXPRESSIONS: Final = 64
#: The most variable specifications (``{a,b}`` has two) in one template, for the same reason.
MAX_VARSPECS: Final = 128
#: The largest prefix modifier, ``{var:9999}``: RFC 6570 §2.4.1, "a positive integer < 10000".
MAX_PREFIX_LENGTH: Final = 9999
#: The longest URI `UriTemplate.match` considers, in characters; longer ones never match.
#: The same bound as the server's own check on resource URIs.
MAX_URI_LENGTH: Final = 8192
#: The most steps one match may take before it gives up and reports no match. The search
#: visits each (template part, URI position) pair at most once, so a template of typical
#: size against a URI of `MAX_URI_LENGTH` stays far below this, however hostile the URI;
#: the budget is the backstop that makes the bound hold for any template.
MAX_MATCH_STEPS: Final = 250_000

#: What `UriTemplate.match` gives for one variable: a string, or for an exploded variable
#: (``{/path*}``, ``{?list*}``) a list of strings or a mapping.
MatchValue: TypeAlias = str | list[str] | dict[str, str]


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
# What a URI can't contain: a character that is not unreserved, reserved or "%", or a "%"
# that does not start a pct-encoded octet (RFC 3986 §2).
_NOT_URI: Final = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})")
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


def _encode(value: str, allow_reserved: bool) -> str:
    """Pct-encode ``value`` as §3.2.1 says.

    Unreserved characters are kept, and so are reserved ones and existing pct-encoded
    triplets when the operator allows them (``+``, ``#``); the rest is encoded as UTF-8.
    """
    if not allow_reserved:
        return quote(value, safe="")  # quote() always keeps exactly the unreserved set
    pieces = _PCT_TRIPLET.split(value)
    triplets = _PCT_TRIPLET.findall(value)
    out = [quote(pieces[0], safe=_RESERVED)]
    for triplet, piece in zip(triplets, pieces[1:], strict=True):
        out += (triplet, quote(piece, safe=_RESERVED))
    return "".join(out)


def _decode(text: str) -> str | None:
    """The pct-decoded value, or None if its octets are not UTF-8."""
    if "%" not in text:
        return text
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _upper_triplet(found: re.Match[str]) -> str:
    return found[0].upper()


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
    pos = start + 1
    operator = template[pos] if pos < close else ""
    if operator and operator in _RESERVED_OPERATORS:
        raise InvalidTemplate(f"the operator {operator!r} is reserved", template, pos)
    if operator in _OPERATORS:
        pos += len(operator)
    elif _VARNAME.match(template, pos, close) is None:
        raise InvalidTemplate(f"{operator!r} is not an operator or a variable name", template, pos)
    else:
        operator = ""
    varspecs: list[_VarSpec] = []
    while True:
        found = _VARNAME.match(template, pos, close)
        if found is None:
            raise InvalidTemplate("expected a variable name", template, pos)
        name, pos = found[0], found.end()
        prefix: int | None = None
        explode = False
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
        if template.startswith("*", pos):
            if prefix is not None:
                raise InvalidTemplate(
                    "a variable can't have both a prefix (:n) and explode (*) modifier",
                    template,
                    pos,
                )
            explode = True
            pos += 1
        varspecs.append(_VarSpec(name, prefix, explode))
        if pos == close:
            return _Expression(_OPERATORS[operator], tuple(varspecs)), close + 1
        if template[pos] != ",":
            raise InvalidTemplate("expected ',' or '}' after a variable", template, pos)
        pos += 1


# --- Expansion (RFC 6570 §3.2, Appendix A) --------------------------------------------------


def _scalar(value: object, name: str) -> str:
    # Numbers and booleans as JSON writes them: 1024, 1.5, true.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value))
    raise TypeError(
        f"the value of {name!r} must be a str, int, float, bool, list, tuple or mapping "
        f"(of those scalars), not {type(value).__name__}"
    )


def _defined(value: object, name: str) -> str | list[str] | dict[str, str] | None:
    """The value as §2.3 sees it, or None when it is undefined.

    None is undefined; so are an empty list or mapping (§2.3: "considered undefined if the
    list contains zero members"), and a mapping whose values are all None.
    """
    if value is None:
        return None
    if isinstance(value, list | tuple):
        items = [_scalar(item, name) for item in value if item is not None]
        return items or None
    if isinstance(value, Mapping):
        pairs = {_scalar(k, name): _scalar(v, name) for k, v in value.items() if v is not None}
        return pairs or None
    return _scalar(value, name)


def _expand(expression: _Expression, values: Mapping[str, object]) -> str:
    """One expression, by the algorithm of RFC 6570 Appendix A."""
    op = expression.operator

    def named(name: str, text: str) -> str:
        return name + ("=" + text if text else op.ifemp)

    def enc(text: str) -> str:
        return _encode(text, op.allow_reserved)

    out: list[str] = []
    for spec in expression.varspecs:
        value = _defined(values.get(spec.name), spec.name)
        if value is None:
            continue  # §3.2.1: undefined variables are skipped
        if isinstance(value, str):
            if spec.prefix is not None:
                value = value[: spec.prefix]  # §2.4.1: counted in characters, before encoding
            out.append(named(spec.name, enc(value)) if op.named else enc(value))
            continue
        if spec.prefix is not None:
            # §2.4.1: "Prefix modifiers are not applicable to variables that have composite
            # values."
            raise ValueError(f"{spec.name!r} has a prefix modifier but a composite value")
        if isinstance(value, dict):
            if spec.explode:  # §2.4.2: name=value pairs, each pair a separate value
                members = [
                    named(enc(k), enc(v)) if op.named else f"{enc(k)}={enc(v)}"
                    for k, v in value.items()
                ]
                out.append(op.sep.join(members))
                continue
            text = ",".join(f"{enc(k)},{enc(v)}" for k, v in value.items())
        else:
            if spec.explode:  # §2.4.2: each list member a separate value
                members = [named(spec.name, enc(v)) if op.named else enc(v) for v in value]
                out.append(op.sep.join(members))
                continue
            text = ",".join(enc(v) for v in value)
        out.append(named(spec.name, text) if op.named else text)
    return op.first + op.sep.join(out) if out else ""


# --- Matching: a program, and a linear-time search over it ---------------------------------
#
# A template compiles to a little program, like a regular expression's: LIT matches text,
# RUN a run of characters from a class (the value of a variable), SPLIT tries its next
# instruction and, failing that, its target, SAVE records a position. The search is
# depth-first in that order, so it finds the same match a backtracking regex would (each
# RUN as long as possible, leftmost first), but never tries a (instruction, position) pair
# twice: the outcome from there can't depend on how it was reached.

_LIT, _RUN, _SPLIT, _JUMP, _SAVE, _SEP, _NONEMPTY, _END = range(8)
_NOTHING: Final = re.compile("")


class _Instruction(NamedTuple):
    code: int
    text: str = ""  # LIT, SEP: the text to match; SEP, NONEMPTY: the character to look behind
    after: str = ""  # SEP: no separator is needed right after this character
    target: int = 0  # SPLIT, JUMP: where to go; SAVE: the slot
    pattern: re.Pattern[str] = _NOTHING  # RUN: a run of the value's characters
    minimum: int = 0  # RUN: 1 when the run may not be empty
    limit: int = 0  # RUN: a prefix modifier's length, or 0
    bounded: re.Pattern[str] = _NOTHING  # RUN: a run of at most `limit` characters


# The kinds of captured text, and how each becomes a value.
_STRING, _PARAMETER, _EXPLODED, _EXPLODED_NAMED = range(4)


class _Capture(NamedTuple):
    name: str  # the variable
    slot: int  # where its start is saved; its end is saved at slot + 1
    kind: int
    sep: str  # _EXPLODED, _EXPLODED_NAMED: what separates members
    prefix: int | None
    allow_reserved: bool
    key: str  # _EXPLODED_NAMED: the name a list member is written with (hex uppercased)


def _unit_pattern(chars: str) -> str:
    """A pattern for one character of a value.

    One of ``chars``, or a pct-encoded UTF-8 sequence (a lead octet and its continuation
    octets, so a prefix counts characters as §2.4.1 does). The URI's hex digits are
    uppercased before matching.
    """
    return rf"(?:[{re.escape(chars)}]|%[0-9A-F]{{2}}(?:%[89AB][0-9A-F])*)"


@functools.lru_cache(maxsize=256)
def _run_pattern(unit: str, limit: int) -> re.Pattern[str]:
    """The longest run of ``unit`` (of at most ``limit`` of them, unless 0)."""
    return re.compile(f"{unit}{{0,{limit}}}" if limit else f"{unit}*")


class _Compiler:
    """Builds the match program of a parsed template."""

    def __init__(self) -> None:
        self.program: list[_Instruction] = []
        self.captures: list[_Capture] = []

    def emit(
        self,
        code: int,
        *,
        text: str = "",
        after: str = "",
        target: int = 0,
        pattern: re.Pattern[str] = _NOTHING,
        minimum: int = 0,
        limit: int = 0,
        bounded: re.Pattern[str] = _NOTHING,
    ) -> int:
        self.program.append(
            _Instruction(code, text, after, target, pattern, minimum, limit, bounded)
        )
        return len(self.program) - 1

    def here(self, *at: int) -> None:
        """Point the SPLITs or JUMPs at ``at`` to the next instruction."""
        for index in at:
            self.program[index] = self.program[index]._replace(target=len(self.program))

    def capture(self, name: str, kind: int, op: _Operator, spec: _VarSpec) -> int:
        slot = 2 * len(self.captures)
        key = _PCT_TRIPLET.sub(_upper_triplet, name)
        self.captures.append(
            _Capture(name, slot, kind, op.sep, spec.prefix, op.allow_reserved, key)
        )
        return slot

    def run(self, chars: str, prefix: int | None, minimum: int) -> None:
        unit = _unit_pattern(chars)
        self.emit(
            _RUN,
            pattern=_run_pattern(unit, 0),
            minimum=minimum,
            limit=prefix or 0,
            bounded=_run_pattern(unit, prefix) if prefix else _NOTHING,
        )

    def saved_run(
        self, spec: _VarSpec, op: _Operator, kind: int, chars: str, minimum: int, *, stop: str = ""
    ) -> None:
        """A variable's value; if ``stop`` is given, preferably one that doesn't contain it."""
        slot = self.capture(spec.name, kind, op, spec)
        self.emit(_SAVE, target=slot)
        if stop and stop in chars:
            wide = self.emit(_SPLIT)
            self.run(chars.replace(stop, ""), spec.prefix, minimum)
            join = self.emit(_JUMP)
            self.here(wide)
            self.run(chars, spec.prefix, minimum)
            self.here(join)
        else:
            self.run(chars, spec.prefix, minimum)
        self.emit(_SAVE, target=slot + 1)

    def literal(self, text: str) -> None:
        self.emit(_LIT, text=_PCT_TRIPLET.sub(_upper_triplet, text))

    def expression(self, expression: _Expression) -> None:
        op = expression.operator
        if op.named:
            self.named(expression)
            return
        value_chars = _UNRESERVED + (_RESERVED if op.allow_reserved else "")
        last = len(expression.varspecs) - 1
        # Unnamed operators with a lead character (".", "/") write it before every value,
        # so each variable is optional on its own. The others ("", "+", "#") write
        # "first" once and "," between values: absent variables can't be told apart, so
        # values fill the variables from the left and the missing ones are the last.
        each_optional = op.first == op.sep
        skips: list[int] = []
        if op.first and not each_optional:
            skips.append(self.emit(_SPLIT))
            self.literal(op.first)
        for index, spec in enumerate(expression.varspecs):
            if each_optional:
                skip = self.emit(_SPLIT)
                self.literal(op.sep)
            elif index:
                skips.append(self.emit(_SPLIT))
                self.literal(op.sep)
            # The first value of "" and "+" must be non-empty: "" expands to nothing.
            minimum = 0 if op.first or index else 1
            if spec.explode:
                # Members are separated by sep; a mapping's members are key=value.
                chars = value_chars + op.sep + "="
                self.saved_run(spec, op, _EXPLODED, chars, minimum)
            else:
                # A value may contain the separator (a "," with "+", a "." with "."); but
                # every variable except the last stops at it if the URI allows.
                stop = op.sep if index < last else ""
                self.saved_run(spec, op, _STRING, value_chars, minimum, stop=stop)
            if each_optional:
                self.here(skip)
        self.here(*skips)

    def named(self, expression: _Expression) -> None:
        """``;``, ``?`` and ``&``: each value written name=value after a separator."""
        op = expression.operator
        # "?" writes "?" first and "&" between: after the "?" itself, no "&" is due.
        whole = -1
        if op.first != op.sep:
            whole = self.emit(_SPLIT)
            self.literal(op.first)
        for spec in expression.varspecs:
            skip = self.emit(_SPLIT)
            if spec.explode:
                slot = self.capture(spec.name, _EXPLODED_NAMED, op, spec)
                self.emit(_SAVE, target=slot)
                again = self.separator(op)
                self.run(_UNRESERVED, None, 1)  # the key: the name, or a mapping's key
                self.parameter_value(op, None)
                more = self.emit(_SPLIT)
                self.emit(_JUMP, target=again)
                self.here(more)
                self.emit(_SAVE, target=slot + 1)
            else:
                self.separator(op)
                self.literal(spec.name)
                slot = self.capture(spec.name, _PARAMETER, op, spec)
                self.emit(_SAVE, target=slot)
                self.parameter_value(op, spec.prefix)
                self.emit(_SAVE, target=slot + 1)
            self.here(skip)
        if whole >= 0:
            self.emit(_NONEMPTY, text=op.first)  # at least one parameter after the "?"
            self.here(whole)

    def separator(self, op: _Operator) -> int:
        if op.first == op.sep:
            return self.emit(_LIT, text=op.sep)
        return self.emit(_SEP, text=op.sep, after=op.first)

    def parameter_value(self, op: _Operator, prefix: int | None) -> None:
        """The "=value" of a parameter: optional for ";", where an empty value has none."""
        if op.ifemp:
            self.literal("=")
            self.run(_UNRESERVED, prefix, 0)
            return
        skip = self.emit(_SPLIT)
        self.literal("=")
        self.run(_UNRESERVED, prefix, 1)
        self.here(skip)


class _OutOfStepsError(Exception):
    """The search took `MAX_MATCH_STEPS` steps."""


_GO, _UNDO, _MORE = range(3)


def _shorter(uri: str, end: int) -> int:
    """The end of the next shorter run: the closest character boundary before ``end``.

    Not inside a pct-encoded octet, nor before a continuation octet (%80-%BF), so a run
    never splits a UTF-8 sequence. -1 when there is none.
    """
    end -= 1
    while end > 0 and (
        uri[end - 1] == "%"
        or (end > 1 and uri[end - 2] == "%")
        or (uri.startswith("%", end) and uri[end + 1] in "89AB")
    ):
        end -= 1
    return end


class _Search:
    """One match of a program against a URI: a depth-first search that never repeats.

    Depth-first, preferring a SPLIT's next instruction and a RUN's longest end, with an
    explicit stack of jobs (go on from a position, undo a SAVE, try a RUN's next shorter
    end). Three things keep it linear in the URI:

    * each (instruction, position) is visited once;
    * each RUN hands out each end once, whatever position it starts from: an end handed
      out before has failed, or is on the way to this very point, so it's skipped (the
      ends handed out are a union-find forest, so skipping a stretch of them is cheap);
    * the longest run of a character class from a position is remembered as an interval,
      so starting again inside it (or just before it) doesn't rescan it.

    Steps are counted (an instruction is one, scanning 16 characters is one), and the
    search gives up after `MAX_MATCH_STEPS`.
    """

    __slots__ = ("given", "length", "runs", "steps", "uri", "width")

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.length = len(uri)
        self.width = self.length + 1
        # RUN pc * width + an end handed out -> the next shorter end (maybe handed out too)
        self.given: dict[int, int] = {}
        # a class's pattern -> the last run scanned: its start and end
        self.runs: dict[re.Pattern[str], tuple[int, int]] = {}
        self.steps = MAX_MATCH_STEPS

    def spend(self, steps: int) -> None:
        self.steps -= steps
        if self.steps < 0:
            raise _OutOfStepsError

    def longest(self, ins: _Instruction, pos: int) -> int:
        """The end of the longest run a RUN can take from ``pos``."""
        start, end = self.runs.get(ins.pattern, (-1, -1))
        if not start <= pos <= end:
            stop = start if pos < start else self.length
            found = ins.pattern.match(self.uri, pos, stop)  # matches: the run may be empty
            reached = found.end() if found else pos
            self.spend((reached - pos) >> 4)
            end = end if pos < start and reached == start else reached
            self.runs[ins.pattern] = (pos, end)
        if ins.limit and end - pos > ins.limit:
            # A prefix: at most `limit` characters. Without pct-encoding, one per character.
            if self.uri.find("%", pos, pos + ins.limit) < 0:
                return pos + ins.limit
            self.spend(ins.limit >> 4)
            found = ins.bounded.match(self.uri, pos)
            return found.end() if found else pos
        return end

    def unused(self, base: int, end: int) -> int:
        """The longest end up to ``end`` that the RUN at ``base`` hasn't handed out (or -1)."""
        path = []
        while end >= 0 and base + end in self.given:
            path.append(base + end)
            end = self.given[base + end]
        for key in path:  # path compression
            self.given[key] = end
        self.spend(len(path))
        return end

    def run(self, program: tuple[_Instruction, ...], slots: int) -> list[int] | None:  # noqa: PLR0915 (the hot loop, kept whole)
        """The saved positions of the first way ``program`` matches the URI, or None.

        Raises:
            _OutOfStepsError: after `MAX_MATCH_STEPS` steps.
        """
        uri, length, width = self.uri, self.length, self.width
        saved = [-1] * slots
        visited: set[int] = set()
        stack: list[tuple[int, int, int, int]] = [(_GO, 0, 0, 0)]
        while stack:
            job, pc, pos, least = stack.pop()
            if job == _UNDO:  # pc: the slot; pos: its old value
                saved[pc] = pos
                continue
            if job == _MORE:  # pc: the RUN; pos: the end it handed out last
                pos = self.unused(pc * width, pos)
                if pos < least:
                    continue
                self.given[pc * width + pos] = _shorter(uri, pos)
                stack.append((_MORE, pc, pos, least))
                pc += 1
            while True:
                self.steps -= 1
                if self.steps < 0:
                    raise _OutOfStepsError
                state = pc * width + pos
                if state in visited:
                    break
                visited.add(state)
                ins = program[pc]
                code = ins.code
                if code == _LIT:
                    if not uri.startswith(ins.text, pos):
                        break
                    pos += len(ins.text)
                    pc += 1
                elif code == _RUN:
                    least = pos + ins.minimum
                    end = self.unused(pc * width, self.longest(ins, pos))
                    if end < least:
                        break
                    self.given[pc * width + end] = _shorter(uri, end)
                    stack.append((_MORE, pc, end, least))
                    pc, pos = pc + 1, end
                elif code == _SPLIT:
                    stack.append((_GO, ins.target, pos, 0))
                    pc += 1
                elif code == _JUMP:
                    pc = ins.target
                elif code == _SAVE:
                    stack.append((_UNDO, ins.target, saved[ins.target], 0))
                    saved[ins.target] = pos
                    pc += 1
                elif code == _SEP:
                    if uri[pos - 1] != ins.after:
                        if not uri.startswith(ins.text, pos):
                            break
                        pos += len(ins.text)
                    pc += 1
                elif code == _NONEMPTY:
                    if uri[pos - 1] == ins.text:
                        break
                    pc += 1
                else:  # _END
                    if pos == length:
                        return saved
                    break
        return None


def _decoded_list(raw: list[str]) -> list[str] | None:
    items = [_decode(item) for item in raw]
    return [item for item in items if item is not None] if None not in items else None


def _decoded_dict(pairs: list[tuple[str, str, str]]) -> dict[str, str] | None:
    mapping: dict[str, str] = {}
    for raw_key, _, raw_value in pairs:
        key, value = _decode(raw_key), _decode(raw_value)
        if key is None or value is None or key in mapping:
            return None
        mapping[key] = value
    return mapping


def _members(text: str, capture: _Capture) -> list[str] | dict[str, str] | None:
    """An exploded variable's captured text as a list, or a mapping (§2.4.2).

    A mapping when every member is key=value; None if the members are neither, or a key
    repeats.
    """
    if capture.kind == _EXPLODED_NAMED:
        # ";list=a;list=b", "?list=a&list=b": a list writes each member with its own name.
        pairs = [member.partition("=") for member in text.split(capture.sep) if member]
        if all(key == capture.key for key, _, _ in pairs):
            return _decoded_list([value for _, _, value in pairs])
        return _decoded_dict(pairs)
    members = text.split(capture.sep)
    with_equals = sum("=" in member for member in members)
    if with_equals == len(members):
        return _decoded_dict([member.partition("=") for member in members])
    # "=" in a list member is pct-encoded, except with "+" and "#".
    if with_equals and not capture.allow_reserved:
        return None
    return _decoded_list(members)


def _value(text: str, capture: _Capture) -> MatchValue | None:
    if capture.kind == _STRING:
        return _decode(text)
    if capture.kind == _PARAMETER:
        return _decode(text[1:])  # "" or "=value"
    return _members(text, capture)


# --- The template ---------------------------------------------------------------------------


class UriTemplate:
    """An RFC 6570 URI template (levels 1-4), parsed once, to expand and to match.

    `expand` follows the RFC exactly. `match` is its inverse: the variables of a URI that
    the template could expand to, pct-decoded, or None. The rules:

    * The URI must be at most `MAX_URI_LENGTH` characters of URI syntax (RFC 3986:
      unreserved, reserved, and ``%`` only in well-formed pct-encoded octets), or nothing
      matches. Hex digits match in either case.
    * Literal text matches the text expansion writes for it: itself, or pct-encoded
      UTF-8 for characters a URI can't contain (``{x}é`` matches ``1%C3%A9``).
    * A variable's value matches what expanding a string could write: for ``{var}``,
      ``{.var}``, ``{/var}``, ``{;var}``, ``{?var}`` and ``{&var}``, unreserved characters
      and pct-encoded octets, so ``{id}`` stops at ``/``, ``?``, ``#``, ``,`` and such;
      ``{+var}`` and ``{#var}`` allow reserved characters too, so ``file:///{+path}``
      captures ``a/b/c.txt``. Values come back pct-decoded, all of them (``{+path}``
      gives ``a/b`` for both ``a/b`` and ``a%2Fb``, and ``{id}`` gives ``a/b`` for
      ``a%2Fb``). A value whose octets are not UTF-8 makes the match fail; the search
      never splits a UTF-8 sequence between two variables.
    * ``{var}`` and ``{+var}`` never match the empty string: an empty value and an
      undefined one both expand to nothing, so ``test://template/{id}/data`` does not
      match ``test://template//data``. (In ``{a,b}`` and ``{+a,b}`` the first value must
      be non-empty.) The other operators write something even for an empty value
      (``{/var}`` writes ``/``, ``{?var}`` writes ``?var=``), so there ``""`` matches
      back; ``{;var}`` matches ``;var`` as ``""``, and ``;var=`` not at all.
    * Other variables may be absent, as expansion omits undefined ones; an absent
      variable is missing from the result. For ``.``, ``/``, ``;``, ``?`` and ``&`` each
      variable is optional on its own, and named ones must appear in template order:
      ``{?a,b}`` matches ``?a=1``, ``?b=2``, ``?a=1&b=2`` and the empty string, not
      ``?b=2&a=1``. For ``{a,b}``, ``{+a,b}`` and ``{#a,b}`` absent variables are
      indistinguishable, so values fill the variables from the left. In a
      multi-variable expression every variable but the last stops at the separator if
      it can (``{.x,y}`` splits ``.1024.768`` as ``x="1024"``, ``y="768"``).
    * A prefix ``{var:3}`` matches at most 3 characters (pct-decoded characters, as the
      RFC counts them), and gives only those: the rest of the value is not in the URI.
    * Exploded variables give lists, or mappings when every member is ``key=value``:
      ``{/path*}`` matches ``/a/b/c`` as ``["a", "b", "c"]``, ``{?list*}`` matches
      ``?list=a&list=b`` as ``["a", "b"]`` (members named after the variable), and
      ``{?map*}`` matches ``?x=1&y=2`` as ``{"x": "1", "y": "2"}``. An exploded variable
      takes as many members as it can. Members separated by a character a member may
      contain (``.`` for ``{.list*}``, ``,`` for ``{+list*}``) can't be told apart, nor
      a one-member mapping keyed by the variable's own name from a list. A non-exploded
      variable always gives a string: ``{list}`` matches ``a,b`` only where ``,`` is
      allowed (``{+list}``), as ``"a,b"``.
    * A variable used twice must match the same value (a prefix: the value's prefix),
      and be present in both places or in neither.
    * When the URI can be split between variables in more than one way, each variable
      takes as much as it can, leftmost first, as a backtracking regex would
      (``{+path}/{name}`` gives ``path="a/b"``, ``name="c"`` for ``a/b/c``); if any split
      works, one is found. The search is linear in the URI (see `MAX_MATCH_STEPS`).

    So ``match(expand(values)) == values`` holds for string values except where a rule
    above says the URI can't tell: an empty or undefined ``{var}``/``{+var}``, a value
    containing a character that separates it from the next variable, and a ``+``/``#``
    value containing pct-encoded triplets (expansion copies them; matching decodes them).

    A matched value is any string at all once decoded: ``%2F``, ``%2E%2E`` and ``%00``
    decode to ``/``, ``..`` and NUL in every operator. Treat values as untrusted input
    (a ``{+path}`` resolved against a directory must be checked to stay inside it).

    Templates compare, hash and print as their text.

    Attributes:
        template: the template's text.
        variables: the variable names in order of first appearance.
    """

    __slots__ = ("_captures", "_parts", "_program", "template", "variables")

    def __init__(self, template: str) -> None:
        """Parse ``template``.

        Raises:
            InvalidTemplate: if it doesn't follow RFC 6570 §2, or exceeds a limit
                (`MAX_TEMPLATE_LENGTH`, `MAX_EXPRESSIONS`, `MAX_VARSPECS`).
        """
        self.template = template
        self._parts = _parse(template)
        names = [
            spec.name for part in self._parts if not isinstance(part, str) for spec in part.varspecs
        ]
        self.variables: tuple[str, ...] = tuple(dict.fromkeys(names))
        compiler = _Compiler()
        for part in self._parts:
            if isinstance(part, str):
                compiler.literal(part)
            else:
                compiler.expression(part)
        compiler.emit(_END)
        self._program = tuple(compiler.program)
        self._captures = tuple(compiler.captures)

    def expand(self, values: Mapping[str, object]) -> str:
        """The URI for ``values`` (RFC 6570 §3).

        Args:
            values: the variables' values: a str, int, float or bool (written ``1024``,
                ``1.5``, ``true``), a list or tuple of those (a value list), or a mapping
                of them (an associative array, in its order). A missing name or None is
                undefined and skipped; so is an empty list or mapping.

        Returns:
            The expansion: every character outside the operator's allowed set
            pct-encoded as UTF-8.

        Raises:
            TypeError: for a value of another type.
            ValueError: for a prefix modifier on a list or mapping (§2.4.1), or a string
                that can't be encoded as UTF-8 (a lone surrogate).
        """
        return "".join(
            part if isinstance(part, str) else _expand(part, values) for part in self._parts
        )

    def match(self, uri: str) -> dict[str, MatchValue] | None:
        """The variables this template expands to ``uri`` with, or None (see the class).

        Args:
            uri: the URI to match, at most `MAX_URI_LENGTH` characters.

        Returns:
            Each variable present in the URI, pct-decoded: a str, or for an exploded
            variable a list of str or a dict of str to str. None if the template can't
            produce ``uri``.
        """
        if len(uri) > MAX_URI_LENGTH or _NOT_URI.search(uri):
            return None
        if "%" in uri:
            uri = _PCT_TRIPLET.sub(_upper_triplet, uri)
        first = self._program[0]
        if first.code == _LIT and not uri.startswith(first.text):
            return None  # the common miss: another scheme or path
        try:
            saved = _Search(uri).run(self._program, 2 * len(self._captures))
        except _OutOfStepsError:
            return None
        if saved is None:
            return None
        result: dict[str, MatchValue] = {}
        prefixes: dict[str, list[tuple[int, str]]] = {}
        absent: set[str] = set()
        for capture in self._captures:
            start, end = saved[capture.slot], saved[capture.slot + 1]
            if start < 0:
                absent.add(capture.name)
                continue
            value = _value(uri[start:end], capture)
            if value is None:
                return None
            if capture.prefix is not None and isinstance(value, str):
                prefixes.setdefault(capture.name, []).append((capture.prefix, value))
            elif result.setdefault(capture.name, value) != value:
                return None
        for name, truncated in prefixes.items():
            full = result.setdefault(name, max((value for _, value in truncated), key=len))
            if not isinstance(full, str) or any(full[:n] != value for n, value in truncated):
                return None
        if absent & result.keys():
            return None  # expansion writes a defined variable everywhere it appears
        return result

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UriTemplate):
            return NotImplemented
        return self.template == other.template

    def __hash__(self) -> int:
        return hash(self.template)


def is_template(text: str) -> bool:
    """Whether ``text`` is a valid URI template with at least one expression.

    A URI with no ``{...}`` (a static resource's) is not a template; nor is text that
    isn't valid RFC 6570.
    """
    if "{" not in text:
        return False
    try:
        return any(not isinstance(part, str) for part in _parse(text))
    except InvalidTemplate:
        return False
