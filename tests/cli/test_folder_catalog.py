"""The folder's listing: scans, refreshes, and path completion."""

from __future__ import annotations

from pathlib import Path

from mcpcore import types
from mcpcore_cli.folder.catalog import MAX_COMPLETIONS, Catalog
from mcpcore_cli.folder.opening import resolve_root
from mcpcore_cli.folder.uris import folder_uri
from tests.cli.folder_tree import TEXT, make_tree


def catalog(root: Path, **options: int) -> Catalog:
    served = resolve_root(root)
    listing = Catalog(served, folder_uri(served.path), **options)
    listing.replace(listing.scan())
    return listing


def test_a_scan_lists_resources_with_their_metadata(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    listing = catalog(root)
    names = [resource.name for resource in listing.resources()]
    assert names == [
        "data/pixel.png",
        "notes-link.md",
        "notes.md",
        "src/app.py",
        "src/util/helpers.py",
    ]
    notes = listing.resources()[2]
    assert notes.uri == f"file://{root}/notes.md"
    assert (notes.title, notes.mime_type, notes.size) == ("notes.md", "text/markdown", len(TEXT))
    assert isinstance(notes.annotations, types.Annotations)
    assert isinstance(notes.annotations.last_modified, str)
    assert len(notes.annotations.last_modified) == len("2025-01-12T15:00:58Z")
    assert not listing.snapshot.truncated


def test_a_scan_stops_at_the_cap(tmp_path: Path) -> None:
    listing = catalog(make_tree(tmp_path), max_files=3)
    assert len(listing.resources()) == 3
    assert listing.snapshot.truncated


def test_replacing_says_whether_the_set_of_files_changed(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    listing = catalog(root)
    (root / "notes.md").write_text("longer " * 10)
    assert listing.replace(listing.scan()) is False
    (root / "new.txt").write_text("x")
    assert listing.replace(listing.scan()) is True
    (root / "new.txt").unlink()
    assert listing.replace(listing.scan()) is True


def test_a_refresh_describes_modified_files_anew_without_a_walk(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    listing = catalog(root)
    (root / "notes.md").write_text("x" * 1000)
    refreshed = listing.refreshed([("notes.md",), ("not", "listed")])
    assert refreshed is not None
    assert listing.replace(refreshed) is False
    sizes = {resource.name: resource.size for resource in listing.resources()}
    assert sizes["notes.md"] == 1000
    assert sizes["notes-link.md"] == len(TEXT)  # (its target is described on the next scan)
    (root / "notes.md").unlink()
    assert listing.refreshed([("notes.md",)]) is None  # gone: scan again


def test_paths_complete_one_folder_at_a_time(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    listing = catalog(root)
    assert listing.complete("").values == ["data/", "notes-link.md", "notes.md", "src/"]
    assert listing.complete("no").values == ["notes-link.md", "notes.md"]
    assert listing.complete("src/").values == ["src/app.py", "src/util/"]
    assert listing.complete("src/util/h").values == ["src/util/helpers.py"]
    assert listing.complete("zzz").values == []
    own = str(root).lstrip("/") + "/"
    assert listing.complete_absolute("").values == [own]
    assert listing.complete_absolute(own[:4]).values == [own]
    assert listing.complete_absolute("elsewhere/").values == []
    assert listing.complete_absolute(own + "src/u").values == [own + "src/util/"]


def test_completions_are_capped(tmp_path: Path) -> None:
    for index in range(MAX_COMPLETIONS + 20):
        (tmp_path / f"f{index:03}.txt").write_text("")
    completion = catalog(tmp_path).complete("f")
    assert len(completion.values) == MAX_COMPLETIONS
    assert (completion.total, completion.has_more) == (MAX_COMPLETIONS + 20, True)
