"""The folder's ``.gitignore`` rules, honoured as git and ripgrep honour them.

Unless the folder is served with ``--no-ignore``, a file git would ignore is not served:
not listed, not readable, not searched, not completed, not announced. The rules are:

* the patterns of the ``.gitignore`` file of every folder from the served folder down to
  the file's own, each relative to the folder that holds it; a deeper file overrides a
  shallower one, and within one file the last matching line wins (``!`` re-includes);
* below them, the patterns of ``.git/info/exclude`` (relative to the served folder);
* nothing under an ignored folder is served, whatever a later line says: git never
  looks inside one ("It is not possible to re-include a file if a parent directory of
  that file is excluded", gitignore(5)), and neither does the walk.

The patterns are git's own, matched by ``pathspec``'s `GitIgnoreSpec`. Only files inside
the served folder are read: not the ``.gitignore`` files of the folders above it, nor
the user's global excludes file. Like git since 2.32, a ``.gitignore`` that is a symlink
is not followed. A line that is not a valid pattern is skipped, as git skips it.

Each walk of the folder reads the rules afresh, so an edit to a ``.gitignore`` takes
effect at the next rescan. A hostile folder can't make the rules costly: each file is
read up to `MAX_IGNORE_FILE_SIZE`, at most `MAX_IGNORE_FILES_PER_PATH` of them apply to
one path, one walk honours at most `MAX_IGNORE_PATTERNS` patterns, and compiled files
are cached by content (`MAX_CACHED_PATTERNS`), so an unchanged ``.gitignore`` is not
compiled again at every walk.
"""

from __future__ import annotations

import collections
import os
import re
import stat
import threading
import warnings
from collections.abc import Sequence
from typing import Final

import re2
from pathspec import GitIgnoreSpec

from mcpcore_cli.folder.opening import Root, open_directory

__all__ = [
    "IGNORE_FILE",
    "MAX_CACHED_PATTERNS",
    "MAX_IGNORE_FILES_PER_PATH",
    "MAX_IGNORE_FILE_SIZE",
    "MAX_IGNORE_PATTERNS",
    "Chain",
    "IgnoreRules",
    "parse_ignore_file",
    "patterns_in",
]

#: The name of the files that hold the rules.
IGNORE_FILE: Final = ".gitignore"
#: Bytes read of one ignore file, at most; the rest is not read. Many times the largest
#: real ones (GitHub's templates are under 10 KiB), and a bound on the patterns one
#: file can make the server compile (each costs ~0.3 ms and ~1 KiB).
MAX_IGNORE_FILE_SIZE: Final = 64 * 1024
#: ``.gitignore`` files that apply to one path, at most (the shallowest ones): real
#: checkouts nest a few, and each is one more match for every name the walk looks at.
MAX_IGNORE_FILES_PER_PATH: Final = 16
#: Patterns one walk honours, at most; the ``.gitignore`` files found past them are not
#: read. A checkout with hundreds of them holds a few thousand patterns.
MAX_IGNORE_PATTERNS: Final = 10_000
#: Patterns kept compiled between walks, at most (the least recently used files go).
MAX_CACHED_PATTERNS: Final = 10_000
_EXCLUDE_FILE: Final = (".git", "info", "exclude")
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

# pathspec compiles each pattern with Python's re, which warns (FutureWarning) about
# sets such as "[[]" whose meaning may change in a future Python: a folder's patterns
# are its own business, not something to print on the server's stderr.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"pathspec\.")

#: The rules that apply inside one folder: ``(depth, spec)`` pairs, shallowest first,
#: ``depth`` being the number of segments of the folder that holds the file.
Chain = tuple[tuple[int, GitIgnoreSpec], ...]


class IgnoreRules:
    """The ignore rules of one walk of the folder (see the module docstring).

    The walk reads each folder's ``.gitignore`` as it lists the folder (`enter`), and
    the rules are kept for the reads that follow (`path_ignored`), which read the file
    of a folder the walk never listed (a new one) on the spot. Not modified once the walk
    is done, so any number of threads may use it then.
    """

    __slots__ = ("_base", "_budget", "_chains", "_root")

    def __init__(self, root: Root) -> None:
        self._root = root
        self._budget = MAX_IGNORE_PATTERNS
        exclude = self._load_exclude()
        self._chains: dict[tuple[str, ...], Chain] = {}
        self._chains[()] = ()
        self._base: Chain = () if exclude is None else ((0, exclude),)

    def enter(self, directory: tuple[str, ...], fd: int, outer: Chain) -> Chain:
        """The rules that apply inside ``directory`` (open as ``fd``), ``outer`` above it."""
        chain = outer
        if len(outer) < MAX_IGNORE_FILES_PER_PATH and self._budget > 0:
            spec = self._read(fd, IGNORE_FILE)
            if spec is not None:
                chain = (*outer, (len(directory), spec))
        self._chains[directory] = chain
        return chain

    def chain_of(self, directory: tuple[str, ...]) -> Chain | None:
        """The rules that apply inside ``directory``, if the walk listed it."""
        return self._chains.get(directory)

    def ignored(self, chain: Chain, parts: tuple[str, ...], *, is_dir: bool) -> bool:
        """Whether ``parts`` itself is ignored under ``chain`` (its folders are not)."""
        for depth, spec in reversed(chain):
            decided = _decision(spec, _subject(parts[depth:], is_dir))
            if decided is not None:
                return decided
        for _, spec in self._base:
            decided = _decision(spec, _subject(parts, is_dir))
            if decided is not None:
                return decided
        return False

    def path_ignored(self, parts: tuple[str, ...]) -> bool:
        """Whether the file at ``parts``, or a folder above it, is ignored (blocks)."""
        # The folders the walk listed are closed under "the folder above": find the
        # deepest one above the file by bisection (a path may have 2,000 segments).
        known, unknown = 0, len(parts)
        while unknown - known > 1:
            middle = (known + unknown) // 2
            if parts[:middle] in self._chains:
                known = middle
            else:
                unknown = middle
        chain = self._chains[parts[:known]]
        if known < len(parts) - 1:
            found = self._descend(parts, known, chain)
            if found is None:
                return True
            chain = found
        return self.ignored(chain, parts, is_dir=False)

    def _descend(self, parts: tuple[str, ...], known: int, chain: Chain) -> Chain | None:
        """The rules inside the folder of ``parts``, read down from ``known`` segments.

        For folders no walk listed. None if one of them is ignored.
        """
        try:
            fd = open_directory(self._root.path, parts[:known])
        except OSError:
            return chain  # nothing there: no rule to find, and nothing to read
        try:
            for depth in range(known + 1, len(parts)):
                if self.ignored(chain, parts[:depth], is_dir=True):
                    return None
                step = os.open(parts[depth - 1], _STEP_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = step
                if len(chain) < MAX_IGNORE_FILES_PER_PATH:
                    spec = _read_spec(fd, IGNORE_FILE)
                    if spec is not None:
                        chain = (*chain, (depth, spec))
        except OSError:
            pass  # nothing there (or not a folder): the read will find no file
        finally:
            os.close(fd)
        return chain

    def _read(self, fd: int, name: str) -> GitIgnoreSpec | None:
        spec = _read_spec(fd, name)
        if spec is not None:
            self._budget -= patterns_in(spec)
        return spec

    def _load_exclude(self) -> GitIgnoreSpec | None:
        try:
            fd = open_directory(self._root.path, _EXCLUDE_FILE[:-1])
        except OSError:
            return None
        try:
            return self._read(fd, _EXCLUDE_FILE[-1])
        finally:
            os.close(fd)


_STEP_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _decision(spec: GitIgnoreSpec, subject: str) -> bool | None:
    """What one file's patterns say of ``subject``: ignored, re-included, or nothing.

    Git's rule: the last pattern that matches the subject itself decides. pathspec's
    own verdict (`GitIgnoreSpec.check_file`) also counts a pattern that matches a folder
    above the subject, as if it matched the subject (it serves lists of files, with no
    walk to skip ignored folders); then a ``!build/`` would decide for ``build/x.log``
    where git asks the next file down (``.git/info/exclude``). The walk never enters an
    ignored folder, so here only the subject's own matches count.
    """
    if spec.check_file(subject).include is None:
        return None  # no pattern matches at all: one pass of the compiled set
    decided = None
    for pattern in spec.patterns:
        if pattern.include is None:
            continue  # a comment or a blank line
        found = pattern.match_file(subject)
        if found is not None and not _above(found.match, subject):
            decided = pattern.include
    return decided


def _above(match: re.Match[str], subject: str) -> bool:
    """Whether a pattern matched a folder above ``subject`` rather than the subject.

    pathspec marks the ``/`` after a folder its pattern matched (a named group); when
    that ``/`` is not the subject's last character, the folder is above the subject.
    """
    if _FOLDER_MARK is None or _FOLDER_MARK not in match.re.groupindex:
        return False
    end = match.end(_FOLDER_MARK)
    return end != -1 and end < len(subject)


def _folder_mark() -> str | None:
    """The name of the group pathspec gives a folder's ``/`` (learnt from a pattern)."""
    [probe] = GitIgnoreSpec.from_lines(["folder/"]).patterns
    regex = getattr(probe, "regex", None)
    names = list(getattr(regex, "groupindex", {}))
    return names[0] if len(names) == 1 else None


_FOLDER_MARK: Final = _folder_mark()


def _subject(relative: Sequence[str], is_dir: bool) -> str:
    path = "/".join(relative)
    return path + "/" if is_dir else path  # "build/" matches folders only


def _read_spec(fd: int, name: str) -> GitIgnoreSpec | None:
    """The patterns of the file ``name`` in the folder open as ``fd`` (None: no file)."""
    data = _read_small(fd, name)
    return None if data is None else parse_ignore_file(data)


def _read_small(fd: int, name: str) -> bytes | None:
    try:
        # O_NOFOLLOW: a symlink (ELOOP) is no rules, as are no file and an unreadable one.
        opened = os.open(name, _FILE_FLAGS, dir_fd=fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(opened).st_mode):
            return None  # a FIFO, a device: never read
        return os.read(opened, MAX_IGNORE_FILE_SIZE)
    except OSError:
        return None
    finally:
        os.close(opened)


class _SpecCache:
    """Compiled ignore files by content, least recently used first, bounded in patterns."""

    def __init__(self, max_patterns: int) -> None:
        self._specs: collections.OrderedDict[bytes, GitIgnoreSpec | None] = (
            collections.OrderedDict()
        )
        self._patterns = 0
        self._max = max_patterns
        self._lock = threading.Lock()

    def get(self, data: bytes) -> tuple[bool, GitIgnoreSpec | None]:
        with self._lock:
            if data not in self._specs:
                return False, None
            self._specs.move_to_end(data)
            return True, self._specs[data]

    def put(self, data: bytes, spec: GitIgnoreSpec | None) -> None:
        size = 0 if spec is None else patterns_in(spec)
        with self._lock:
            if data in self._specs or size > self._max:
                return
            self._specs[data] = spec
            self._patterns += size
            while self._patterns > self._max:
                _, evicted = self._specs.popitem(last=False)
                self._patterns -= 0 if evicted is None else patterns_in(evicted)


_CACHE: Final = _SpecCache(MAX_CACHED_PATTERNS)


def parse_ignore_file(data: bytes) -> GitIgnoreSpec | None:
    """The patterns of an ignore file's bytes (None when it has none).

    Never raises: a line that is not a valid pattern is skipped, and a file cut at
    `MAX_IGNORE_FILE_SIZE` loses its last, partial line.
    """
    cached, spec = _CACHE.get(data)
    if cached:
        return spec
    spec = _compile(data)
    _CACHE.put(data, spec)
    return spec


def _compile(data: bytes) -> GitIgnoreSpec | None:
    if len(data) >= MAX_IGNORE_FILE_SIZE:
        data = data[: data.rfind(b"\n") + 1]  # (a file cut short: drop the partial line)
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        spec = _spec(lines)
    except _INVALID:
        spec = _spec([line for line in lines if _valid(line)])
    return spec if patterns_in(spec) else None


def patterns_in(spec: GitIgnoreSpec) -> int:
    """The patterns of ``spec`` that decide something (comments aside)."""
    return sum(1 for pattern in spec.patterns if pattern.include is not None)


# What compiling a pattern raises for a line that is not one: pathspec's own error (a
# ValueError), Python's re.error for a set like "[z-a]", and RE2's error when the
# patterns together are too large for one RE2 set.
# (FutureWarning too, when warnings are errors: see the filter above.)
_INVALID: Final = (ValueError, re.error, re2.error, FutureWarning)


def _spec(lines: list[str]) -> GitIgnoreSpec:
    try:
        return GitIgnoreSpec.from_lines(lines)
    except re2.error:
        # The fastest backend (RE2, one set for every pattern) has a memory cap that a
        # few thousand patterns reach; the plain one matches them one by one.
        return GitIgnoreSpec.from_lines(lines, backend="simple")


def _valid(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line], backend="simple")
    except _INVALID:
        return False
    return True
