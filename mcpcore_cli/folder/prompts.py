"""The folder's prompt: ``summarize_file(path)``, the file embedded as a resource.

The file is read with every check a ``resources/read`` makes; a path that can't be
served is an invalid argument (-32602, with ``data.path``), whatever the reason, since
a prompt's arguments are validated as a whole (2024-11-05 server/prompts).
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from mcpcore import jsonrpc, types
from mcpcore.errors import McpError
from mcpcore.server import ResourceNotFoundError, Server
from mcpcore_cli.folder.folder import Folder, to_mcp_error
from mcpcore_cli.folder.uris import MAX_PATH_BYTES

__all__ = ["SUMMARY_REQUEST", "add_prompts"]

#: What the prompt asks of the model, after the file.
SUMMARY_REQUEST: Final = (
    "Summarize the file above: what it is for, how it is organised, and anything "
    "surprising or worth a second look."
)


def add_prompts(server: Server, folder: Folder) -> None:
    """Register ``summarize_file`` for ``folder`` on ``server``, with path completion."""

    @server.prompt(title="Summarize a file")
    async def summarize_file(
        path: Annotated[
            str,
            msgspec.Meta(
                max_length=MAX_PATH_BYTES,
                description="The file's path relative to the folder (or its file:// URI).",
            ),
        ],
    ) -> list[types.PromptMessage]:
        """Ask the model to summarize one file of the folder."""
        try:
            contents = await folder.read_path(path)
        except Exception as exc:
            error = to_mcp_error(exc, path)
            if isinstance(error, McpError | ResourceNotFoundError):
                message = (
                    "No such file" if isinstance(error, ResourceNotFoundError) else error.message
                )
                raise McpError(jsonrpc.INVALID_PARAMS, message, {"path": path}) from None
            raise
        return [
            types.PromptMessage(role="user", content=types.EmbeddedResource(resource=contents)),
            types.PromptMessage(role="user", content=types.TextContent(text=SUMMARY_REQUEST)),
        ]

    @server.completion(prompt="summarize_file")
    def complete_path(argument: str, value: str) -> types.Completion:
        if argument != "path":
            return types.Completion(values=[])
        return folder.catalog.complete(value)
