"""Opening a file of the served folder safely, and walking the folder.

Every function here blocks (file system calls): the server runs them in worker threads.

A file is served only if, after every symlink is followed, it is a regular file inside
the folder, and no segment of its path is hidden (unless hidden files are served). The
checks, in order:

1. ``realpath`` resolves the path; the result must lie strictly inside the folder's own
   real path (a symlink may point elsewhere *inside* the folder, never out of it).
2. The resolved path is opened one segment at a time from the folder's directory, each
   with ``O_NOFOLLOW``: if a segment was swapped for a symlink after step 1, the open
   fails rather than follows it (no time-of-check to time-of-use window).
3. The last segment is looked at (``lstat``) before it is opened, and must be a regular
   file: a device, a FIFO or a socket is never opened, so opening has no side effect (a
   FIFO would block, a tape drive would rewind). It is opened ``O_NONBLOCK | O_NOCTTY``
   all the same, and ``fstat`` must show the same regular file afterwards.
4. Its size must be within the limit, checked on ``fstat`` and again while reading (a
   file that grows meanwhile is cut off, not read without end).

Failures are `FileMissingError` (nothing to read there, or a hidden file: its existence
is not revealed), `AccessRefusedError` (something is there that may not be served) or
`FileTooLargeError`; none carries a path or an OS message, as none may reach the client.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from transports._folder._uris import is_hidden

__all__ = [
    "MAX_WALK_ENTRIES",
    "AccessRefusedError",
    "FileMissingError",
    "FileTooLargeError",
    "FoundFile",
    "Root",
    "TreeWalk",
    "read_file",
    "resolve_root",
]

#: Directory entries one walk of the folder looks at, at most. A walk lists, searches
#: or greps; past this many entries (a home folder, a node_modules tree) it stops, so
#: that no request costs more than a fraction of a second of scanning or ~20 MB of
#: memory. Files past it can still be read by URI.
MAX_WALK_ENTRIES: Final = 100_000
#: Bytes read per system call when reading a file.
READ_CHUNK: Final = 1024 * 1024
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_STEP_FLAGS: Final = _DIRECTORY_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
#: OS errors that mean "nothing there".
_MISSING_ERRORS: Final = frozenset({errno.ENOENT, errno.ENOTDIR})
#: OS errors that mean "something there we may not open": permissions, a symlink met
#: by O_NOFOLLOW (ELOOP), a name too long for the file system.
_REFUSED_ERRORS: Final = frozenset({errno.EACCES, errno.EPERM, errno.ELOOP, errno.ENAMETOOLONG})


class FileMissingError(LookupError):
    """No file to serve there (or one that is hidden): "not found" to the client."""


class AccessRefusedError(Exception):
    """Something is there that must not be served (escapes the folder, not a file...)."""


class FileTooLargeError(ValueError):
    """The file is larger than the limit.

    Attributes:
        limit: The limit, in bytes.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True, slots=True)
class Root:
    """The served folder.

    Attributes:
        path: Its real absolute path (symlinks resolved).
        parts: The same, as segments (``()`` for ``/``).
        include_hidden: Whether dot files and dot folders are served.
    """

    path: str
    parts: tuple[str, ...]
    include_hidden: bool

    @property
    def prefix(self) -> str:
        """``path`` with a trailing separator: what every path inside it starts with."""
        return self.path if self.path.endswith("/") else self.path + "/"

    def inside(self, real: str) -> tuple[str, ...] | None:
        """The segments of ``real`` (a resolved path) relative to the folder, if inside."""
        prefix = self.prefix
        if not real.startswith(prefix) or real == prefix:
            return None
        return tuple(real[len(prefix) :].split("/"))


def resolve_root(path: str | os.PathLike[str], *, include_hidden: bool = False) -> Root:
    """The folder at ``path``, resolved.

    Raises:
        FileNotFoundError: Nothing is there.
        NotADirectoryError: It is not a folder.
        ValueError: Its path is not UTF-8 (its files could have no URI).
    """
    real = os.path.realpath(os.fspath(path), strict=True)
    if not os.path.isdir(real):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(path))
    try:
        real.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the folder's path is not UTF-8") from None
    parts = tuple(part for part in real.split("/") if part)
    return Root(real, parts, include_hidden)


@dataclass(frozen=True, slots=True)
class FileData:
    """What `read_file` read."""

    data: bytes
    mtime: float


def read_file(root: Root, parts: tuple[str, ...], max_size: int) -> FileData:
    """Read the file at ``parts`` (relative to the folder), with every check above.

    Raises:
        FileMissingError: Nothing to serve there.
        AccessRefusedError: It may not be served.
        FileTooLargeError: It is larger than ``max_size`` bytes.
        OSError: Anything else the system reports (an I/O error).
    """
    if not root.include_hidden and is_hidden(parts):
        raise FileMissingError
    try:
        real = os.path.realpath(os.path.join(root.path, *parts), strict=True)
    except OSError as exc:
        raise _classified(exc) from None
    inside = root.inside(real)
    if inside is None:
        # The folder itself is a folder, not a file; anything else is outside it.
        raise FileMissingError if real == root.path else AccessRefusedError
    if not root.include_hidden and is_hidden(inside):
        raise FileMissingError  # a visible symlink to a hidden file is as hidden as the file
    try:
        fd = _open_regular(root.path, inside)
    except OSError as exc:
        raise _classified(exc) from None
    try:
        return _read(fd, max_size)
    finally:
        os.close(fd)


def _open_regular(folder: str, inside: tuple[str, ...]) -> int:
    directory = os.open(folder, _DIRECTORY_FLAGS)
    try:
        for name in inside[:-1]:
            step = os.open(name, _STEP_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = step
        before = os.stat(inside[-1], dir_fd=directory, follow_symlinks=False)
        if stat.S_ISDIR(before.st_mode):
            raise FileMissingError
        if not stat.S_ISREG(before.st_mode):
            raise AccessRefusedError  # a device, FIFO, socket, or a symlink that appeared meanwhile
        fd = os.open(inside[-1], _FILE_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)
    after = os.fstat(fd)
    if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (
        before.st_dev,
        before.st_ino,
    ):
        os.close(fd)
        raise AccessRefusedError  # swapped between the look and the open
    return fd


def _read(fd: int, max_size: int) -> FileData:
    status = os.fstat(fd)
    if status.st_size > max_size:
        raise FileTooLargeError(max_size)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, min(READ_CHUNK, max_size + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > max_size:
            raise FileTooLargeError(max_size)  # it grew while we read
    return FileData(b"".join(chunks), status.st_mtime)


def _classified(exc: OSError) -> Exception:
    if exc.errno in _MISSING_ERRORS:
        return FileMissingError()
    if exc.errno in _REFUSED_ERRORS:
        return AccessRefusedError()
    return exc


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A file a walk found.

    Attributes:
        parts: Its path relative to the folder, as segments.
        size: Its size in bytes.
        mtime: When it last changed (seconds since the epoch).
    """

    parts: tuple[str, ...]
    size: int
    mtime: float


class TreeWalk:
    """One walk of the folder: its servable files, in the order of their segments.

    The order is a depth-first walk with each folder's names sorted, which is the
    lexicographic order of the files' segment tuples: stable, and the first ``n`` files
    found are the first ``n`` of the whole sorted listing. Hidden names are skipped
    unless served, folder symlinks are not followed (no loops, no duplicates), and a
    symlink to a file is found only if its target is a servable file inside the folder.

    Attributes:
        truncated: Whether the walk stopped at `MAX_WALK_ENTRIES` (or ``max_entries``).
    """

    def __init__(self, root: Root, *, max_entries: int = MAX_WALK_ENTRIES) -> None:
        self._root = root
        self._budget = max_entries
        self.truncated = False

    def files(self) -> Iterator[FoundFile]:
        """Walk, yielding each file (stop iterating at any time)."""
        stack: list[tuple[tuple[str, ...], list[os.DirEntry[str]]]] = [
            ((), self._entries(self._root.path))
        ]
        while stack:
            prefix, entries = stack[-1]
            if not entries:
                stack.pop()
                continue
            entry = entries.pop()
            parts = (*prefix, entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((parts, self._entries(entry.path)))
                elif entry.is_file(follow_symlinks=False):
                    status = entry.stat(follow_symlinks=False)
                    yield FoundFile(parts, status.st_size, status.st_mtime)
                elif entry.is_symlink():
                    found = self._followed(parts, entry.path)
                    if found is not None:
                        yield found
            except OSError:
                continue  # gone meanwhile, or unreadable: not listed

    def _entries(self, path: str) -> list[os.DirEntry[str]]:
        """A folder's servable names, sorted in reverse (so ``pop`` takes the first)."""
        kept: list[os.DirEntry[str]] = []
        try:
            with os.scandir(path) as scan:
                for entry in scan:
                    if self._budget <= 0:
                        self.truncated = True
                        break
                    self._budget -= 1
                    if _servable_name(entry.name, self._root.include_hidden):
                        kept.append(entry)
        except OSError:
            return []  # unreadable folder: nothing in it is listed
        kept.sort(key=lambda entry: entry.name, reverse=True)
        return kept

    def _followed(self, parts: tuple[str, ...], path: str) -> FoundFile | None:
        real = os.path.realpath(path)
        inside = self._root.inside(real)
        if inside is None or (not self._root.include_hidden and is_hidden(inside)):
            return None
        status = os.stat(real)
        if not stat.S_ISREG(status.st_mode):
            return None
        return FoundFile(parts, status.st_size, status.st_mtime)


def _servable_name(name: str, include_hidden: bool) -> bool:
    if name.startswith(".") and not include_hidden:
        return False
    try:
        name.encode("utf-8")  # a name that is not UTF-8 (surrogate escapes) has no URI
    except UnicodeEncodeError:
        return False
    return True
