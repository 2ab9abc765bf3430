"""The folder's watcher, on real files with the real watcher: what it watches, what it says.

A folder full of symlinks out of it (to its parent, to ``/``, to a folder outside with
files that change) and into it (a folder alias, a file alias): nothing outside is
watched (seen in /proc/self/fdinfo of the inotify descriptors), named or announced, and
a change to a served file arrives under its one canonical URI, however it was made.
`Heard` stands in for the server's hub, recording what would be announced; every wait
is on an announcement, bounded only as a guard against hangs.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from mcpcore_cli.folder import Folder, watch_folder
from tests.transports.trio_helpers import trio_test

#: Seconds a wait for an announcement may take before the test fails (a hang guard).
HANG_GUARD = 10.0


class Heard:
    """What `watch_folder` announced, as the server's hub would have sent it."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.list_changes = 0
        self._news = trio.Event()

    async def resource_updated(self, uri: str) -> None:
        self.updated.append(uri)
        self._wake()

    async def resources_changed(self) -> None:
        self.list_changes += 1
        self._wake()

    def _wake(self) -> None:
        self._news.set()
        self._news = trio.Event()

    async def update_of(self, uri: str) -> None:
        """Wait until ``uri`` is announced."""
        with trio.fail_after(HANG_GUARD):
            while uri not in self.updated:
                await self._news.wait()

    async def list_change(self, count: int = 1) -> None:
        """Wait until ``count`` list changes were announced."""
        with trio.fail_after(HANG_GUARD):
            while self.list_changes < count:
                await self._news.wait()


def hostile_tree(base: Path) -> tuple[Path, Path]:
    """A served folder full of symlinks, and a folder outside it; both paths."""
    root = base / "served"
    outside = base / "outside"
    (root / "src" / "util").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (root / "notes.md").write_text("notes\n")
    (root / "src" / "app.py").write_text("app\n")
    (root / "src" / "util" / "helpers.py").write_text("helpers\n")
    (outside / "secret.txt").write_text("secret\n")
    (outside / "deep" / "private.txt").write_text("private\n")
    (root / "up").symlink_to("..")  # the served folder's parent
    (root / "everything").symlink_to("/")
    (root / "out").symlink_to(outside)
    (root / "alias").symlink_to("src")  # a folder alias inside
    (root / "notes-link.md").symlink_to("notes.md")  # a file alias inside
    return root, outside


@asynccontextmanager
async def watching(root: Path, **options: Any) -> AsyncIterator[tuple[Folder, Heard]]:
    folder = Folder(root)
    heard = Heard()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(watch_folder, folder, heard, **options))
        yield folder, heard
        nursery.cancel_scope.cancel()


def inotify_watches() -> set[int]:
    """The inodes this process's inotify instances watch (from /proc/self/fdinfo)."""
    inodes: set[int] = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{name}") as info:
                lines = info.readlines()
        except OSError:
            continue  # closed meanwhile
        for line in lines:
            if line.startswith("inotify wd:"):
                fields = dict(field.split(":", 1) for field in line.split()[1:])
                inodes.add(int(fields["ino"], 16))
    return inodes


def inodes_of(*paths: Path) -> set[int]:
    return {path.stat().st_ino for path in paths}


def leaked(heard: Heard, *names: str) -> list[str]:
    """Announced URIs that name a file outside the folder, or go through a symlink."""
    return [uri for uri in heard.updated if any(f"/{name}" in uri for name in names)]


OUTSIDE_NAMES = ("secret.txt", "private.txt", "up/", "everything/", "out/", "alias/", "deep/")


@trio_test
async def test_only_the_real_folders_inside_are_watched(tmp_path: Path) -> None:
    root, outside = hostile_tree(tmp_path)
    before = inotify_watches()
    async with watching(root):
        watched = inotify_watches() - before
        assert watched == inodes_of(root, root / "src", root / "src" / "util")
        assert not watched & inodes_of(tmp_path, Path("/"), outside, outside / "deep")


@trio_test
async def test_changes_outside_are_never_announced(tmp_path: Path) -> None:
    root, outside = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        (outside / "secret.txt").write_text("changed\n")
        (outside / "deep" / "private.txt").write_text("changed\n")
        (outside / "new.txt").write_text("new\n")
        # A served change after them: anything said about them came first.
        (root / "notes.md").write_text("changed\n")
        await heard.update_of(folder.uri + "notes.md")
    assert leaked(heard, *OUTSIDE_NAMES, "new.txt") == []
    assert all(uri.startswith(folder.uri) for uri in heard.updated)


@trio_test
async def test_a_change_arrives_under_its_canonical_uri_however_it_was_made(
    tmp_path: Path,
) -> None:
    root, _ = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        app = folder.uri + "src/app.py"
        notes = folder.uri + "notes.md"
        for path, uri in [
            (root / "src" / "app.py", app),  # its own path
            (root / "alias" / "app.py", app),  # through a folder alias inside
            (root / "up" / "served" / "src" / "app.py", app),  # through the parent
            (root / "notes-link.md", notes),  # through a file alias
            (root / "notes.md", notes),
        ]:
            heard.updated.clear()
            path.write_text(f"written through {path}\n")
            await heard.update_of(uri)
            assert set(heard.updated) == {uri}, path


@trio_test
async def test_no_change_after_start_up_is_missed(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        (root / "src" / "util" / "helpers.py").write_text("at once\n")
        await heard.update_of(folder.uri + "src/util/helpers.py")


@trio_test
async def test_new_folders_are_watched_and_what_was_made_in_them_announced(
    tmp_path: Path,
) -> None:
    root, outside = hostile_tree(tmp_path)
    before = inotify_watches()
    async with watching(root) as (folder, heard):
        # Made at once, before any watch on "new" can exist: found by the rescan.
        (root / "new" / "deeper").mkdir(parents=True)
        (root / "new" / "deeper" / "file.txt").write_text("one\n")
        (root / "new" / "out").symlink_to(outside)
        await heard.update_of(folder.uri + "new/deeper/file.txt")
        await heard.list_change()
        names = {resource.name for resource in folder.catalog.resources()}
        assert "new/deeper/file.txt" in names
        heard.updated.clear()
        (root / "new" / "deeper" / "file.txt").write_text("two\n")
        await heard.update_of(folder.uri + "new/deeper/file.txt")
        watched = inotify_watches() - before
        assert inodes_of(root / "new", root / "new" / "deeper") <= watched
        assert not watched & inodes_of(outside, outside / "deep", tmp_path, Path("/"))
        (outside / "secret.txt").write_text("again\n")
        (root / "notes.md").write_text("after\n")
        await heard.update_of(folder.uri + "notes.md")
    assert leaked(heard, *OUTSIDE_NAMES) == []


@trio_test
async def test_a_removed_and_recreated_folder_is_watched_again(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        (root / "src" / "util" / "helpers.py").unlink()
        (root / "src" / "util").rmdir()
        (root / "src" / "util").mkdir()
        (root / "src" / "util" / "helpers.py").write_text("back\n")
        await heard.update_of(folder.uri + "src/util/helpers.py")
        heard.updated.clear()
        (root / "src" / "util" / "helpers.py").write_text("changed\n")
        await heard.update_of(folder.uri + "src/util/helpers.py")


@trio_test
async def test_a_name_that_is_not_utf8_does_not_stop_the_watcher(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        with open(os.path.join(os.fsencode(root), b"\xff-not-utf8.txt"), "wb") as file:
            file.write(b"x")
        (root / "src" / "app.py").write_text("after it\n")
        await heard.update_of(folder.uri + "src/app.py")
        heard.updated.clear()
        (root / "notes.md").write_text("and later\n")
        await heard.update_of(folder.uri + "notes.md")
    assert all(uri.isprintable() for uri in heard.updated)


@trio_test
async def test_hidden_and_ignored_things_are_neither_watched_nor_announced(
    tmp_path: Path,
) -> None:
    root, _ = hostile_tree(tmp_path)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / ".cache").mkdir()
    before = inotify_watches()
    async with watching(root) as (folder, heard):
        assert not (inotify_watches() - before) & inodes_of(root / "build", root / ".cache")
        (root / "build" / "out.o").write_bytes(b"\x7fELF")
        (root / "app.log").write_text("log line\n")
        (root / ".cache" / "entry").write_text("cached\n")
        (root / ".env").write_text("TOKEN=x\n")
        (root / "notes.md").write_text("changed\n")
        await heard.update_of(folder.uri + "notes.md")
        assert heard.updated == [folder.uri + "notes.md"]
        heard.updated.clear()
        shutil.rmtree(root / "build")  # gone: an ignored folder is never named
        (root / "app.log").unlink()
        (root / "notes.md").write_text("again\n")
        await heard.update_of(folder.uri + "notes.md")
    assert heard.updated == [folder.uri + "notes.md"]
    assert heard.list_changes == 0


@trio_test
async def test_a_gitignore_change_takes_effect_at_once(tmp_path: Path) -> None:
    root, _ = hostile_tree(tmp_path)
    async with watching(root) as (folder, heard):
        (root / ".gitignore").write_text("notes.md\n")
        await heard.list_change()
        names = {resource.name for resource in folder.catalog.resources()}
        assert "notes.md" not in names
        assert "src/app.py" in names
        heard.updated.clear()
        (root / "notes.md").write_text("ignored now\n")
        (root / "src" / "app.py").write_text("still served\n")
        await heard.update_of(folder.uri + "src/app.py")
    assert folder.uri + "notes.md" not in heard.updated


@trio_test
async def test_at_most_so_many_folders_are_watched_the_shallowest_first(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, _ = hostile_tree(tmp_path)
    (root / "src" / "util" / "deeper").mkdir()
    before = inotify_watches()
    with caplog.at_level(logging.WARNING, logger="mcpcore.serve"):
        async with watching(root, max_folders=2):
            watched = inotify_watches() - before
    assert watched == inodes_of(root, root / "src")
    assert "watching 2 of the 4 folders" in caplog.text
