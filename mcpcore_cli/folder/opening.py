"""Opening a file of the served folder safely.

Every function here blocks (file system calls): the server runs them in worker threads.

A file is served only if, after every symlink is followed, it is a regular file inside
the folder, no segment of its path is hidden (unless hidden files are served), and the
folder's ``.gitignore`` rules don't ignore it (see `ignore`). The checks, in order:

1. `resolve` follows the path's symlinks one at a time, as the kernel does, and at most
   `MAX_SYMLINK_HOPS` of them: a chain of thousands costs no more than a short one. The
   result must lie strictly inside the folder's own real path (a symlink may point
   elsewhere *inside* the folder, never out of it).
2. The resolved path is opened one segment at a time from the folder's directory, each
   with ``O_NOFOLLOW``: if a segment was swapped for a symlink after step 1, the open
   fails rather than follows it (no time-of-check to time-of-use window).
3. The last segment is looked at (``lstat``) before it is opened, and must be a regular
   file: a device, a FIFO or a socket is never opened, so opening has no side effect (a
   FIFO would block, a tape drive would rewind). It is opened ``O_NONBLOCK | O_NOCTTY``
   all the same, and ``fstat`` must show the same regular file afterwards.
4. Its size must be within the limit, checked on ``fstat`` and again while reading (a
   file that grows meanwhile is cut off, not read without end).

A folder that changes while it is read (a symlink swapped for a file, a file for a FIFO
or a socket, a folder for a symlink out of it) can make any step fail with any error
the system has. Every one is a refusal, never an internal error: `FileMissingError`
when the system says nothing is there (ENOENT, ENOTDIR), `AccessRefusedError` for
everything else (ELOOP, EACCES, ENXIO, EISDIR, EIO...). Neither carries a path or an OS
message, as none may reach the client.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from mcpcore_cli.folder.uris import is_hidden

__all__ = [
    "MAX_SYMLINK_HOPS",
    "AccessRefusedError",
    "FileData",
    "FileMissingError",
    "FileTooLargeError",
    "Ignored",
    "Root",
    "open_directory",
    "read_file",
    "resolve",
    "resolve_root",
    "stat_file",
]

#: Symlinks followed while resolving one path, at most: Linux's own limit (MAXSYMLINKS,
#: ELOOP past it). Python's ``realpath`` has none and recurses once per link, so a
#: chain of a thousand links in a folder would raise RecursionError.
MAX_SYMLINK_HOPS: Final = 40
#: Bytes read per system call when reading a file.
READ_CHUNK: Final = 1024 * 1024
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_STEP_FLAGS: Final = _DIRECTORY_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
#: OS errors that mean "nothing there"; any other means "something we may not open".
_MISSING_ERRORS: Final = frozenset({errno.ENOENT, errno.ENOTDIR})
#: OS errors a hostile or changing folder causes (as opposed to a failing disk).
_EXPECTED_ERRORS: Final = frozenset(
    {errno.EACCES, errno.EPERM, errno.ELOOP, errno.ENAMETOOLONG, errno.EINVAL, errno.ENXIO}
)

#: Whether a path (as segments), or a folder above it, is ignored by the folder's rules.
Ignored = Callable[[tuple[str, ...]], bool]

_log = logging.getLogger("mcpcore.serve")


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
        gitignore: Whether its ``.gitignore`` rules are honoured (see `ignore`).
    """

    path: str
    parts: tuple[str, ...]
    include_hidden: bool
    gitignore: bool = True

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

    def relative(self, absolute: Sequence[str]) -> tuple[str, ...] | None:
        """The segments of ``absolute`` (all of a path's) relative to the folder, if inside."""
        count = len(self.parts)
        if len(absolute) <= count or tuple(absolute[:count]) != self.parts:
            return None
        return tuple(absolute[count:])


def resolve_root(
    path: str | os.PathLike[str], *, include_hidden: bool = False, gitignore: bool = True
) -> Root:
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
    return Root(real, parts, include_hidden, gitignore)


def resolve(segments: Sequence[str]) -> list[str]:
    """The segments of the absolute path ``/segments...`` with every symlink followed.

    What ``os.path.realpath(..., strict=True)`` does, but iteratively and bounded.

    Raises:
        OSError: A segment is missing (ENOENT), or more than `MAX_SYMLINK_HOPS`
            symlinks were met (ELOOP), or the folder changed meanwhile (EINVAL...).
    """
    resolved: list[str] = []
    pending = list(reversed(segments))
    hops = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if resolved:
                resolved.pop()
            continue
        here = "/" + "/".join((*resolved, name))
        if not stat.S_ISLNK(os.lstat(here).st_mode):
            resolved.append(name)
            continue
        hops += 1
        if hops > MAX_SYMLINK_HOPS:
            raise OSError(errno.ELOOP, "too many levels of symbolic links")
        target = os.readlink(here)  # EINVAL if it stopped being a symlink meanwhile
        if target.startswith("/"):
            resolved.clear()
        pending.extend(reversed(target.split("/")))
    return resolved


@dataclass(frozen=True, slots=True)
class FileData:
    """What `read_file` read."""

    data: bytes
    mtime: float


def read_file(
    root: Root, parts: tuple[str, ...], max_size: int, *, ignored: Ignored | None = None
) -> FileData:
    """Read the file at ``parts`` (relative to the folder), with every check above.

    Args:
        root: The folder.
        parts: The file's path in it, as segments.
        max_size: The largest file read, in bytes.
        ignored: The folder's ignore rules, if honoured.

    Raises:
        FileMissingError: Nothing to serve there.
        AccessRefusedError: It may not be served, or can't be read.
        FileTooLargeError: It is larger than ``max_size`` bytes.
    """
    try:
        directory, before = _look(root, parts, ignored)
        try:
            fd = os.open(before.name, _FILE_FLAGS, dir_fd=directory)
        finally:
            os.close(directory)
        try:
            after = os.fstat(fd)
            if not stat.S_ISREG(after.st_mode) or _identity(after) != _identity(before.status):
                raise AccessRefusedError  # swapped between the look and the open
            return _read(fd, after, max_size)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _classified(exc) from None


def stat_file(
    root: Root, parts: tuple[str, ...], *, ignored: Ignored | None = None
) -> os.stat_result:
    """What a read of ``parts`` would find (its size and time), without reading it.

    Raises:
        FileMissingError: Nothing to serve there.
        AccessRefusedError: It may not be served.
    """
    try:
        directory, found = _look(root, parts, ignored)
        os.close(directory)
    except OSError as exc:
        raise _classified(exc) from None
    return found.status


@dataclass(frozen=True, slots=True)
class _Found:
    name: str
    status: os.stat_result


def _look(root: Root, parts: tuple[str, ...], ignored: Ignored | None) -> tuple[int, _Found]:
    """The folder (open) holding the file ``parts`` leads to, and what is there.

    Raises OSError, or a refusal when the path may not be served.
    """
    if _concealed(root, parts, ignored):
        raise FileMissingError
    real = resolve((*root.parts, *parts))
    inside = root.relative(real)
    if inside is None:
        # The folder itself is a folder, not a file; anything else is outside it.
        raise FileMissingError if tuple(real) == root.parts else AccessRefusedError
    if _concealed(root, inside, ignored):
        raise FileMissingError  # a visible symlink to a hidden file is as hidden as the file
    directory = open_directory(root.path, inside[:-1])
    try:
        status = os.stat(inside[-1], dir_fd=directory, follow_symlinks=False)
        if stat.S_ISDIR(status.st_mode):
            raise FileMissingError
        if not stat.S_ISREG(status.st_mode):
            raise AccessRefusedError  # a device, FIFO, socket, or a symlink that appeared meanwhile
    except BaseException:
        os.close(directory)
        raise
    return directory, _Found(inside[-1], status)


def _concealed(root: Root, parts: tuple[str, ...], ignored: Ignored | None) -> bool:
    """Whether ``parts`` is hidden or ignored: served as if nothing were there."""
    if not root.include_hidden and is_hidden(parts):
        return True
    return ignored is not None and ignored(parts)


def open_directory(folder: str, parts: Sequence[str]) -> int:
    """The folder at ``parts`` under ``folder``, opened without following any symlink.

    Raises:
        OSError: A segment is missing, not a folder, or a symlink (ELOOP or ENOTDIR).
    """
    directory = os.open(folder, _DIRECTORY_FLAGS)
    try:
        for name in parts:
            step = os.open(name, _STEP_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = step
    except BaseException:
        os.close(directory)
        raise
    return directory


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _read(fd: int, status: os.stat_result, max_size: int) -> FileData:
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
    if exc.errno not in _EXPECTED_ERRORS:
        # A failing disk (EIO), a stale NFS handle...: refused all the same, but the
        # operator may want to know.
        _log.debug("a read failed: %s", os.strerror(exc.errno) if exc.errno else exc)
    return AccessRefusedError()
