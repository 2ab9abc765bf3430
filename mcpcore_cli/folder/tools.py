"""The folder's tools: ``search_files`` (a glob) and ``grep`` (a regular expression).

Both are read-only, return ``structuredContent`` described by their ``outputSchema``
(2025-06-18), and are bounded: results (`MAX_RESULTS`), files looked at
(`MAX_WALK_ENTRIES` entries per walk), bytes per file (the folder's ``max_file_size``),
pattern length and compiled size (see `search`), and for grep a time budget
(`MAX_GREP_SECONDS`) checked between files and every few thousand lines; RE2 matches
in linear time, so no one line can blow the budget. Grep reports progress, a batch of
files at a time, and stops between batches once the client cancels.
"""

from __future__ import annotations

import time
from typing import Annotated, Final

import msgspec

from mcpcore import types
from mcpcore.server import Context, Server, ToolError
from mcpcore_cli.folder.folder import Folder
from mcpcore_cli.folder.search import (
    MAX_PATTERN_LENGTH,
    BatchResult,
    GlobMatcher,
    InvalidPatternError,
    compile_glob,
    compile_regex,
    grep_files,
)
from mcpcore_cli.folder.walk import TreeWalk

__all__ = [
    "DEFAULT_GREP_SECONDS",
    "DEFAULT_RESULTS",
    "GREP_BATCH_FILES",
    "MAX_GREP_SECONDS",
    "MAX_RESULTS",
    "FileFound",
    "GrepResult",
    "LineFound",
    "SearchResult",
    "add_tools",
]

#: Results returned unless the call asks for fewer or more.
DEFAULT_RESULTS: Final = 100
#: The most results one call returns: a page a model can still read.
MAX_RESULTS: Final = 1000
#: Seconds grep searches unless the call says otherwise.
DEFAULT_GREP_SECONDS: Final = 10.0
#: The longest a grep may search, in seconds: a bound on one request's work.
MAX_GREP_SECONDS: Final = 60.0
#: Files grepped per worker-thread batch: progress is reported, and cancellation and
#: the clock looked at, between batches.
GREP_BATCH_FILES: Final = 64
_READ_ONLY: Final = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Pattern = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_PATTERN_LENGTH)]
Limit = Annotated[
    int, msgspec.Meta(ge=1, le=MAX_RESULTS, description="The most results to return.")
]


class FileFound(msgspec.Struct, kw_only=True, rename="camel"):
    """A file that matched.

    Attributes:
        path: Its path relative to the folder.
        uri: Its resource URI (read it with resources/read).
        size: Its size in bytes.
    """

    path: str
    uri: str
    size: int


class SearchResult(msgspec.Struct, kw_only=True, rename="camel"):
    """What ``search_files`` found.

    Attributes:
        files: The matching files, in path order.
        truncated: Whether more files matched than were returned (or the folder is too
            large to search whole).
    """

    files: list[FileFound]
    truncated: bool


class LineFound(msgspec.Struct, kw_only=True, rename="camel"):
    """A line that matched.

    Attributes:
        path: The file's path relative to the folder.
        uri: The file's resource URI.
        line: The line's number, from 1.
        text: The line (cut if very long).
    """

    path: str
    uri: str
    line: int
    text: str


class GrepResult(msgspec.Struct, kw_only=True, rename="camel"):
    """What ``grep`` found.

    Attributes:
        matches: The matching lines, in path order.
        files_searched: Text files searched.
        files_skipped: Files not searched: binary, too large, or unreadable.
        truncated: Whether the search stopped at the result limit (or the folder is
            too large to search whole).
        timed_out: Whether it stopped at its time limit.
    """

    matches: list[LineFound]
    files_searched: int
    files_skipped: int
    truncated: bool
    timed_out: bool


def add_tools(server: Server, folder: Folder) -> None:
    """Register ``search_files`` and ``grep`` for ``folder`` on ``server``."""

    @server.tool(title="Search files by name", annotations=_READ_ONLY)
    async def search_files(
        pattern: Annotated[
            Pattern,
            msgspec.Meta(
                description=(
                    "A glob. Without a '/' it matches file names anywhere ('*.py', "
                    "'README*'); with one, paths from the folder ('src/**/test_*.py')."
                )
            ),
        ],
        limit: Limit = DEFAULT_RESULTS,
    ) -> SearchResult:
        """Find files of the folder whose name or path matches a glob."""
        matcher = _glob(pattern)
        found, truncated = await folder.run_sync(_search, folder, matcher, limit)
        return SearchResult(files=found, truncated=truncated)

    @server.tool(title="Search file contents", annotations=_READ_ONLY)
    async def grep(
        ctx: Context,
        *,
        pattern: Annotated[
            Pattern,
            msgspec.Meta(description="A regular expression (RE2 syntax), matched per line."),
        ],
        ignore_case: bool = False,
        include: Annotated[
            str,
            msgspec.Meta(
                max_length=MAX_PATTERN_LENGTH,
                description="Search only files matching this glob (as search_files).",
            ),
        ]
        | None = None,
        limit: Limit = DEFAULT_RESULTS,
        timeout_seconds: Annotated[
            float,
            msgspec.Meta(gt=0, le=MAX_GREP_SECONDS, description="Stop searching after this."),
        ] = DEFAULT_GREP_SECONDS,
    ) -> GrepResult:
        """Find the lines of the folder's text files that match a regular expression."""
        deadline = time.monotonic() + timeout_seconds
        try:
            regex = compile_regex(pattern, ignore_case=ignore_case)
        except InvalidPatternError as exc:
            raise ToolError(str(exc)) from None
        matcher = None if include is None else _glob(include)
        candidates, too_large, truncated = await folder.run_sync(_candidates, folder, matcher)
        total = BatchResult(skipped=too_large)
        for start in range(0, len(candidates), GREP_BATCH_FILES):
            batch = candidates[start : start + GREP_BATCH_FILES]
            found = await folder.run_sync(
                _grep_batch, folder, batch, regex, limit - len(total.lines), deadline
            )
            total.lines.extend(found.lines)
            total.searched += found.searched
            total.skipped += found.skipped
            done = start + len(batch)
            await ctx.report_progress(done, len(candidates), f"{done} of {len(candidates)} files")
            if found.out_of_time:
                total.out_of_time = True
                break
            if len(total.lines) >= limit:
                truncated = True  # stopped at the limit: there may be more
                break
            if ctx.cancelled:
                break
        matches = [
            LineFound(
                path="/".join(line.parts),
                uri=folder.uri_of(line.parts),
                line=line.number,
                text=line.text,
            )
            for line in total.lines
        ]
        return GrepResult(
            matches=matches,
            files_searched=total.searched,
            files_skipped=total.skipped,
            truncated=truncated,
            timed_out=total.out_of_time,
        )


def _glob(pattern: str) -> GlobMatcher:
    try:
        return compile_glob(pattern)
    except InvalidPatternError as exc:
        raise ToolError(str(exc)) from None


def _search(folder: Folder, matcher: GlobMatcher, limit: int) -> tuple[list[FileFound], bool]:
    """Walk the folder for files ``matcher`` accepts (blocks: runs in a thread)."""
    walk = TreeWalk(folder.root)
    found: list[FileFound] = []
    for file in walk.files():
        if not matcher.matches(file.parts):
            continue
        if len(found) == limit:
            return found, True
        found.append(
            FileFound(path="/".join(file.parts), uri=folder.uri_of(file.parts), size=file.size)
        )
    return found, walk.truncated


def _candidates(
    folder: Folder, matcher: GlobMatcher | None
) -> tuple[list[tuple[str, ...]], int, bool]:
    """The files grep will search, in order (blocks: runs in a thread).

    Also how many matching files are too large to search, and whether the walk was
    cut short.
    """
    walk = TreeWalk(folder.root)
    files: list[tuple[str, ...]] = []
    too_large = 0
    for file in walk.files():
        if matcher is not None and not matcher.matches(file.parts):
            continue
        if file.size > folder.max_file_size:
            too_large += 1
        else:
            files.append(file.parts)
    return files, too_large, walk.truncated


def _grep_batch(
    folder: Folder, batch: list[tuple[str, ...]], regex: object, max_lines: int, deadline: float
) -> BatchResult:
    return grep_files(
        folder.root,
        batch,
        regex,
        max_size=folder.max_file_size,
        max_lines=max_lines,
        deadline=deadline,
    )
