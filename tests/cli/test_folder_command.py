"""``mcpcore serve``'s listing options: --max-files, --page-size, --no-ignore.

A folder of more than 6,400 files used to take more than 64 pages of 100, after which
the MCP Inspector stops paging: the whole capped listing now fits in a few pages.
"""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

import pytest
import trio

from mcpcore_cli.cli import main
from mcpcore_cli.folder import Folder, serve_folder
from mcpcore_cli.folder.catalog import (
    LISTING_PAGE_SIZE,
    MAX_LISTED_FILES,
    MAX_LISTING_PAGES,
    page_size_for,
)
from tests.cli.folder_tree import MCPCORE, START_TIMEOUT, make_tree, serve_subprocess
from tests.transports.trio_helpers import trio_test
from transports import Client, open_http_client

#: What the MCP Inspector pages through at most (issue 15): the listing must fit well under.
INSPECTOR_PAGES = 64


async def pages_of(client: Client) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while len(pages) <= MAX_LISTED_FILES:  # (a bound on a listing that never ends)
        page = await client.list_resources(cursor)
        pages.append([resource.name for resource in page.resources])
        if not isinstance(page.next_cursor, str):
            return pages
        cursor = page.next_cursor
    raise AssertionError("the listing never ends")


@trio_test(timeout=60)
async def test_a_folder_of_many_files_is_listed_in_a_few_pages(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    count = 6_500  # more than 64 pages of 100
    for index in range(count):
        (root / f"{index:05}.txt").write_text("x")
    folder = Folder(root)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_folder, folder, port=0, watch=False))
        async with open_http_client(url) as client:
            pages = await pages_of(client)
        nursery.cancel_scope.cancel()
    assert sum(len(page) for page in pages) == count
    assert len(pages) == 7  # 1,000 a page
    assert len(pages) <= MAX_LISTING_PAGES < INSPECTOR_PAGES


def test_the_page_size_grows_with_the_cap_to_keep_the_listing_short() -> None:
    assert page_size_for(MAX_LISTED_FILES) == LISTING_PAGE_SIZE
    assert page_size_for(10) == LISTING_PAGE_SIZE
    assert page_size_for(50_000) == 2_500
    assert page_size_for(100_000) == 5_000
    for cap in (1, 999, 20_000, 20_001, 77_777, 100_000):
        pages = -(-cap // page_size_for(cap))
        assert pages <= MAX_LISTING_PAGES


def test_help_documents_the_listing_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--max-files N list at most N files (default 10,000, at most 100,000)" in shown
    assert "--page-size N files per resources/list page (default 1,000" in shown
    assert "--no-ignore serve what the folder's .gitignore files" in shown
    assert "lists at most --max-files files (10,000 by default)" in shown


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (["--max-files", "0"], "must be from 1 to 100,000, not 0"),
        (["--max-files", "100001"], "must be from 1 to 100,000, not 100,001"),
        (["--max-files", "-3"], "must be from 1"),
        (["--max-files", "many"], "not a whole number: 'many'"),
        (["--page-size", "0"], "must be from 1 to 10,000, not 0"),
        (["--page-size", "10001"], "must be from 1 to 10,000, not 10,001"),
    ],
)
def test_counts_out_of_range_are_refused(
    tmp_path: Path, arguments: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", str(tmp_path), *arguments])
    assert exited.value.code == 2
    assert complaint in capsys.readouterr().err


@trio_test
async def test_max_files_and_page_size_reach_the_server(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    with serve_subprocess(root, "--max-files", "3", "--page-size", "2", "--no-watch") as url:
        async with open_http_client(url) as client:
            pages = await pages_of(client)
    assert pages == [["data/pixel.png", "notes-link.md"], ["notes.md"]]


def test_the_start_up_log_says_how_to_list_more(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    process = subprocess.run(
        [MCPCORE, "serve", str(root), "--stdio", "--max-files", "2", "--no-watch"],
        input="",
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=True,
    )
    assert "serving 2 files of" in process.stderr
    assert "(and more, not listed: --max-files)" in process.stderr


def checkout(base: Path) -> Path:
    root = base / "checkout"
    (root / "pkg.egg-info").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / ".gitignore").write_text("*.egg-info/\n__pycache__/\n")
    (root / "setup.py").write_text("setup()\n")
    (root / "pkg.egg-info" / "PKG-INFO").write_text("Name: pkg\n")
    (root / "__pycache__" / "setup.cpython-311.pyc").write_bytes(b"\x00")
    return root


@pytest.mark.parametrize(
    ("arguments", "listed"),
    [
        ([], ["setup.py"]),
        (
            ["--no-ignore"],
            ["__pycache__/setup.cpython-311.pyc", "pkg.egg-info/PKG-INFO", "setup.py"],
        ),
    ],
    ids=["honoured", "no-ignore"],
)
@trio_test
async def test_gitignore_is_honoured_unless_no_ignore(
    tmp_path: Path, arguments: list[str], listed: list[str]
) -> None:
    with serve_subprocess(checkout(tmp_path), *arguments) as url:
        async with open_http_client(url) as client:
            names = sorted([resource.name async for resource in client.iter_resources()])
    assert names == listed
