"""Matching a URI back to a template's variables: a compiled program and its search.

A parsed template compiles (`_Compiler`) to a little program, like a regular
expression's; `_Search` runs it against a URI in time linear in the URI, and `_value`
turns the text each variable captured into its pct-decoded value. `UriTemplate.match`
drives the three and reconciles the values (a variable used twice, prefixes). The
matching rules are documented on `UriTemplate`; why this is not an `re` pattern, on
`mcpcore.uritemplate`. The compiler and the search are one module because they share
the instruction set, whose meaning is split between them.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple, TypeAlias
from urllib.parse import unquote_to_bytes

from mcpcore.uritemplate._grammar import (
    _PCT_TRIPLET,
    _RESERVED,
    _UNRESERVED,
    _Expression,
    _Operator,
    _VarSpec,
)
from mcpcore.uritemplate._limits import MAX_MATCH_STEPS

#: What `UriTemplate.match` gives for one variable: a string, or for an exploded variable
#: (``{/path*}``, ``{?list*}``) a list of strings or a mapping.
MatchValue: TypeAlias = str | list[str] | dict[str, str]

# What a URI can't contain: a character that is not unreserved, reserved or "%", or a "%"
# that does not start a pct-encoded octet (RFC 3986 §2).
_NOT_URI: Final = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})")


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


# --- The program ----------------------------------------------------------------------------
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


class _Value(NamedTuple):
    """How a variable's value is matched, wherever the program matches it."""

    slot: int  # its capture's
    chars: str  # what it may contain
    prefix: int | None
    stop: str = ""  # one it preferably lacks: the separator, except in the last variable


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

    def saved_run(self, value: _Value, minimum: int) -> None:
        """A variable's value (of at least ``minimum`` characters), saved in its slot."""
        chars, stop = value.chars, value.stop
        self.emit(_SAVE, target=value.slot)
        if stop and stop in chars:
            wide = self.emit(_SPLIT)
            self.run(chars.replace(stop, ""), value.prefix, minimum)
            join = self.emit(_JUMP)
            self.here(wide)
            self.run(chars, value.prefix, minimum)
            self.here(join)
        else:
            self.run(chars, value.prefix, minimum)
        self.emit(_SAVE, target=value.slot + 1)

    def literal(self, text: str) -> None:
        self.emit(_LIT, text=_PCT_TRIPLET.sub(_upper_triplet, text))

    def expression(self, expression: _Expression) -> None:
        op = expression.operator
        if op.named:
            self.named(expression)
            return
        # Each variable's capture, and how its value is matched (the same wherever the
        # program matches it).
        values: list[_Value] = []
        value_chars = _UNRESERVED + (_RESERVED if op.allow_reserved else "")
        last = len(expression.varspecs) - 1
        for index, spec in enumerate(expression.varspecs):
            if spec.explode:
                # Members are separated by sep; a mapping's members are key=value.
                slot = self.capture(spec.name, _EXPLODED, op, spec)
                values.append(_Value(slot, value_chars + op.sep + "=", spec.prefix))
            else:
                # A value may contain the separator (a "," with "+", a "." with "."); but
                # every variable except the last stops at it if the URI allows.
                slot = self.capture(spec.name, _STRING, op, spec)
                stop = op.sep if index < last else ""
                values.append(_Value(slot, value_chars, spec.prefix, stop))
        if op.first == op.sep:
            self.each_optional(op, values)
        else:
            self.listed(op, values)

    def each_optional(self, op: _Operator, values: list[_Value]) -> None:
        """``.`` and ``/`` write their lead character before every value: each is optional."""
        for value in values:
            skip = self.emit(_SPLIT)
            self.literal(op.sep)
            self.saved_run(value, 0)
            self.here(skip)

    def listed(self, op: _Operator, values: list[_Value]) -> None:
        """``""``, ``+`` and ``#``: "first" once before the first value, "," between values.

        Which variables are absent can't be seen, so values fill the variables from the
        left: the search tries each variable present before absent. A variable is absent
        only where no split fills it (``{a,b:2,c}`` against ``0,000``: ``a`` and ``c``).
        Whether a separator is due depends on whether a value was written before, so the
        program has each variable twice: before any value (after "first", and for ``""``
        and ``+`` non-empty: an empty value expands to nothing) and after one (after ",").
        """
        if len(values) == 1 and not op.first:  # ({id}, {+path}: the value, never absent)
            self.saved_run(values[0], 1)
            return
        # Before any value: each variable either the first one written, or absent. All
        # absent, "#" writes nothing; "" and "+" would write nothing either, which they
        # never match (see `UriTemplate`): their last variable is then present.
        written: list[int] = []  # JUMPs to the variables after the first one written
        minimum = 0 if op.first else 1
        for index, value in enumerate(values):
            skip = self.emit(_SPLIT) if op.first or index < len(values) - 1 else -1
            if op.first:
                self.literal(op.first)
            self.saved_run(value, minimum)
            written.append(self.emit(_JUMP))
            if skip >= 0:
                self.here(skip)
        nothing = [self.emit(_JUMP)] if op.first else []
        # After a value: each following variable either written after ",", or absent.
        arriving = [written[0]]
        for index, value in enumerate(values[1:], start=1):
            self.here(*arriving)
            skip = self.emit(_SPLIT)
            self.literal(op.sep)
            self.saved_run(value, 0)
            arriving = [written[index], skip]  # (and the value's end, falling through)
        self.here(*arriving, *nothing)

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


# --- The search -----------------------------------------------------------------------------


class _OutOfStepsError(Exception):
    """The search ran out of steps (`MAX_MATCH_STEPS`)."""


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
    search gives up after ``steps`` of them (`MAX_MATCH_STEPS` unless told).
    """

    __slots__ = ("given", "length", "runs", "steps", "uri", "width")

    def __init__(self, uri: str, steps: int = MAX_MATCH_STEPS) -> None:
        self.uri = uri
        self.length = len(uri)
        self.width = self.length + 1
        # RUN pc * width + an end handed out -> the next shorter end (maybe handed out too)
        self.given: dict[int, int] = {}
        # a class's pattern -> the last run scanned: its start and end
        self.runs: dict[re.Pattern[str], tuple[int, int]] = {}
        self.steps = steps

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

    # One branch per opcode: the matcher's instruction loop, the hot path, kept in one frame.
    def run(self, program: tuple[_Instruction, ...], slots: int) -> list[int] | None:  # noqa: C901, PLR0912, PLR0915
        """The saved positions of the first way ``program`` matches the URI, or None.

        Raises:
            _OutOfStepsError: when the steps run out.
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


# --- Values ---------------------------------------------------------------------------------


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
        pairs = [member.partition("=") for member in members]
        # key=value: an "=" in the value is pct-encoded too, except with "+" and "#".
        if not capture.allow_reserved and any("=" in value for _, _, value in pairs):
            return None
        return _decoded_dict(pairs)
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
