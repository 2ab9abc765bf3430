"""`Folder`: one folder served read-only, and reading its files by URI or by path.

Reads run in worker threads, at most `MAX_CONCURRENT_READS` at once, so that memory is
bounded (each read holds at most ``max_file_size`` bytes) and a slow disk never blocks
the event loop. Every failure becomes one of the errors in `ReadError`'s family, whose
messages never name a server path: `to_mcp_error` turns them into protocol errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, TypeVar

import trio

from mcpcore import jsonrpc, types
from mcpcore.errors import McpError
from mcpcore.server import ResourceNotFoundError
from mcpcore_cli.folder.catalog import MAX_LISTED_FILES, Catalog, page_size_for
from mcpcore_cli.folder.content import contents_of
from mcpcore_cli.folder.opening import (
    AccessRefusedError,
    FileData,
    FileMissingError,
    FileTooLargeError,
    read_file,
    resolve_root,
)
from mcpcore_cli.folder.uris import (
    InvalidUriError,
    NotAFileError,
    file_uri,
    folder_uri,
    parts_of_path,
    parts_of_uri,
)

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "MAX_CONCURRENT_READS",
    "Folder",
    "human_size",
    "to_mcp_error",
]

#: The largest file read, unless told otherwise (``--max-file-size``): a file a model
#: can use whole, and a response well under the 16 MiB message limit even as base64.
DEFAULT_MAX_FILE_SIZE: Final = 10 * 1024 * 1024
#: Files read (or batches grepped) at once, in worker threads: bounds the memory reads
#: hold to this many times ``max_file_size``, and leaves threads for everything else.
MAX_CONCURRENT_READS: Final = 16
_T = TypeVar("_T")
Contents = types.TextResourceContents | types.BlobResourceContents


class Folder:
    """A folder served read-only: its files, its listing, and reading them safely.

    The folder is scanned once here (bounded: see `MAX_LISTED_FILES`); run `watch_folder`
    to keep the listing and the subscribers up to date.

    Args:
        path: The folder.
        include_hidden: Serve dot files and dot folders too.
        gitignore: Honour the folder's ``.gitignore`` files (see `ignore`): what they
            ignore is not served.
        max_file_size: The largest file read, in bytes.
        max_listed_files: The most files ``resources/list`` lists.
        page_size: Files per ``resources/list`` page (default: `page_size_for`
            ``max_listed_files``, 1,000 for the default cap).

    Raises:
        FileNotFoundError: Nothing is at ``path``.
        NotADirectoryError: It is not a folder.
        ValueError: A limit is out of range, or the path is not UTF-8.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        include_hidden: bool = False,
        gitignore: bool = True,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        max_listed_files: int = MAX_LISTED_FILES,
        page_size: int | None = None,
    ) -> None:
        if max_file_size < 1 or max_listed_files < 0:
            raise ValueError("max_file_size must be at least 1, max_listed_files at least 0")
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.root = resolve_root(path, include_hidden=include_hidden, gitignore=gitignore)
        #: The folder's own URI (``file:///…/``): every file's URI starts with it.
        self.uri = folder_uri(self.root.path)
        self.max_file_size = max_file_size
        #: Files per ``resources/list`` page.
        self.page_size = page_size_for(max_listed_files) if page_size is None else page_size
        self.catalog = Catalog(self.root, self.uri, max_files=max_listed_files)
        self.catalog.replace(self.catalog.scan())
        self._limiter = trio.CapacityLimiter(MAX_CONCURRENT_READS)

    @property
    def path(self) -> str:
        """The folder's real path (symlinks resolved)."""
        return self.root.path

    @property
    def include_hidden(self) -> bool:
        """Whether dot files and dot folders are served."""
        return self.root.include_hidden

    @property
    def gitignore(self) -> bool:
        """Whether the folder's ``.gitignore`` rules are honoured."""
        return self.root.gitignore

    def uri_of(self, parts: tuple[str, ...]) -> str:
        """The URI of the file at ``parts`` (path segments relative to the folder)."""
        return file_uri(self.uri, parts)

    async def run_sync(self, function: Callable[..., _T], *args: object) -> _T:
        """Run blocking file work in a worker thread, within `MAX_CONCURRENT_READS`."""
        return await trio.to_thread.run_sync(function, *args, limiter=self._limiter)

    async def read(self, uri: str) -> Contents:
        """Read the file at ``uri``.

        Raises:
            InvalidUriError: The URI can't name a file of the folder.
            NotAFileError: It names a folder.
            FileMissingError: Nothing to serve there.
            AccessRefusedError: Something is there that may not be served.
            FileTooLargeError: The file is over ``max_file_size``.
        """
        parts = parts_of_uri(uri, self.root.parts)
        found = await self.run_sync(self._read, parts)
        return contents_of(uri, parts[-1], found.data)

    async def read_path(self, path: str) -> Contents:
        """Read the file at ``path``, relative to the folder (or a URI of it)."""
        if path.startswith("file:"):
            return await self.read(path)
        parts = parts_of_path(path)
        found = await self.run_sync(self._read, parts)
        return contents_of(self.uri_of(parts), parts[-1], found.data)

    def _read(self, parts: tuple[str, ...]) -> FileData:
        # An ignored file is "not found", as a hidden one: the rules of the latest scan.
        ignored = self.catalog.snapshot.ignored
        return read_file(self.root, parts, self.max_file_size, ignored=ignored)

    async def rescan(self) -> bool:
        """Scan the folder again; whether the set of listed files changed."""
        snapshot = await self.run_sync(self.catalog.scan)
        return self.catalog.replace(snapshot)

    async def refresh(self, modified: list[tuple[str, ...]]) -> bool:
        """Describe these modified files anew (or rescan if one is gone); see `rescan`."""
        snapshot = await self.run_sync(self.catalog.refreshed, modified)
        if snapshot is None:
            return await self.rescan()
        return self.catalog.replace(snapshot)


def to_mcp_error(error: Exception, uri: str) -> Exception:
    """The protocol error for a failed read of ``uri`` (other exceptions unchanged).

    Refusals are -32602 with ``data.uri`` and a message about the URI only; a file
    that is not there (or hidden, or a folder) is `ResourceNotFoundError`, which the
    server answers -32002 in the legacy era and -32602 in 2026-07-28.
    """
    data = {"uri": uri}
    if isinstance(error, InvalidUriError):
        return McpError(jsonrpc.INVALID_PARAMS, f"Invalid file URI: {error}", data)
    if isinstance(error, (FileMissingError, NotAFileError)):
        return ResourceNotFoundError(uri)
    if isinstance(error, AccessRefusedError):
        return McpError(jsonrpc.INVALID_PARAMS, "Access to this resource is refused", data)
    if isinstance(error, FileTooLargeError):
        message = (
            f"The file is larger than this server's limit of {human_size(error.limit)} "
            "(mcpcore serve --max-file-size)"
        )
        return McpError(jsonrpc.INVALID_PARAMS, message, {**data, "maxFileSize": error.limit})
    return error


def human_size(size: int) -> str:
    """``size`` bytes the way a person reads it: ``10 MiB``, ``512 KiB``, ``300 bytes``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
