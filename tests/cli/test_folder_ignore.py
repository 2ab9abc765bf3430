"""Honouring .gitignore: what git ignores is not served, and git itself is the judge.

The property test builds random trees with random ``.gitignore`` files (nested, with
negations, folder-only and anchored patterns) and compares the walk with ``git ls-files
--others --exclude-standard``. The other tests pin what "not served" means at each door
(listing, read by URI, search_files, grep, completion), ``--no-ignore``, and the bounds
that keep a hostile ``.gitignore`` cheap.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpcore import jsonrpc, types
from mcpcore.client import McpError
from mcpcore_cli.folder import Folder, ignore, serve_folder
from mcpcore_cli.folder.ignore import (
    MAX_IGNORE_FILE_SIZE,
    MAX_IGNORE_FILES_PER_PATH,
    parse_ignore_file,
)
from mcpcore_cli.folder.opening import FileMissingError, read_file, resolve_root
from mcpcore_cli.folder.walk import TreeWalk
from tests.transports.trio_helpers import trio_test
from transports import open_http_client

NAMES = ["a", "b.py", "c.log", "build", "x.egg-info", "__pycache__", "keep.log"]
PATTERNS = [
    "*.log",
    "!keep.log",
    "build/",
    "build",
    "/a",
    "a/",
    "b.py",
    "!b.py",
    "**/b.py",
    "*.egg-info",
    "__pycache__/",
    "a/**",
    "!a/",
    "x*/",
    "*/c.log",
    "#b.py",
    "\\#b.py",
    "[ab]*",
    "!build/",
    "a/b.py",
]
#: Paths of the generated trees: up to three folders deep.
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(tuple)


def git_visible(root: Path) -> set[tuple[str, ...]]:
    """What ``git ls-files --others --exclude-standard`` lists: git's own judgement."""
    environment = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,  # no user excludes file
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=environment)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        env=environment,
    ).stdout
    return {tuple(path.split("/")) for path in listed.decode().split("\0") if path}


def walked(root: Path) -> set[tuple[str, ...]]:
    served = resolve_root(root, include_hidden=True)
    return {file.parts for file in TreeWalk(served).files() if file.parts[0] != ".git"}


@settings(max_examples=150, deadline=None)
@given(
    files=st.lists(PATHS, min_size=1, max_size=12),
    ignores=st.lists(
        st.tuples(
            st.lists(st.sampled_from(NAMES), max_size=2).map(tuple),
            st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5),
        ),
        max_size=4,
    ),
    exclude=st.lists(st.sampled_from(PATTERNS), max_size=3),
)
def test_the_walk_serves_what_git_does_not_ignore(
    files: list[tuple[str, ...]],
    ignores: list[tuple[tuple[str, ...], list[str]]],
    exclude: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as base:
        root = Path(base) / "repo"
        root.mkdir()
        for parts in files:
            path = root.joinpath(*parts)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("x\n")
            except (FileExistsError, IsADirectoryError, NotADirectoryError):
                continue  # a name already taken by a folder, or by a file
        for folder, lines in ignores:
            directory = root.joinpath(*folder)
            if directory.is_dir():
                (directory / ".gitignore").write_text("\n".join(lines) + "\n")
        expected = git_visible(root)
        if exclude:
            (root / ".git" / "info" / "exclude").write_text("\n".join(exclude) + "\n")
            expected = git_visible(root)
        assert walked(root) == expected


def checkout(base: Path) -> Path:
    """A Python checkout with build artefacts and a .gitignore for them."""
    root = base / "checkout"
    (root / "src" / "pkg" / "__pycache__").mkdir(parents=True)
    (root / "src" / "pkg.egg-info").mkdir()
    (root / "build" / "lib").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".gitignore").write_text("*.egg-info/\n__pycache__/\n/build\n*.log\n")
    (root / "docs" / ".gitignore").write_text("_build/\n!keep.log\n")
    (root / "src" / "pkg" / "__init__.py").write_text("VERSION = 1  # findme\n")
    (root / "src" / "pkg" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"findme")
    (root / "src" / "pkg.egg-info" / "PKG-INFO").write_text("Name: pkg  # findme\n")
    (root / "build" / "lib" / "copy.py").write_text("findme = 1\n")
    (root / "docs" / "index.md").write_text("# findme\n")
    (root / "docs" / "keep.log").write_text("findme\n")
    (root / "debug.log").write_text("findme\n")
    return root


SERVED = ["docs/index.md", "docs/keep.log", "src/pkg/__init__.py"]
IGNORED = [
    "src/pkg/__pycache__/__init__.cpython-311.pyc",
    "src/pkg.egg-info/PKG-INFO",
    "build/lib/copy.py",
    "debug.log",
]


async def every_door(client: Any, folder: Folder) -> dict[str, Any]:
    """What each way into the folder shows of it."""
    listed = sorted([resource.name async for resource in client.iter_resources()])
    found = await client.call_tool("search_files", {"pattern": "*"})
    grepped = await client.call_tool("grep", {"pattern": "findme"})
    completed = await client.complete(
        types.ResourceTemplateReference(uri="file:///{+path}"),
        "path",
        folder.path.lstrip("/") + "/src/",
    )
    return {
        "listed": listed,
        "found": sorted(file["path"] for file in found.structured_content["files"]),
        "grepped": sorted({match["path"] for match in grepped.structured_content["matches"]}),
        "completed": completed.completion.values,
    }


@trio_test
async def test_ignored_files_are_not_served_at_any_door(tmp_path: Path) -> None:
    folder = Folder(checkout(tmp_path))
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_folder, folder, port=0, watch=False))
        async with open_http_client(url) as client:
            seen = await every_door(client, folder)
            for path in SERVED:
                read = await client.read_resource(folder.uri + path)
                assert read.contents
            missing = await refusal(client, folder.uri + "src/pkg/missing.py")
            for path in IGNORED:
                # The same answer as for a file that is not there at all.
                assert await refusal(client, folder.uri + path) == missing
        nursery.cancel_scope.cancel()
    assert seen == {
        "listed": SERVED,
        "found": SERVED,
        "grepped": SERVED,
        "completed": [folder.path.lstrip("/") + "/src/pkg/"],
    }
    assert missing[0] == jsonrpc.INVALID_PARAMS


async def refusal(client: Any, uri: str) -> tuple[int, str]:
    with pytest.raises(McpError) as refused:
        await client.read_resource(uri)
    data = refused.value.data
    assert data == {"uri": uri}
    return refused.value.code, refused.value.message


@trio_test
async def test_no_ignore_serves_everything(tmp_path: Path) -> None:
    folder = Folder(checkout(tmp_path), gitignore=False)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_folder, folder, port=0, watch=False))
        async with open_http_client(url) as client:
            seen = await every_door(client, folder)
            for path in IGNORED:
                assert (await client.read_resource(folder.uri + path)).contents
        nursery.cancel_scope.cancel()
    assert seen["listed"] == sorted(SERVED + IGNORED)
    assert seen["found"] == sorted(SERVED + IGNORED)
    assert "src/pkg.egg-info/PKG-INFO" in seen["grepped"]
    assert sorted(seen["completed"]) == [
        folder.path.lstrip("/") + "/src/pkg.egg-info/",
        folder.path.lstrip("/") + "/src/pkg/",
    ]


def test_a_file_under_an_ignored_folder_stays_ignored_whatever_later_lines_say(
    tmp_path: Path,
) -> None:
    root = tmp_path / "served"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "keep.log").write_text("kept?\n")
    (root / ".gitignore").write_text("logs/\n!logs/keep.log\n")
    assert walked(root) == {(".gitignore",)}
    served = resolve_root(root)
    walk = TreeWalk(served)
    list(walk.files())
    assert walk.rules is not None
    with pytest.raises(FileMissingError):
        read_file(served, ("logs", "keep.log"), 100, ignored=walk.rules.path_ignored)


def test_a_new_folder_is_judged_by_its_own_gitignore_before_any_walk(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    walk = TreeWalk(resolve_root(root))
    list(walk.files())
    (root / "late" / "deeper").mkdir(parents=True)
    (root / "late" / ".gitignore").write_text("secret.txt\n")
    (root / "late" / "deeper" / "secret.txt").write_text("no\n")
    (root / "late" / "deeper" / "open.txt").write_text("yes\n")
    assert walk.rules is not None
    assert walk.rules.path_ignored(("late", "deeper", "secret.txt"))
    assert not walk.rules.path_ignored(("late", "deeper", "open.txt"))


def test_a_gitignore_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    (tmp_path / "rules").write_text("*.txt\n")
    (root / ".gitignore").symlink_to(tmp_path / "rules")
    (root / "a.txt").write_text("a\n")
    assert ("a.txt",) in walked(root)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000) | st.text(max_size=300).map(str.encode))
def test_any_gitignore_content_is_parsed_without_error(data: bytes) -> None:
    spec = parse_ignore_file(data)
    if spec is not None:
        spec.check_file("a/b.txt")
        spec.check_file("a/")


def test_invalid_lines_are_skipped_and_the_rest_honoured(tmp_path: Path) -> None:
    spec = parse_ignore_file(b"[z-a]\nfoo\\\n*.log\n")
    assert spec is not None
    assert spec.check_file("x.log").include is True
    assert spec.check_file("foo").include is None


def test_a_huge_gitignore_is_read_up_to_its_limit(tmp_path: Path) -> None:
    lines = [f"file{index}.txt" for index in range(MAX_IGNORE_FILE_SIZE // 8)]
    data = "\n".join(lines).encode()
    assert len(data) > MAX_IGNORE_FILE_SIZE
    root = tmp_path / "served"
    root.mkdir()
    (root / ".gitignore").write_bytes(data)
    (root / "file0.txt").write_text("early rule\n")
    (root / f"file{len(lines) - 1}.txt").write_text("rule past the limit\n")
    assert walked(root) == {(".gitignore",), (f"file{len(lines) - 1}.txt",)}


def test_only_so_many_nested_gitignore_files_apply_to_one_path(tmp_path: Path) -> None:
    root = tmp_path / "served"
    folder = root
    for depth in range(MAX_IGNORE_FILES_PER_PATH + 3):
        folder.mkdir(parents=True)
        (folder / ".gitignore").write_text(f"ignored-{depth}.txt\n")
        folder = folder / "d"
    folder.mkdir()
    for depth in range(MAX_IGNORE_FILES_PER_PATH + 3):
        (folder / f"ignored-{depth}.txt").write_text("x\n")
    names = {parts[-1] for parts in walked(root) if parts[-1] != ".gitignore"}
    assert names == {
        f"ignored-{depth}.txt"
        for depth in range(MAX_IGNORE_FILES_PER_PATH, MAX_IGNORE_FILES_PER_PATH + 3)
    }


@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling", "loop"])
def test_a_gitignore_that_is_not_a_file_is_no_rules_and_no_hang(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "served"
    root.mkdir()
    rules = root / ".gitignore"
    if kind == "fifo":
        os.mkfifo(rules)  # opened, it would block the walk for good
    elif kind == "folder":
        rules.mkdir()
    elif kind == "dangling":
        rules.symlink_to("nothing")
    else:
        rules.symlink_to(".gitignore")
    (root / "a.txt").write_text("a\n")
    assert ("a.txt",) in walked(root)


def test_one_walk_honours_so_many_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ignore, "MAX_IGNORE_PATTERNS", 2)
    root = tmp_path / "served"
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        (root / folder / ".gitignore").write_text("one.txt\ntwo.txt\n")
        for name in ("one.txt", "two.txt", "three.txt"):
            (root / folder / name).write_text("x\n")
    served = {"/".join(parts) for parts in walked(root) if parts[-1] != ".gitignore"}
    # "a" is walked first and spends the budget: the rules of "b" are not read.
    assert served == {"a/three.txt", "b/one.txt", "b/two.txt", "b/three.txt"}
