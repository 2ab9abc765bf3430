"""Walking the served folder: order, bounds, symlinks, and what it can't or mustn't read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpcore_cli.folder.opening import resolve_root
from mcpcore_cli.folder.walk import TreeWalk
from tests.cli.folder_tree import BINARY, TEXT, make_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(tmp_path)


def test_a_walk_finds_servable_files_in_path_order(root: Path) -> None:
    walk = TreeWalk(resolve_root(root))
    found = [(file.parts, file.size) for file in walk.files()]
    assert found == [
        (("data", "pixel.png"), len(BINARY)),
        (("notes-link.md",), len(TEXT)),
        (("notes.md",), len(TEXT)),
        (("src", "app.py"), len("def main():\n    return 'app'\n")),
        (("src", "util", "helpers.py"), len("def helper():\n    return 42\n")),
    ]
    assert not walk.truncated
    with_hidden = [file.parts for file in TreeWalk(resolve_root(root, include_hidden=True)).files()]
    assert (".env",) in with_hidden
    assert (".git", "config") in with_hidden
    assert ("hidden-link.txt",) in with_hidden


def test_a_walk_stops_at_its_entry_budget(root: Path) -> None:
    walk = TreeWalk(resolve_root(root), max_entries=4)
    found = list(walk.files())
    assert walk.truncated
    assert len(found) < 5


def test_a_walk_skips_what_it_can_not_read(root: Path) -> None:
    (root / "locked").mkdir()
    (root / "locked" / "x.txt").write_text("x")
    os.chmod(root / "locked", 0)
    try:
        if os.access(root / "locked", os.R_OK):  # root ignores permissions: lock by name
            os.chmod(root / "locked", 0o755)
            (root / "locked").rename(root / "\udcff-not-utf8")
        names = [file.parts[0] for file in TreeWalk(resolve_root(root)).files()]
    finally:
        for name in ("locked", "\udcff-not-utf8"):
            if os.path.lexists(root / name):
                os.chmod(root / name, 0o755)
    assert "locked" not in names
    assert all(name.isprintable() for name in names)


def test_a_folder_swapped_for_a_symlink_out_mid_walk_is_not_entered(tmp_path: Path) -> None:
    root = tmp_path / "served"
    outside = tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_text("first\n")
    (root / "sub" / "inside.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("secret\n")
    walk = TreeWalk(resolve_root(root)).files()
    first = next(walk)  # the folder is listed, "sub" not yet
    assert first.parts == ("a.txt",)
    (root / "sub").rename(tmp_path / "sub-before")
    (root / "sub").symlink_to(outside)
    assert [file.parts for file in walk] == []


def test_a_folder_replaced_mid_walk_is_left_for_the_next_walk(tmp_path: Path) -> None:
    root = tmp_path / "served"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("first\n")
    (root / "sub" / "old.txt").write_text("old\n")
    walk = TreeWalk(resolve_root(root))
    files = walk.files()
    next(files)
    (root / "sub").rename(tmp_path / "sub-before")
    (root / "sub").mkdir()  # another folder by the same name: not the one listed
    (root / "sub" / "new.txt").write_text("new\n")
    assert list(files) == []
    assert list(walk.folders) == [()]
    assert [file.parts for file in TreeWalk(resolve_root(root)).files()] == [
        ("a.txt",),
        ("sub", "new.txt"),
    ]


def test_a_walk_records_the_real_folders_it_listed(root: Path) -> None:
    walk = TreeWalk(resolve_root(root))
    list(walk.files())
    assert set(walk.folders) == {(), ("data",), ("src",), ("src", "util")}
    assert walk.folders[("src",)] == (
        (root / "src").stat().st_dev,
        (root / "src").stat().st_ino,
    )


def test_past_its_files_a_walk_goes_on_for_the_folders_only(root: Path) -> None:
    walk = TreeWalk(resolve_root(root))
    files = walk.files()
    assert next(files).parts == ("data", "pixel.png")
    walk.files_wanted = False
    assert list(files) == []
    assert set(walk.folders) == {(), ("data",), ("src",), ("src", "util")}


def test_special_files_dangling_links_and_loops_are_skipped(root: Path) -> None:
    (root / "dangling").symlink_to("nothing")
    (root / "loop").symlink_to("loop")
    (root / "folder-link").symlink_to("src")
    (root / "to-fifo").symlink_to("pipe")
    names = [file.parts[0] for file in TreeWalk(resolve_root(root)).files()]
    assert names == ["data", "notes-link.md", "notes.md", "src", "src"]
