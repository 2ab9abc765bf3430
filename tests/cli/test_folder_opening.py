"""Opening files of the served folder: symlinks, special files, hidden files, sizes, walks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpcore_cli.folder import opening
from mcpcore_cli.folder.opening import (
    AccessRefusedError,
    FileMissingError,
    FileTooLargeError,
    read_file,
    resolve_root,
)
from tests.cli.folder_tree import BINARY, TEXT, make_tree

LIMIT = 1024 * 1024


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(tmp_path)


def parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


def test_regular_files_and_symlinks_inside_the_folder_are_read(root: Path) -> None:
    served = resolve_root(root)
    assert read_file(served, parts("notes.md"), LIMIT).data == TEXT.encode()
    assert read_file(served, parts("data/pixel.png"), LIMIT).data == BINARY
    assert read_file(served, parts("notes-link.md"), LIMIT).data == TEXT.encode()
    found = read_file(served, parts("src/util/helpers.py"), LIMIT)
    assert found.mtime == (root / "src" / "util" / "helpers.py").stat().st_mtime


@pytest.mark.parametrize("path", ["escape.txt", "escape-dir/secret.txt", "pipe", "socket"])
def test_what_leaves_the_folder_or_is_not_a_regular_file_is_refused(root: Path, path: str) -> None:
    with pytest.raises(AccessRefusedError) as refused:
        read_file(resolve_root(root), parts(path), LIMIT)
    assert str(refused.value) == ""  # nothing about the file system to pass on


def test_a_device_is_refused_without_being_opened() -> None:
    # /dev itself served: /dev/null is inside the folder, and a character device.
    with pytest.raises(AccessRefusedError):
        read_file(resolve_root("/dev"), ("null",), LIMIT)


@pytest.mark.parametrize(
    "path", [".env", ".git/config", "hidden-link.txt", "missing.txt", "src", "notes.md/x"]
)
def test_hidden_missing_and_folders_are_not_found(root: Path, path: str) -> None:
    with pytest.raises(FileMissingError):
        read_file(resolve_root(root), parts(path), LIMIT)


def test_hidden_files_are_read_when_asked_for(root: Path) -> None:
    served = resolve_root(root, include_hidden=True)
    assert read_file(served, parts(".env"), LIMIT).data == b"TOKEN=secret\n"
    assert read_file(served, parts("hidden-link.txt"), LIMIT).data == b"TOKEN=secret\n"


def test_the_folder_itself_through_a_symlink_is_not_a_file(root: Path) -> None:
    (root / "self").symlink_to(root)
    with pytest.raises(FileMissingError):
        read_file(resolve_root(root), ("self",), LIMIT)


def test_a_symlink_loop_is_refused(root: Path) -> None:
    (root / "loop-a").symlink_to("loop-b")
    (root / "loop-b").symlink_to("loop-a")
    with pytest.raises(AccessRefusedError):
        read_file(resolve_root(root), ("loop-a",), LIMIT)


def test_a_file_over_the_limit_is_refused_before_it_is_read(root: Path) -> None:
    with pytest.raises(FileTooLargeError) as large:
        read_file(resolve_root(root), ("notes.md",), len(TEXT) - 1)
    assert large.value.limit == len(TEXT) - 1
    assert read_file(resolve_root(root), ("notes.md",), len(TEXT)).data == TEXT.encode()


def test_a_file_that_grows_while_read_is_cut_off(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:
        status = real_fstat(fd)
        # What fstat said before the file grew: one byte, under the limit.
        return os.stat_result((status.st_mode, *status[1:6], 1, *status[7:]))

    monkeypatch.setattr(os, "fstat", stale_fstat)
    with pytest.raises(FileTooLargeError):
        read_file(resolve_root(root), ("notes.md",), 10)


def test_a_segment_swapped_for_a_symlink_after_resolution_is_not_followed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race: realpath saw a folder, then "src" became a symlink to the outside.
    served = resolve_root(root)
    real_resolve = opening.resolve

    def resolve_then_swap(segments: list[str]) -> list[str]:
        resolved = real_resolve(segments)
        (root / "src").rename(root / "src-before")
        (root / "src").symlink_to(root.parent / "outside")
        return resolved

    monkeypatch.setattr(opening, "resolve", resolve_then_swap)
    (root.parent / "outside" / "app.py").write_text("outside\n")
    # O_NOFOLLOW | O_DIRECTORY meets the symlink: ENOTDIR or ELOOP, never the outside.
    with pytest.raises((AccessRefusedError, FileMissingError)):
        read_file(served, ("src", "app.py"), LIMIT)


def test_the_root_must_be_a_folder(root: Path) -> None:
    with pytest.raises(NotADirectoryError):
        resolve_root(root / "notes.md")
    with pytest.raises(FileNotFoundError):
        resolve_root(root / "nothing")
    assert resolve_root(root / "src" / ".." / "data").path == str(root / "data")
