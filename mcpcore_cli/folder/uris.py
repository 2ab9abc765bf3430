"""From ``file://`` URIs to paths inside the served folder and back, with no IO.

A file's URI is the folder's own URI (``file:///home/ada/notes/``) followed by the
file's path relative to it, each segment percent-encoded (RFC 8089, RFC 3986 §2.1):
``file:///home/ada/notes/2025/Jan%2012.md``. Everything here works on the URI's text
alone; what the file system says (symlinks, file types) is checked in `opening`.

"Servers MUST validate all resource URIs" (2024-11-05 server/resources) and "MUST
sanitize file paths against directory traversal when serving file:// resources"
(2026-07-28). So a URI is refused, before any file is looked at, when it:

* is not a ``file:`` URI, names a host, or has a query or a fragment;
* has a ``.`` or ``..`` segment, written out or percent-encoded (``%2e%2e``);
* encodes a ``/`` or a NUL inside a segment (``%2F``, ``%00``): a segment is one name;
* has an empty segment (``a//b``), or octets that are not UTF-8;
* is longer than a path may be (`MAX_PATH_BYTES`, `MAX_NAME_BYTES`);
* lies outside the folder's own URI.

The reasons given (`InvalidUriError`) speak of the URI only, never of the file system.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final
from urllib.parse import quote, unquote_to_bytes

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "InvalidUriError",
    "NotAFileError",
    "file_uri",
    "folder_uri",
    "is_hidden",
    "parts_of_path",
    "parts_of_uri",
]

#: The longest path accepted, in bytes: Linux's PATH_MAX. Anything longer could not
#: be opened anyway, and is refused before it costs a system call.
MAX_PATH_BYTES: Final = 4096
#: The longest name of one file or folder, in bytes: NAME_MAX on every common file
#: system.
MAX_NAME_BYTES: Final = 255
_SCHEME: Final = "file://"
_DOT_SEGMENTS: Final = frozenset({b".", b".."})


class InvalidUriError(ValueError):
    """A URI or path that can't name a file of the folder (answered -32602).

    Its message says what is wrong with the text given, and nothing about the file
    system: it is shown to the client.
    """


class NotAFileError(LookupError):
    """A well-formed URI that names the folder itself or a folder in it, not a file."""


def folder_uri(root: str) -> str:
    """The ``file://`` URI of the absolute path ``root``, ending with ``/``."""
    encoded = quote(root, safe="/")
    return f"{_SCHEME}{encoded}" if encoded.endswith("/") else f"{_SCHEME}{encoded}/"


def file_uri(root_uri: str, parts: Sequence[str]) -> str:
    """The URI of the file at ``parts`` (path segments) under the folder ``root_uri``."""
    return root_uri + "/".join(quote(part, safe="") for part in parts)


def parts_of_uri(uri: str, root_parts: Sequence[str]) -> tuple[str, ...]:
    """The path segments, relative to the folder, of the file ``uri`` names.

    Args:
        uri: The URI a client sent.
        root_parts: The folder's own absolute path, as segments (``("home", "ada")``).

    Raises:
        InvalidUriError: The URI can't name a file of the folder (see the module docstring).
        NotAFileError: It names the folder itself, or ends with ``/`` (a folder).
    """
    if uri[: len(_SCHEME)].lower() != _SCHEME:
        raise InvalidUriError("not a file:// URI")
    rest = uri[len(_SCHEME) :]
    if "?" in rest or "#" in rest:
        raise InvalidUriError("a file URI has no query or fragment")
    host, slash, path = rest.partition("/")
    if host or not slash:
        # RFC 8089 allows "file://localhost/", but the files' URIs never use it.
        raise InvalidUriError("the URI names a host")
    segments = path.split("/")
    directory = segments[-1] == ""
    if directory:
        segments.pop()
    parts = _decode(segments)
    count = len(root_parts)
    if len(parts) < count or tuple(parts[:count]) != tuple(root_parts):
        raise InvalidUriError("the URI is outside the served folder")
    relative = tuple(parts[count:])
    if directory or not relative:
        raise NotAFileError(uri)
    return relative


def parts_of_path(path: str) -> tuple[str, ...]:
    """The segments of a path relative to the folder, as a tool or prompt argument.

    Raises:
        InvalidUriError: It is absolute, empty, has ``.``/``..`` or empty segments, a NUL,
            or is too long.
    """
    if path.startswith("/"):
        raise InvalidUriError("the path must be relative to the served folder")
    if "\x00" in path:
        raise InvalidUriError("the path contains a NUL character")
    segments = path.split("/")
    try:
        encoded = [segment.encode("utf-8") for segment in segments]
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
        raise InvalidUriError("the path is not UTF-8") from None
    _check_segments(encoded)
    return tuple(segments)


def is_hidden(parts: Sequence[str]) -> bool:
    """Whether any segment is hidden (a dot file or a dot folder, as ``ls`` hides them)."""
    return any(part.startswith(".") for part in parts)


def _decode(segments: list[str]) -> list[str]:
    if sum(len(segment) for segment in segments) > 3 * MAX_PATH_BYTES:
        raise InvalidUriError("the path is too long")  # (cheap refusal before decoding)
    raw = [unquote_to_bytes(segment) for segment in segments]
    _check_segments(raw[1:] if raw and raw[0] == b"" else raw)
    if raw and raw[0] == b"":
        raw = raw[1:]  # "file:///a": the path starts with "/"
    try:
        return [segment.decode("utf-8") for segment in raw]
    except UnicodeDecodeError:
        raise InvalidUriError("the path is not UTF-8") from None


def _check_segments(segments: Sequence[bytes]) -> None:
    total = 0
    for segment in segments:
        if not segment:
            raise InvalidUriError("the path has an empty segment")
        if segment in _DOT_SEGMENTS:
            raise InvalidUriError("the path has a '.' or '..' segment")
        if b"/" in segment:
            raise InvalidUriError("a segment of the path encodes '/'")
        if b"\x00" in segment:
            raise InvalidUriError("the path contains a NUL character")
        if len(segment) > MAX_NAME_BYTES:
            raise InvalidUriError("a segment of the path is too long")
        total += len(segment) + 1
    if total > MAX_PATH_BYTES:
        raise InvalidUriError("the path is too long")
