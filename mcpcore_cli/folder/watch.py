"""Watching the folder: file-system changes become MCP change notifications.

Changes come in debounced batches (see `watchers`). For each batch:

* the listing is scanned again (or, when files were only modified, their sizes and
  times refreshed); if the set of files changed (added, removed, renamed),
  ``notifications/resources/list_changed`` goes to every client that wants it;
* every servable file the batch touched (modified, added or removed), and every file
  the rescan found added or removed, gets ``notifications/resources/updated`` to the
  clients subscribed to it, or to a folder URI above it: legacy ``resources/subscribe``
  and 2026-07-28 ``subscriptions/listen`` alike, through the server's hub
  (`Server.resource_updated`). At most `MAX_UPDATES_PER_BATCH` files per batch (a ``git
  checkout`` touches thousands; the list_changed that comes with it tells clients to
  look again).

What is watched, and the symlink policy: exactly the folders the latest scan listed
(`Snapshot.folders`): real folders inside the served one, hidden ones only when served,
ignored ones never, each watched on its own rather than recursively (recursive watching
follows symlinks out of the folder: see `watchers`), at most `MAX_WATCHED_FOLDERS` of
them (the shallowest). A symlink in the folder, wherever it points, is never watched
through. So nothing outside the folder is watched, no change outside it is seen, and a
change to a served file always arrives under its one canonical URI, its path without
symlinks (a change made through a symlink is seen where the file really is). A batch
that adds or removes a folder has the folder rescanned and the watcher replaced by one
for the new list, armed before the old one is retired; the folder is scanned once more
after each arming, so that what was created in a new folder before its watch began is
listed and announced too.

Each path is checked before it is announced: inside the folder, UTF-8, not hidden
unless served, not ignored, and in a folder that is still the one that was watched
there (a folder swapped for a symlink meanwhile reports nothing). A change to a
``.gitignore`` file is not announced (it is hidden) but rescans the folder.

The watcher is armed before `watch_folder` reports itself started, so that no change
after start-up is missed. If the system refuses to watch the folder (too many watches
for inotify, say), the reason is logged and the folder is served without
notifications.
"""

from __future__ import annotations

import logging
import os
import stat
from collections import deque
from dataclasses import dataclass, field
from typing import Final, Protocol

import trio
from watchfiles import Change

from mcpcore_cli.folder.catalog import Snapshot
from mcpcore_cli.folder.folder import Folder
from mcpcore_cli.folder.ignore import IGNORE_FILE
from mcpcore_cli.folder.opening import open_directory
from mcpcore_cli.folder.uris import is_hidden
from mcpcore_cli.folder.walk import Identity
from mcpcore_cli.folder.watchers import Delivered, FolderWatcher

__all__ = [
    "MAX_ARMINGS",
    "MAX_RETIRING_WATCHERS",
    "MAX_UPDATES_PER_BATCH",
    "MAX_WATCHED_FOLDERS",
    "Announcer",
    "watch_folder",
]

#: Files announced per batch, at most (each is one pass over the subscribers).
MAX_UPDATES_PER_BATCH: Final = 1000
#: Folders watched, at most (the shallowest first). Each is one inotify watch, about
#: 1 KiB of kernel memory, from a per-user budget (``fs.inotify.max_user_watches``,
#: 8,192 on older kernels). Arming 10,000 takes ~0.1 s during which the server does
#: nothing else (watchfiles holds the GIL while it adds its watches, so a worker thread
#: would not help: measured 102 ms), and each new folder re-arms the whole list.
MAX_WATCHED_FOLDERS: Final = 10_000
#: Watchers armed one after the other for one batch, at most, while folders keep
#: appearing inside new ones; past it the next batch goes on.
MAX_ARMINGS: Final = 4
#: Replaced watchers still delivering their last batch, at most (each holds an inotify
#: instance, of which a user has 128 by default); past it the oldest is stopped.
MAX_RETIRING_WATCHERS: Final = 3

_log = logging.getLogger("mcpcore.serve")


class Announcer(Protocol):
    """Who hears of the changes: a `Server` (its hub tells the clients that asked)."""

    async def resources_changed(self) -> None:
        """The set of listed resources changed."""

    async def resource_updated(self, uri: str) -> None:
        """The resource at ``uri`` changed."""


class _UnwatchableError(Exception):
    """The folder can't be watched (the reason is the cause)."""


async def watch_folder(
    folder: Folder,
    server: Announcer,
    *,
    max_folders: int = MAX_WATCHED_FOLDERS,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Watch ``folder`` and tell ``server``'s clients what changed, until cancelled.

    Started (for ``nursery.start``) once changes are being recorded. If the system
    refuses to watch the folder (too many folders for inotify, say), the reason is
    logged, the folder is served without notifications, and this returns at once.

    Args:
        folder: The folder.
        server: The server whose clients hear of the changes (a `Server`).
        max_folders: The most folders watched (see `MAX_WATCHED_FOLDERS`).
        task_status: Started once the folder is watched.
    """
    async with trio.open_nursery() as nursery:
        watching = _Watching(folder, server, nursery, max_folders)
        try:
            await watching.settle(force=True)
        except _UnwatchableError as exc:
            _log.warning("not watching %s for changes: %s", folder.path, exc.__cause__)
            task_status.started()
            return
        task_status.started()
        try:
            await watching.run()
        except _UnwatchableError as exc:
            _log.warning("stopped watching %s for changes: %s", folder.path, exc.__cause__)
        nursery.cancel_scope.cancel()


class _Watching:
    """The folder's watchers, and what their batches become."""

    def __init__(self, folder: Folder, server: Announcer, nursery: trio.Nursery, limit: int):
        self._folder = folder
        self._server = server
        self._nursery = nursery
        self._limit = limit
        self._send, self._receive = trio.open_memory_channel[Delivered](0)
        self._active: FolderWatcher | None = None
        self._retiring: deque[FolderWatcher] = deque()
        self._watched: dict[tuple[str, ...], Identity] = {}
        self._warned = False

    async def run(self) -> None:
        """Announce each batch, until cancelled."""
        async for delivered in self._receive:
            if delivered.failure is None:
                await self._changed(delivered.changes)
            elif delivered.watcher is self._active:
                # watchfiles stops at a name that is not UTF-8 (and drops its batch):
                # watch anew, and announce what a rescan finds changed.
                _log.info("watching %s anew: %s", self._folder.path, delivered.failure)
                before = self._folder.catalog.snapshot
                self._active = None
                await self._folder.rescan()
                await self.settle(force=True)
                await self._announce(before, {})

    async def settle(self, *, force: bool = False) -> None:
        """Watch exactly the folders of the latest scan, scanning again after each arming.

        Raises:
            _UnwatchableError: No watcher could be armed, and none is running.
        """
        for _ in range(MAX_ARMINGS):
            wanted = self._wanted()
            if not force and wanted == self._watched:
                return
            force = False
            try:
                await self._arm(wanted)
            except FileNotFoundError:
                pass  # a folder went away meanwhile: the rescan below sees it
            except (OSError, RuntimeError) as exc:
                if self._active is None:
                    raise _UnwatchableError from exc
                _log.warning("can't watch the new folders of %s: %s", self._folder.path, exc)
                return
            # What was created in the new folders before their watch began.
            await self._folder.rescan()
        if self._active is None:
            raise _UnwatchableError from FileNotFoundError("the folder keeps changing")

    def _wanted(self) -> dict[tuple[str, ...], Identity]:
        folders = self._folder.catalog.snapshot.folders
        if len(folders) <= self._limit:
            return dict(folders)
        if not self._warned:
            self._warned = True
            _log.warning(
                "watching %d of the %d folders of %s (the shallowest)",
                self._limit,
                len(folders),
                self._folder.path,
            )
        shallowest = sorted(folders, key=lambda parts: (len(parts), parts))[: self._limit]
        return {parts: folders[parts] for parts in shallowest}

    async def _arm(self, wanted: dict[tuple[str, ...], Identity]) -> None:
        root = self._folder.path
        watcher = FolderWatcher([os.path.join(root, *parts) for parts in wanted], self._send)
        await watcher.arm(self._nursery)
        previous, self._active, self._watched = self._active, watcher, wanted
        if previous is not None:
            previous.retire()
            self._retiring.append(previous)
        self._retiring = deque(old for old in self._retiring if not old.done)
        while len(self._retiring) > MAX_RETIRING_WATCHERS:
            self._retiring.popleft().stop()

    async def _changed(self, changes: frozenset[tuple[Change, str]]) -> None:
        """Rescan (or refresh) after one batch, re-arm if folders changed, announce."""
        before = self._folder.catalog.snapshot
        report = await self._folder.run_sync(_classify, self._folder, self._watched, changes)
        if report.rescan:
            await self._folder.rescan()
            await self.settle(force=report.folders_changed)
        elif report.files:
            await self._folder.refresh(list(report.files))
        else:
            return  # only hidden or ignored things changed (a .git folder at work)
        await self._announce(before, report.files)

    async def _announce(self, before: Snapshot, touched: dict[tuple[str, ...], bool]) -> None:
        after = self._folder.catalog.snapshot
        if not before.same_files(after):
            await self._server.resources_changed()
        # What the batch named, and what the scan found added, removed or changed: a
        # batch a watcher dropped (at a name that is not UTF-8) is still heard of.
        old = {file.parts: (file.size, file.mtime) for file in before.files}
        new = {file.parts: (file.size, file.mtime) for file in after.files}
        files = set(touched) | {parts for parts, _ in old.items() ^ new.items()}
        files -= after.folders.keys() | before.folders.keys()
        changed = sorted(self._folder.uri_of(parts) for parts in files)
        if len(changed) > MAX_UPDATES_PER_BATCH:
            _log.info(
                "%d files changed at once: announcing the first %d",
                len(changed),
                MAX_UPDATES_PER_BATCH,
            )
        for uri in changed[:MAX_UPDATES_PER_BATCH]:
            await self._server.resource_updated(uri)


@dataclass(slots=True)
class _Report:
    """What one batch touched, as `_classify` sorted it."""

    files: dict[tuple[str, ...], bool] = field(default_factory=dict)  # path: only modified
    rescan: bool = False
    folders_changed: bool = False


def _classify(
    folder: Folder, watched: dict[tuple[str, ...], Identity], changes: frozenset[tuple[Change, str]]
) -> _Report:
    """Sort a batch's paths into served files and folder changes (blocks: a thread)."""
    report = _Report()
    looker = _Looker(folder, watched)
    snapshot = folder.catalog.snapshot
    for change, path in changes:
        parts = folder.root.inside(path)
        if parts is None or not _has_uri(parts):
            continue  # the folder itself, or a name no URI can carry
        kind = looker.kind(parts)
        if kind is None:
            continue  # not in a folder we watch, or that folder was replaced meanwhile
        if parts[-1] == IGNORE_FILE:
            report.rescan = True  # the rules changed: the next walk reads them
        if not folder.include_hidden and is_hidden(parts):
            continue
        is_folder = kind == stat.S_IFDIR or parts in watched
        if _ignored(snapshot, parts, kind):
            continue
        if is_folder:
            if change is not Change.modified:
                report.rescan = report.folders_changed = True
            continue
        modified = change is Change.modified
        report.files[parts] = report.files.get(parts, True) and modified
        report.rescan = report.rescan or not modified
    return report


def _has_uri(parts: tuple[str, ...]) -> bool:
    try:
        "/".join(parts).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _ignored(snapshot: Snapshot, parts: tuple[str, ...], kind: int) -> bool:
    rules = snapshot.rules
    if rules is None:
        return False
    chain = rules.chain_of(parts[:-1])
    if chain is None:
        return True  # in a folder the scan did not list: ignored (or new, and rescanned)
    if kind == 0 and snapshot.position(parts) is None:
        # Gone, and not a listed file: maybe an ignored folder, never to be named.
        return rules.ignored(chain, parts, is_dir=False) or rules.ignored(chain, parts, is_dir=True)
    return rules.ignored(chain, parts, is_dir=kind == stat.S_IFDIR)


class _Looker:
    """Looks at changed paths, each folder they are in checked once per batch."""

    def __init__(self, folder: Folder, watched: dict[tuple[str, ...], Identity]) -> None:
        self._folder = folder
        self._watched = watched
        self._verdicts: dict[tuple[str, ...], bool] = {}

    def kind(self, parts: tuple[str, ...]) -> int | None:
        """What ``parts`` is now: its ``S_IFMT``, 0 when gone.

        None when the folder it is in is not one we watch, or no longer the folder we
        watch there.
        """
        if not self._watched_still(parts[:-1]):
            return None
        try:
            status = os.lstat(os.path.join(self._folder.path, *parts))
        except OSError:
            return 0
        return stat.S_IFMT(status.st_mode)

    def _watched_still(self, parts: tuple[str, ...]) -> bool:
        verdict = self._verdicts.get(parts)
        if verdict is None:
            verdict = self._verdicts[parts] = self._same_folder(parts)
        return verdict

    def _same_folder(self, parts: tuple[str, ...]) -> bool:
        expected = self._watched.get(parts)
        if expected is None:
            return False
        try:
            fd = open_directory(self._folder.path, parts)  # no symlink on the way
        except OSError:
            return False
        try:
            status = os.fstat(fd)
        finally:
            os.close(fd)
        return (status.st_dev, status.st_ino) == expected
