"""``file://`` URIs to paths inside the served folder and back: the checks that need no IO."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpcore_cli.folder.uris import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    InvalidUriError,
    NotAFileError,
    file_uri,
    folder_uri,
    is_hidden,
    parts_of_path,
    parts_of_uri,
)

ROOT = ("home", "ada", "my notes")
BASE = folder_uri("/home/ada/my notes")


def test_the_folder_uri_is_percent_encoded_and_ends_with_a_slash() -> None:
    assert BASE == "file:///home/ada/my%20notes/"
    assert folder_uri("/") == "file:///"
    assert folder_uri("/srv/") == "file:///srv/"


def test_a_file_uri_encodes_each_segment() -> None:
    uri = file_uri(BASE, ("2025", "Jan 12 #1?.md"))
    assert uri == "file:///home/ada/my%20notes/2025/Jan%2012%20%231%3F.md"
    assert parts_of_uri(uri, ROOT) == ("2025", "Jan 12 #1?.md")
    assert file_uri(BASE, ("é/x",)) == BASE + "%C3%A9%2Fx"  # a "/" in a name stays one name


segment = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="/\x00"),
    min_size=1,
    max_size=40,
).filter(lambda name: name not in {".", ".."})


@given(st.lists(segment, min_size=1, max_size=6))
def test_every_path_goes_to_a_uri_and_back(parts: list[str]) -> None:
    uri = file_uri(BASE, parts)
    assert parts_of_uri(uri, ROOT) == tuple(parts)


def test_other_spellings_of_the_same_path_are_understood() -> None:
    assert parts_of_uri("FILE:///home/ada/my%20notes/a.txt", ROOT) == ("a.txt",)
    assert parts_of_uri("file:///home/ada/my%20notes/%61.txt", ROOT) == ("a.txt",)
    assert parts_of_uri("file:///%68ome/ada/my%20notes/a%2etxt", ROOT) == ("a.txt",)


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("http://example.com/a.txt", "not a file:// URI"),
        ("file:a.txt", "not a file:// URI"),
        ("file://evil.example/home/ada/my%20notes/a.txt", "names a host"),
        ("file://localhost/home/ada/my%20notes/a.txt", "names a host"),
        (BASE + "a.txt?x=1", "query or fragment"),
        (BASE + "a.txt#top", "query or fragment"),
        (BASE + "../x", "'.' or '..'"),
        (BASE + "%2e%2e/x", "'.' or '..'"),
        (BASE + "%2E%2e/x", "'.' or '..'"),
        (BASE + "a/./b", "'.' or '..'"),
        (BASE + "a/%2E/b", "'.' or '..'"),
        ("file:///home/ada/../ada/my%20notes/a.txt", "'.' or '..'"),
        (BASE + "..%2Fx", "encodes '/'"),
        (BASE + "a%2fb", "encodes '/'"),
        (BASE + "a%00.txt", "NUL"),
        (BASE + "a//b", "empty segment"),
        (BASE + "%ff.txt", "not UTF-8"),
        (BASE + "x" * (MAX_NAME_BYTES + 1), "segment of the path is too long"),
        (BASE + "ab/" * (MAX_PATH_BYTES // 3) + "c", "path is too long"),
        (BASE + "%41" * (MAX_PATH_BYTES + 1), "too long"),
        ("file:///etc/passwd", "outside the served folder"),
        ("file:///home/ada/my%20notes2/a.txt", "outside the served folder"),
        ("file:///home/ada", "outside the served folder"),
    ],
)
def test_a_uri_that_can_not_name_a_file_of_the_folder_is_refused(uri: str, reason: str) -> None:
    with pytest.raises(InvalidUriError, match=reason) as refused:
        parts_of_uri(uri, ROOT)
    assert "/home/ada" not in str(refused.value)  # the reason speaks of the URI only


@pytest.mark.parametrize("uri", [BASE, BASE + "src/", "file:///home/ada/my%20notes"])
def test_the_folder_or_a_folder_in_it_is_not_a_file(uri: str) -> None:
    with pytest.raises(NotAFileError):
        parts_of_uri(uri, ROOT)


def test_a_folder_at_the_root_of_the_file_system_serves_every_absolute_path() -> None:
    assert parts_of_uri("file:///etc/hosts", ()) == ("etc", "hosts")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "relative"),
        ("../x", "'.' or '..'"),
        ("a/../../x", "'.' or '..'"),
        ("./a", "'.' or '..'"),
        ("a//b", "empty segment"),
        ("", "empty segment"),
        ("docs/", "empty segment"),
        ("a\x00b", "NUL"),
        ("\ud800.txt", "not UTF-8"),
        ("x" * (MAX_NAME_BYTES + 1), "too long"),
    ],
)
def test_a_relative_path_argument_is_checked_the_same_way(path: str, reason: str) -> None:
    with pytest.raises(InvalidUriError, match=reason):
        parts_of_path(path)


def test_a_relative_path_argument_becomes_segments() -> None:
    assert parts_of_path("src/util/helpers.py") == ("src", "util", "helpers.py")
    assert parts_of_path("%2e%2e") == ("%2e%2e",)  # a path is not percent-decoded


def test_hidden_means_any_dot_segment() -> None:
    assert is_hidden((".env",))
    assert is_hidden(("src", ".cache", "x"))
    assert not is_hidden(("src", "a.env"))
