"""What a handler raises to answer with something other than a plain result.

A handler answers with a JSON-RPC error by raising `mcpcore.errors.McpError`; these
are the server-specific cases.
"""

from __future__ import annotations

from mcpcore.types import ClientCapabilities

__all__ = ["MissingCapabilityError", "ResourceNotFoundError", "ToolError"]


class ToolError(Exception):
    """A tool failed in a way the model should see: the call's result gets ``isError: true``.

    "Any errors that originate from the tool SHOULD be reported inside the result object,
    with isError set to true, not as an MCP protocol-level error response" (2025-06-18
    server/tools). The message is shown to the client as written.
    """


class ResourceNotFoundError(Exception):
    """A resource handler has nothing at the URI it was asked for.

    Answered -32002 in the legacy era and -32602 in 2026-07-28, with ``data.uri``.
    """


class MissingCapabilityError(Exception):
    """The request needs a client capability the client did not declare.

    Answered -32021 with ``data.requiredCapabilities`` (2026-07-28 basic).
    """

    def __init__(self, required: ClientCapabilities) -> None:
        super().__init__("The request needs a client capability it did not declare")
        self.required = required
