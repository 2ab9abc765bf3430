"""The folder's listing: a snapshot of its files, as ``resources/list`` publishes them.

A scan walks the folder (`TreeWalk`) in a worker thread and builds the whole listing at
once; the server lists the snapshot it holds, so a ``resources/list`` page costs no file
system call, and pagination cursors (positions, sealed by the `Server`) keep meaning
the same thing until the folder changes. The watcher rescans after each burst of
changes that adds or removes files, and says whether the set of files changed; a burst
that only modifies files just refreshes their sizes and times (`Catalog.refreshed`).

The listing is bounded (`MAX_LISTED_FILES` files unless told otherwise: ``mcpcore
serve --max-files``). Files past it, in the walk's order, are neither listed nor
completed, but can still be read by URI and found by the tools. A page holds
`LISTING_PAGE_SIZE` files, or more when the cap is raised (`page_size_for`), so that a
client pages through the whole listing in at most `MAX_LISTING_PAGES` requests: some
clients stop early (the MCP Inspector after 64 pages).

A scan also records every folder it listed, with its identity: the folders the watcher
watches (`watch`), and the ignore rules it read (`ignore`), which reads by URI apply.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from mcpcore import types
from mcpcore_cli.folder.content import mime_type_of
from mcpcore_cli.folder.ignore import IgnoreRules
from mcpcore_cli.folder.opening import AccessRefusedError, FileMissingError, Root, stat_file
from mcpcore_cli.folder.uris import file_uri
from mcpcore_cli.folder.walk import FoundFile, Identity, TreeWalk

__all__ = [
    "LISTING_PAGE_SIZE",
    "MAX_COMPLETIONS",
    "MAX_LISTED_FILES",
    "MAX_LISTING_PAGES",
    "Catalog",
    "Snapshot",
    "page_size_for",
]

#: Files listed by resources/list, at most, unless told otherwise (``--max-files``): a
#: listing a client fetches in a few requests and a model can still take in; past it a
#: client finds files with search_files. Can't exceed what one walk looks at.
MAX_LISTED_FILES: Final = 10_000
#: Files per resources/list page unless told otherwise (``--page-size``): ten pages
#: for the whole default listing, ~250 KB of JSON per page.
LISTING_PAGE_SIZE: Final = 1000
#: Pages the whole listing takes, at most, with the page size `page_size_for` picks:
#: well under the 64 pages after which the MCP Inspector stops paging.
MAX_LISTING_PAGES: Final = 20
#: Completion values offered (the protocol's own maximum per answer).
MAX_COMPLETIONS: Final = 100


def page_size_for(max_files: int) -> int:
    """The page size that lists ``max_files`` files in at most `MAX_LISTING_PAGES` pages.

    `LISTING_PAGE_SIZE`, or more when the cap is raised past 20,000 files.
    """
    return max(LISTING_PAGE_SIZE, math.ceil(max_files / MAX_LISTING_PAGES))


class Snapshot:
    """The files of one scan, in order, with the resources that list them.

    Attributes:
        files: The files found, in the walk's order.
        resources: Their listings.
        truncated: Whether the folder holds more than was listed.
        folders: The folders the scan listed, with their identities.
        rules: The ignore rules it read (None when they are not honoured).
    """

    __slots__ = ("_positions", "_uris", "files", "folders", "resources", "rules", "truncated")

    def __init__(
        self,
        root_uri: str,
        found: Sequence[FoundFile],
        truncated: bool,
        *,
        folders: Mapping[tuple[str, ...], Identity] | None = None,
        rules: IgnoreRules | None = None,
    ) -> None:
        self.files = tuple(found)
        self.resources = tuple(_resource(root_uri, file) for file in self.files)
        self._uris = frozenset(resource.uri for resource in self.resources)
        self._positions = {file.parts: index for index, file in enumerate(self.files)}
        self.truncated = truncated
        self.folders: Mapping[tuple[str, ...], Identity] = folders or {}
        self.rules = rules

    def same_files(self, other: Snapshot) -> bool:
        """Whether both list exactly the same URIs (sizes and times aside)."""
        return self._uris == other._uris

    def position(self, parts: tuple[str, ...]) -> int | None:
        """Where the file at ``parts`` is listed, if it is."""
        return self._positions.get(parts)

    def updated(self, root_uri: str, changes: dict[int, FoundFile]) -> Snapshot:
        """A copy with the files at these positions (same paths) described anew."""
        files = list(self.files)
        resources = list(self.resources)
        for index, file in changes.items():
            files[index] = file
            resources[index] = _resource(root_uri, file)
        copy = Snapshot.__new__(Snapshot)
        copy.files = tuple(files)
        copy.resources = tuple(resources)
        copy._uris = self._uris
        copy._positions = self._positions
        copy.truncated = self.truncated
        copy.folders = self.folders
        copy.rules = self.rules
        return copy

    def ignored(self, parts: tuple[str, ...]) -> bool:
        """Whether the rules of this scan ignore the file at ``parts`` (blocks)."""
        return self.rules is not None and self.rules.path_ignored(parts)


class Catalog:
    """The listing of one folder, kept as the latest `Snapshot`."""

    __slots__ = ("_max_files", "_root", "_root_uri", "snapshot")

    def __init__(self, root: Root, root_uri: str, *, max_files: int = MAX_LISTED_FILES) -> None:
        self._root = root
        self._root_uri = root_uri
        self._max_files = max_files
        self.snapshot = Snapshot(root_uri, (), False)

    def scan(self) -> Snapshot:
        """Walk the folder and build a snapshot (blocks: run it in a thread).

        Past the cap the walk goes on for the folders only (the watcher needs all of
        them), looking at no file.
        """
        walk = TreeWalk(self._root)
        found: list[FoundFile] = []
        truncated = False
        for file in walk.files():
            if len(found) == self._max_files:
                truncated = True
                walk.files_wanted = False
                continue
            found.append(file)
        return Snapshot(
            self._root_uri,
            found,
            truncated or walk.truncated,
            folders=walk.folders,
            rules=walk.rules,
        )

    def refreshed(self, changed: Iterable[tuple[str, ...]]) -> Snapshot | None:
        """The snapshot with the size and time of each changed file read again (blocks).

        Cheaper than `scan` when files were only modified (a log being written to):
        no walk, one ``stat`` per listed file that changed. None when one of them is
        gone or no longer a file: then the folder must be scanned again.
        """
        snapshot = self.snapshot
        changes: dict[int, FoundFile] = {}
        for parts in changed:
            position = snapshot.position(parts)
            if position is None:
                continue  # not listed: past the cap, or not a file
            try:
                # What a read would find, never what a symlink swapped in meanwhile
                # points to outside the folder.
                status = stat_file(self._root, parts, ignored=snapshot.ignored)
            except (FileMissingError, AccessRefusedError):
                return None
            changes[position] = FoundFile(parts, status.st_size, status.st_mtime)
        return snapshot.updated(self._root_uri, changes) if changes else snapshot

    def replace(self, snapshot: Snapshot) -> bool:
        """Hold ``snapshot`` from now on; whether the set of files changed."""
        changed = not snapshot.same_files(self.snapshot)
        self.snapshot = snapshot
        return changed

    def resources(self) -> Sequence[types.Resource]:
        """What resources/list publishes (see `ResourceRegistry.add_listing`)."""
        return self.snapshot.resources

    def complete(self, typed: str) -> types.Completion:
        """Completions of a path relative to the folder, one segment at a time.

        ``"sr"`` offers ``"src/"`` (and ``"srv.py"``...), ``"src/"`` the names in it:
        the way a shell completes paths, so that a folder of many files is browsed
        rather than dumped.
        """
        offered: dict[str, None] = {}
        for file in self.snapshot.files:
            path = "/".join(file.parts)
            if not path.startswith(typed):
                continue
            rest = path[len(typed) :]
            slash = rest.find("/")
            offered[path if slash < 0 else typed + rest[: slash + 1]] = None
        values = list(offered)
        return types.Completion(
            values=values[:MAX_COMPLETIONS],
            total=len(values),
            has_more=len(values) > MAX_COMPLETIONS,
        )

    def complete_absolute(self, typed: str) -> types.Completion:
        """Completions of an absolute path without its leading ``/`` (``file:///{+path}``).

        Until the folder's own path is typed, that path is the one completion; then the
        files inside it complete as in `complete`.
        """
        own = "".join(f"{part}/" for part in self._root.parts)
        if typed.startswith(own):
            inside = self.complete(typed[len(own) :])
            inside.values = [own + value for value in inside.values]
            return inside
        values = [own] if own.startswith(typed) else []
        return types.Completion(values=values, total=len(values), has_more=False)


def _resource(root_uri: str, file: FoundFile) -> types.Resource:
    modified = datetime.datetime.fromtimestamp(file.mtime, tz=datetime.timezone.utc)
    return types.Resource(
        uri=file_uri(root_uri, file.parts),
        name="/".join(file.parts),
        title=file.parts[-1],
        mime_type=mime_type_of(file.parts[-1]) or types.UNSET,
        size=file.size,
        annotations=types.Annotations(last_modified=modified.strftime("%Y-%m-%dT%H:%M:%SZ")),
    )
