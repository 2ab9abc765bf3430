"""``mcpcore serve``: one folder served read-only to any MCP client (private package).

`transports` re-exports its API. One concept per module: `uris` (``file://`` URIs to
paths and back, and every check that needs no file system), `opening` (opening a file
safely), `ignore` (``.gitignore`` rules), `walk` (walking the folder), `content`
(MIME type, text or binary), `catalog` (the listing), `search` (globs and RE2 regular
expressions), `tools` (``search_files``, ``grep``), `prompts` (``summarize_file``),
`watchers` (watching a set of folders), `watch` (change notifications), `folder`
(`Folder`: reading by URI), `build` (`build_folder_server`), `run` (`serve_folder`).
"""

from mcpcore_cli.folder.build import build_folder_server
from mcpcore_cli.folder.catalog import LISTING_PAGE_SIZE, MAX_LISTED_FILES, MAX_LISTING_PAGES
from mcpcore_cli.folder.folder import DEFAULT_MAX_FILE_SIZE, MAX_CONCURRENT_READS, Folder
from mcpcore_cli.folder.ignore import (
    MAX_IGNORE_FILE_SIZE,
    MAX_IGNORE_FILES_PER_PATH,
    MAX_IGNORE_PATTERNS,
)
from mcpcore_cli.folder.opening import MAX_SYMLINK_HOPS
from mcpcore_cli.folder.run import DEFAULT_HOST, DEFAULT_PORT, FolderTransport, serve_folder
from mcpcore_cli.folder.search import MAX_PATTERN_LENGTH
from mcpcore_cli.folder.tools import MAX_GREP_SECONDS, MAX_RESULTS
from mcpcore_cli.folder.walk import MAX_WALK_ENTRIES
from mcpcore_cli.folder.watch import MAX_WATCHED_FOLDERS, watch_folder

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_PORT",
    "LISTING_PAGE_SIZE",
    "MAX_CONCURRENT_READS",
    "MAX_GREP_SECONDS",
    "MAX_IGNORE_FILES_PER_PATH",
    "MAX_IGNORE_FILE_SIZE",
    "MAX_IGNORE_PATTERNS",
    "MAX_LISTED_FILES",
    "MAX_LISTING_PAGES",
    "MAX_PATTERN_LENGTH",
    "MAX_RESULTS",
    "MAX_SYMLINK_HOPS",
    "MAX_WALK_ENTRIES",
    "MAX_WATCHED_FOLDERS",
    "Folder",
    "FolderTransport",
    "build_folder_server",
    "serve_folder",
    "watch_folder",
]
