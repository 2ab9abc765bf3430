"""Globs, RE2 regular expressions, grep's bounds, and what a file's contents look like."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

from mcpcore import types
from mcpcore_cli.folder.content import contents_of, mime_type_of
from mcpcore_cli.folder.opening import resolve_root
from mcpcore_cli.folder.search import (
    MAX_LINE_SHOWN,
    MAX_PATTERN_LENGTH,
    InvalidPatternError,
    compile_glob,
    compile_regex,
    grep_files,
)
from tests.cli.folder_tree import make_tree

FAR = time.monotonic() + 3600.0


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "src/util/helpers.py", True),
        ("*.py", "notes.md", False),
        ("README*", "docs/README.md", True),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/util/helpers.py", False),
        ("src/**/*.py", "src/app.py", True),
        ("src/**/*.py", "src/util/deep/x.py", True),
        ("**/test_*.py", "test_a.py", True),
        ("docs/**", "docs/a/b.md", True),
        ("/src/app.py", "src/app.py", True),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "c.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("[a-c]*", "beta", True),
        ("a[.txt", "a[.txt", True),
        ("a+b (1).txt", "a+b (1).txt", True),
        ("*", "anything", True),
    ],
)
def test_globs_match_names_or_paths(glob: str, path: str, matches: bool) -> None:
    assert compile_glob(glob).matches(tuple(path.split("/"))) is matches


@pytest.mark.parametrize("pattern", ["", "x" * (MAX_PATTERN_LENGTH + 1)])
def test_a_pattern_too_short_or_too_long_is_refused(pattern: str) -> None:
    with pytest.raises(InvalidPatternError, match="1 to"):
        compile_regex(pattern)
    with pytest.raises(InvalidPatternError, match="1 to"):
        compile_glob(pattern)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("(a)\\1", "invalid escape"), ("(?=x)", "invalid"), ("(unclosed", "missing \\)")],
)
def test_what_re2_can_not_do_is_refused_with_its_reason(pattern: str, reason: str) -> None:
    with pytest.raises(InvalidPatternError, match=reason):
        compile_regex(pattern)


def test_a_pattern_whose_program_is_too_large_is_refused() -> None:
    with pytest.raises(InvalidPatternError):
        compile_regex("((((a{100}){100}){100}){100})")


def test_catastrophic_backtracking_patterns_run_in_linear_time(tmp_path: Path) -> None:
    # (a+)+$ against a's and a final b takes Python's re forever; RE2 one pass.
    (tmp_path / "evil.txt").write_text("a" * 200_000 + "b\n" + "a" * 50 + "\n")
    found = grep_files(
        resolve_root(tmp_path),
        [("evil.txt",)],
        compile_regex("^(a+)+$"),
        max_size=1 << 20,
        max_lines=10,
        deadline=FAR,
    )
    assert [(line.number, line.text) for line in found.lines] == [(2, "a" * 50)]


def test_grep_finds_lines_and_skips_binary_large_and_unreadable_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "big.txt").write_text("def huge\n" * 1000)
    (root / "long.txt").write_text("def " + "x" * 5000 + "\r\n")
    files = [("src", "app.py"), ("data", "pixel.png"), ("big.txt",), ("long.txt",), ("pipe",)]
    found = grep_files(
        resolve_root(root),
        files,
        compile_regex("^DEF", ignore_case=True),
        max_size=6000,
        max_lines=10,
        deadline=FAR,
    )
    assert [(line.parts, line.number) for line in found.lines] == [
        (("src", "app.py"), 1),
        (("long.txt",), 1),
    ]
    assert len(found.lines[1].text) == MAX_LINE_SHOWN
    assert (found.searched, found.skipped, found.out_of_time) == (2, 3, False)


def test_grep_stops_at_its_line_limit_and_its_deadline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n" * 50)
    (tmp_path / "b.txt").write_text("hit\n")
    root = resolve_root(tmp_path)
    pattern = compile_regex("hit")
    limited = grep_files(
        root, [("a.txt",), ("b.txt",)], pattern, max_size=1000, max_lines=3, deadline=FAR
    )
    assert [line.number for line in limited.lines] == [1, 2, 3]
    late = grep_files(
        root, [("a.txt",)], pattern, max_size=1000, max_lines=3, deadline=time.monotonic() - 1
    )
    assert (late.lines, late.out_of_time) == ([], True)


@pytest.mark.parametrize("pattern", ["\\Aline", "(?-m)^line", "^line"])
def test_anchors_mean_the_line_whatever_the_file(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "f.txt").write_text("first\nline two\n")
    found = grep_files(
        resolve_root(tmp_path),
        [("f.txt",)],
        compile_regex(pattern),
        max_size=1000,
        max_lines=10,
        deadline=FAR,
    )
    assert [line.number for line in found.lines] == [2]


@pytest.mark.parametrize(
    ("name", "mime_type"),
    [
        ("a.md", "text/markdown"),
        ("a.py", "text/x-python"),
        ("a.ts", "text/x-typescript"),
        ("a.png", "image/png"),
        ("a.json", "application/json"),
        ("a.tar.gz", None),
        ("Makefile", None),
    ],
)
def test_the_mime_type_comes_from_the_name(name: str, mime_type: str | None) -> None:
    assert mime_type_of(name) == mime_type


def test_utf8_text_is_text_and_anything_else_a_blob() -> None:
    text = contents_of("file:///a.md", "a.md", "héllo\n".encode())
    assert isinstance(text, types.TextResourceContents)
    assert (text.text, text.mime_type) == ("héllo\n", "text/markdown")
    unknown = contents_of("file:///Makefile", "Makefile", b"all:\n")
    assert isinstance(unknown, types.TextResourceContents)
    assert unknown.mime_type == "text/plain"
    # A name that says "binary" does not make text binary, nor the reverse.
    typescript = contents_of("file:///x.png", "x.png", b"plain words")
    assert isinstance(typescript, types.TextResourceContents)
    assert typescript.mime_type == "text/plain"
    latin1 = contents_of("file:///l.txt", "l.txt", "café".encode("latin-1"))
    assert isinstance(latin1, types.BlobResourceContents)
    assert (base64.b64decode(latin1.blob), latin1.mime_type) == (b"caf\xe9", "text/plain")
    nul = contents_of("file:///n", "n", b"a\x00b")
    assert isinstance(nul, types.BlobResourceContents)
    assert nul.mime_type == "application/octet-stream"
    empty = contents_of("file:///e.txt", "e.txt", b"")
    assert isinstance(empty, types.TextResourceContents)
    assert empty.text == ""
