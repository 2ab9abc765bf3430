"""Finding files by name (a glob) and lines by content (a regular expression).

Both patterns come from the client, so both run on RE2 (``google-re2``), whose matching
time is linear in the text: no pattern, however crafted, backtracks catastrophically
(``(a+)+$`` on a line of ``a``s costs what any pattern costs). That was chosen over
rejecting "dangerous" patterns, which no list of rules catches completely, and over a
time budget alone, which Python's ``re`` can't enforce inside one match. RE2 has no
backreferences or look-around; a pattern using them is refused with RE2's reason. The
program a pattern compiles to is capped (`MAX_REGEX_MEMORY`), and so is its length.

The functions here block (file system calls, matching): the tools run them in worker
threads, a batch of files at a time, and check the time budget between files and every
`LINES_PER_CHECK` lines.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import re2

from mcpcore_cli.folder.opening import (
    AccessRefusedError,
    FileMissingError,
    FileTooLargeError,
    Root,
    read_file,
)

__all__ = [
    "LINES_PER_CHECK",
    "MAX_LINE_SHOWN",
    "MAX_PATTERN_LENGTH",
    "MAX_REGEX_MEMORY",
    "BatchResult",
    "FoundLine",
    "InvalidPatternError",
    "compile_glob",
    "compile_regex",
    "grep_files",
]

#: The longest glob or regular expression accepted, in characters: far beyond any a
#: person types, and a bound on the work of compiling one.
MAX_PATTERN_LENGTH: Final = 1000
#: Memory RE2 may use for one compiled pattern (its default is 8 MiB): enough for any
#: reasonable pattern, small enough that many cached ones stay cheap.
MAX_REGEX_MEMORY: Final = 4 * 1024 * 1024
#: Characters of a matching line shown in a result; the rest is cut (minified files
#: have lines of megabytes).
MAX_LINE_SHOWN: Final = 300
#: Lines matched between two looks at the clock within one file.
LINES_PER_CHECK: Final = 2048
#: Bytes looked at for a NUL to call a file binary (and skip it), as grep does.
BINARY_SNIFF: Final = 8192
# Anchors and flag changes under which a whole-text search can miss a line's match
# (the whole-text pre-check is then skipped and every line searched).
_WHOLE_TEXT_UNSAFE: Final = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-")


class InvalidPatternError(ValueError):
    """A glob or regular expression that can't be used; the message says why."""


def _options(*, ignore_case: bool = False) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print parse errors to stderr
    options.max_mem = MAX_REGEX_MEMORY
    options.case_sensitive = not ignore_case
    return options


def compile_regex(pattern: str, *, ignore_case: bool = False) -> Any:
    """An RE2 pattern, or `InvalidPatternError` saying why not."""
    if not pattern or len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidPatternError(f"the pattern must be 1 to {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(pattern, _options(ignore_case=ignore_case))
    except re2.error as exc:
        raise InvalidPatternError(f"invalid regular expression: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else "not RE2 syntax"
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


class GlobMatcher:
    """A glob, matched against a file's path (with a ``/``) or else its name.

    ``*`` matches within one name, ``?`` one character, ``[abc]``/``[!abc]`` one of (or
    none of) a set, ``**`` any number of folders: ``*.py`` finds every Python file,
    ``src/**/test_*.py`` the tests under ``src``, ``docs/*.md`` those right in ``docs``.
    """

    __slots__ = ("_by_path", "_program")

    def __init__(self, glob: str) -> None:
        if not glob or len(glob) > MAX_PATTERN_LENGTH:
            raise InvalidPatternError(f"the pattern must be 1 to {MAX_PATTERN_LENGTH} characters")
        self._by_path = "/" in glob
        try:
            self._program = re2.compile(_translate(glob.lstrip("/")), _options())
        except re2.error as exc:
            raise InvalidPatternError(f"invalid glob: {_reason(exc)}") from None

    def matches(self, parts: tuple[str, ...]) -> bool:
        """Whether the file at ``parts`` (relative to the folder) matches."""
        subject = "/".join(parts) if self._by_path else parts[-1]
        return self._program.fullmatch(subject) is not None


def compile_glob(glob: str) -> GlobMatcher:
    """A `GlobMatcher`, or `InvalidPatternError` saying why not."""
    return GlobMatcher(glob)


def _translate(glob: str) -> str:
    """The glob as an RE2 pattern matching a whole path."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/"):
            end = i + 2
            if end == n:
                out.append(".*")  # "docs/**": everything under docs
                i = end
                continue
            if glob[end] == "/":
                out.append("(?:[^/]*/)*")  # "**/": any number of folders, none included
                i = end + 1
                continue
        if char == "*":
            while i < n and glob[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            translated, i = _character_set(glob, i)
            out.append(translated)
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _character_set(glob: str, start: int) -> tuple[str, int]:
    """``[...]`` at ``start``: the RE2 class and the index after it (or a literal ``[``)."""
    i = start + 1
    negated = i < len(glob) and glob[i] == "!"
    if negated:
        i += 1
    body_start = i
    if i < len(glob) and glob[i] == "]":
        i += 1  # "[]]": a leading "]" is a member
    while i < len(glob) and glob[i] != "]":
        i += 1
    if i >= len(glob):
        return re.escape("["), start + 1  # never closed: a literal "["
    members = "".join(char if char == "-" else re.escape(char) for char in glob[body_start:i])
    # A name never contains "/", so a set never matches one.
    return (f"[^/{members}]" if negated else f"[{members}]"), i + 1


@dataclass(frozen=True, slots=True)
class FoundLine:
    """A line that matched.

    Attributes:
        parts: The file's path, as segments.
        number: The line's number, from 1.
        text: The line, cut to `MAX_LINE_SHOWN` characters.
    """

    parts: tuple[str, ...]
    number: int
    text: str


@dataclass(slots=True)
class BatchResult:
    """What grepping one batch of files found."""

    lines: list[FoundLine] = field(default_factory=list)
    searched: int = 0
    skipped: int = 0
    out_of_time: bool = False


def grep_files(
    root: Root,
    files: Iterable[tuple[str, ...]],
    pattern: Any,
    *,
    max_size: int,
    max_lines: int,
    deadline: float,
) -> BatchResult:
    """Search ``files`` line by line for ``pattern``; at most ``max_lines`` lines.

    Binary files, files larger than ``max_size`` and files that can't be read are
    skipped (counted in ``skipped``). Stops at ``deadline`` (`time.monotonic`).
    """
    result = BatchResult()
    whole_text = None
    if _WHOLE_TEXT_UNSAFE.search(pattern.pattern) is None:
        whole_text = re2.compile("(?m)" + pattern.pattern, pattern.options)
    for parts in files:
        if len(result.lines) >= max_lines:
            break
        if time.monotonic() > deadline:
            result.out_of_time = True
            break
        try:
            data = read_file(root, parts, max_size).data
        except (FileMissingError, AccessRefusedError, FileTooLargeError, OSError):
            result.skipped += 1
            continue
        if b"\x00" in data[:BINARY_SNIFF]:
            result.skipped += 1
            continue
        result.searched += 1
        # One linear pass over the whole file rules most files out at once.
        if whole_text is not None and whole_text.search(data) is None:
            continue
        if _grep_lines(parts, data, pattern, result, max_lines=max_lines, deadline=deadline):
            result.out_of_time = True
            break
    return result


def _grep_lines(
    parts: tuple[str, ...],
    data: bytes,
    pattern: Any,
    result: BatchResult,
    *,
    max_lines: int,
    deadline: float,
) -> bool:
    """Add the file's matching lines to ``result``; whether time ran out."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if number % LINES_PER_CHECK == 0 and time.monotonic() > deadline:
            return True
        if pattern.search(line) is None:
            continue
        text = line[: 4 * MAX_LINE_SHOWN].decode("utf-8", "replace").rstrip("\r")
        result.lines.append(FoundLine(parts, number, text[:MAX_LINE_SHOWN]))
        if len(result.lines) >= max_lines:
            break
    return False
