"""Walking the served folder: its servable files in path order, and its folders.

Every function here blocks (file system calls): the server runs them in worker threads.

A walk lists each folder once, through a descriptor opened without following symlinks
(``O_NOFOLLOW``) and checked to be the very folder its parent listed (same device and
inode): a folder swapped for a symlink out of the served one, between the listing of its
parent and its own, is not entered, so a walk never names a file outside the folder.
Folder symlinks are never followed (no loops, no duplicates); a symlink to a file is
found only if its target is a file that a read would serve (see `opening`).

The walk is bounded (`MAX_WALK_ENTRIES` names looked at), skips hidden names unless
they are served, names that are not UTF-8 (they could have no URI), what the folder's
``.gitignore`` rules ignore (see `ignore`) and what it can't read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from mcpcore_cli.folder.ignore import Chain, IgnoreRules
from mcpcore_cli.folder.opening import AccessRefusedError, FileMissingError, Root, stat_file

__all__ = ["MAX_WALK_ENTRIES", "FoundFile", "Identity", "TreeWalk"]

#: Directory entries one walk of the folder looks at, at most. A walk lists, searches
#: or greps; past this many entries (a home folder, a node_modules tree) it stops, so
#: that no request costs more than a fraction of a second of scanning or ~20 MB of
#: memory. Files past it can still be read by URI.
MAX_WALK_ENTRIES: Final = 100_000
_FOLDER_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

#: A folder's identity: its device and inode numbers.
Identity = tuple[int, int]


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


@dataclass(frozen=True, slots=True)
class _Entry:
    """One servable name of a listed folder, looked at while the folder was open."""

    name: str
    kind: int  # _FILE, _FOLDER or _LINK
    status: os.stat_result | None  # lstat, for files and folders


_FILE, _FOLDER, _LINK = 0, 1, 2


class TreeWalk:
    """One walk of the folder: its servable files, in the order of their segments.

    The order is a depth-first walk with each folder's names sorted, which is the
    lexicographic order of the files' segment tuples: stable, and the first ``n`` files
    found are the first ``n`` of the whole sorted listing.

    Attributes:
        truncated: Whether the walk stopped at `MAX_WALK_ENTRIES` (or ``max_entries``).
        folders: Every folder listed so far (``()`` is the folder itself), with its
            identity: the folders a watcher must watch.
        rules: The ignore rules read on the way (None when not honoured).
        files_wanted: Set it to False to walk the rest for its folders only (no file
            is looked at, none is yielded).
    """

    def __init__(self, root: Root, *, max_entries: int = MAX_WALK_ENTRIES) -> None:
        self._root = root
        self._budget = max_entries
        self.truncated = False
        self.folders: dict[tuple[str, ...], Identity] = {}
        self.rules = IgnoreRules(root) if root.gitignore else None
        self.files_wanted = True

    def files(self) -> Iterator[FoundFile]:
        """Walk, yielding each file (stop iterating at any time)."""
        top = self._list((), None, ())
        if top is None:
            return
        stack: list[tuple[tuple[str, ...], Chain, list[_Entry]]] = [((), *top)]
        while stack:
            prefix, chain, entries = stack[-1]
            if not entries:
                stack.pop()
                continue
            entry = entries.pop()
            parts = (*prefix, entry.name)
            if entry.kind == _FOLDER:
                assert entry.status is not None
                listed = self._list(parts, entry.status, chain)
                if listed is not None:
                    stack.append((parts, *listed))
            elif not self.files_wanted:
                continue
            elif entry.kind == _FILE:
                assert entry.status is not None
                yield FoundFile(parts, entry.status.st_size, entry.status.st_mtime)
            else:
                found = self._followed(parts)
                if found is not None:
                    yield found

    def _list(
        self, parts: tuple[str, ...], expected: os.stat_result | None, outer: Chain
    ) -> tuple[Chain, list[_Entry]] | None:
        """A folder's rules and servable names, sorted in reverse (``pop`` takes the first).

        None when it can't be listed: unreadable, or no longer the folder its parent
        listed (swapped for a symlink, replaced).
        """
        try:
            fd = os.open(os.path.join(self._root.path, *parts), _FOLDER_FLAGS)
        except OSError:
            return None
        try:
            status = os.fstat(fd)
            if expected is not None and _identity(status) != _identity(expected):
                return None
            chain = () if self.rules is None else self.rules.enter(parts, fd, outer)
            entries = self._entries(parts, fd, chain)
        except OSError:
            return None  # unreadable folder: nothing in it is listed
        finally:
            os.close(fd)
        self.folders[parts] = _identity(status)
        entries.sort(key=lambda entry: entry.name, reverse=True)
        return chain, entries

    def _entries(self, prefix: tuple[str, ...], fd: int, chain: Chain) -> list[_Entry]:
        kept: list[_Entry] = []
        with os.scandir(fd) as scan:
            for dirent in scan:
                if self._budget <= 0:
                    self.truncated = True
                    break
                self._budget -= 1
                entry = self._entry(prefix, dirent, chain)
                if entry is not None:
                    kept.append(entry)
        return kept

    def _entry(
        self, prefix: tuple[str, ...], dirent: os.DirEntry[str], chain: Chain
    ) -> _Entry | None:
        """``dirent`` as a servable entry, or None when the walk leaves it out."""
        name = dirent.name
        if not _servable_name(name, self._root.include_hidden):
            return None
        try:
            kind = self._kind(dirent)
            if kind is None or self._ignored(chain, (*prefix, name), kind):
                return None
            if kind == _LINK:
                return _Entry(name, kind, None)
            # fstatat relative to the open folder: what is there now, never elsewhere.
            status = dirent.stat(follow_symlinks=False)
        except OSError:
            return None  # gone meanwhile
        if stat.S_IFMT(status.st_mode) != (stat.S_IFDIR if kind == _FOLDER else stat.S_IFREG):
            return None  # swapped meanwhile
        return _Entry(name, kind, status)

    def _kind(self, dirent: os.DirEntry[str]) -> int | None:
        """``_FOLDER``, ``_FILE`` or ``_LINK``; None for what is never served.

        Raises:
            OSError: The entry is gone.
        """
        if dirent.is_dir(follow_symlinks=False):
            return _FOLDER
        if not self.files_wanted:
            return None
        if dirent.is_file(follow_symlinks=False):
            return _FILE
        if dirent.is_symlink():
            return _LINK
        return None  # a FIFO, a socket, a device: never served

    def _ignored(self, chain: Chain, parts: tuple[str, ...], kind: int) -> bool:
        """Whether the ignore rules read on the way leave ``parts`` out."""
        rules = self.rules
        return rules is not None and rules.ignored(chain, parts, is_dir=kind == _FOLDER)

    def _followed(self, parts: tuple[str, ...]) -> FoundFile | None:
        rules = self.rules
        try:
            status = stat_file(
                self._root, parts, ignored=None if rules is None else rules.path_ignored
            )
        except (FileMissingError, AccessRefusedError):
            return None
        return FoundFile(parts, status.st_size, status.st_mtime)


def _identity(status: os.stat_result) -> Identity:
    return status.st_dev, status.st_ino


def _servable_name(name: str, include_hidden: bool) -> bool:
    if name.startswith(".") and not include_hidden:
        return False
    try:
        name.encode("utf-8")  # a name that is not UTF-8 (surrogate escapes) has no URI
    except UnicodeEncodeError:
        return False
    return True
