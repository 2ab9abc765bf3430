"""`build_folder_server`: a `Server` that offers one folder, read-only.

What it offers:

* every servable file as a resource, listed in path order and paginated by the server
  (`Catalog`; ``folder.page_size`` files a page), with its MIME type, size, title and
  ``lastModified``;
* the template ``file:///{+path}`` to read any file by its absolute path, with
  completion of the path one segment at a time, from the folder's own path down. Every
  ``file:`` URI reaches the folder's checks this way, so one outside the folder is
  refused (-32602) rather than merely not found;
* the tools ``search_files`` and ``grep``, and the prompt ``summarize_file``.

Every read goes through `Folder.read`, which validates the URI and resolves it inside
the folder (see `uris` and `opening`); what it refuses becomes the protocol error
`to_mcp_error` chooses. Nothing here writes to the folder.
"""

from __future__ import annotations

from typing import Any, Final

from mcpcore import types
from mcpcore.server import Context, Server
from mcpcore_cli.folder.folder import Folder, human_size, to_mcp_error
from mcpcore_cli.folder.prompts import add_prompts
from mcpcore_cli.folder.tools import add_tools

__all__ = ["FILE_TEMPLATE", "SERVER_NAME", "build_folder_server"]

#: ``serverInfo.name``.
SERVER_NAME: Final = "mcpcore-serve"
#: The template of every file's URI (RFC 6570 reserved expansion keeps the slashes).
FILE_TEMPLATE: Final = "file:///{+path}"


def build_folder_server(folder: Folder, **server_options: Any) -> Server:
    """A `Server` offering ``folder``'s files, tools and prompt (see the module docstring).

    Args:
        folder: The folder to serve.
        server_options: Passed to `Server` (``on_error``...; ``page_size`` defaults to
            the folder's).
    """
    server_options.setdefault("page_size", folder.page_size)
    server = Server(
        SERVER_NAME,
        _version(),
        title=f"Files of {folder.path}",
        instructions=_instructions(folder),
        **server_options,
    )
    server.resources.add_listing(folder.catalog.resources)

    @server.resource_template(
        FILE_TEMPLATE,
        name="file",
        title="A file of the folder, by path",
        description=f"Any file under {folder.uri}, by its absolute path.",
    )
    async def read_file(path: str, ctx: Context) -> types.ReadResourceResult:
        # The template's match decodes %2F and %2E%2E like anything else: the URI
        # itself is what gets validated, by the folder.
        uri: str = ctx.params.uri
        try:
            contents = await folder.read(uri)
        except Exception as exc:
            raise to_mcp_error(exc, uri) from None
        return types.ReadResourceResult(contents=[contents])

    @server.completion(resource_template=FILE_TEMPLATE)
    def complete_path(argument: str, value: str) -> types.Completion:
        if argument != "path":
            return types.Completion(values=[])
        return folder.catalog.complete_absolute(value)

    add_tools(server, folder)
    add_prompts(server, folder)
    return server


def _instructions(folder: Folder) -> str:
    hidden = "" if folder.include_hidden else " Hidden files and folders are not served."
    ignored = " Nor are the files its .gitignore files ignore." if folder.gitignore else ""
    return (
        f"Read-only access to the files under {folder.uri}. List them with resources/list, "
        "read one by URI, find files by name with search_files and lines with grep."
        f"{hidden}{ignored} Files larger than {human_size(folder.max_file_size)} can't be read."
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcpcore")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0"
