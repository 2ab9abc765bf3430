"""mcpcore.server: an MCP server's features (tools, resources, prompts...) on the sans-IO core.

`Server` holds the registries and answers requests by awaiting handlers; it never does
IO itself. A handler gets a `Context` for progress, log messages, cancellation and
questions to the client (`Context.elicit`, `Context.sample`, `Context.list_roots`) that
work the same in both protocol eras. `Outbound` is what a driver provides.
"""

from __future__ import annotations

from mcpcore.errors import McpError
from mcpcore.server._errors import MissingCapabilityError, ResourceNotFoundError, ToolError
from mcpcore.server._hub import MemoryHub, NotificationHub
from mcpcore.server._outbound import Outbound
from mcpcore.server.context import Context
from mcpcore.server.server import Server

__all__ = [
    "Context",
    "McpError",
    "MemoryHub",
    "MissingCapabilityError",
    "NotificationHub",
    "Outbound",
    "ResourceNotFoundError",
    "Server",
    "ToolError",
]
