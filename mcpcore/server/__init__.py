"""mcpcore.server: an MCP server's features (tools, resources, prompts...) on the sans-IO core.

`Server` holds the registries and answers requests by awaiting handlers; it never does
IO itself. A handler gets a `Context` for progress, log messages, cancellation and
questions to the client (`Context.elicit`, `Context.sample`, `Context.list_roots`) that
work the same in both protocol eras. `Outbound` is what a driver provides, and for
tools that run as tasks (2026-07-28 tasks extension) a `TaskRunner`; task state lives
in a `TaskStore` (`MemoryTaskStore` by default).
"""

from __future__ import annotations

from mcpcore.errors import McpError
from mcpcore.server._context import Context
from mcpcore.server._errors import MissingCapabilityError, ResourceNotFoundError, ToolError
from mcpcore.server._fastcalls import (
    MAX_ENVELOPE_SIZE,
    MAX_KNOWN_ENVELOPES,
    FastCall,
    FastCalls,
    Ran,
)
from mcpcore.server._hub import MAX_RESOURCE_SUBSCRIPTIONS, MemoryHub, NotificationHub
from mcpcore.server._input import DEFAULT_STATE_TTL, MAX_INPUT_REQUESTS
from mcpcore.server._outbound import Outbound
from mcpcore.server._pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from mcpcore.server._prompts import MAX_COMPLETION_VALUES
from mcpcore.server._resources import MAX_URI_LENGTH
from mcpcore.server._sealing import MAX_SEALED_SIZE, MIN_SECRET_SIZE
from mcpcore.server._server import Server
from mcpcore.server._task_streams import MAX_FOLLOWED_TASKS
from mcpcore.server._tasks import (
    DEFAULT_POLL_INTERVAL_MS,
    DEFAULT_TASK_TTL_MS,
    MAX_TASKS,
    MAX_UPDATE_CONFLICTS,
    MemoryTaskStore,
    TaskRecord,
    TaskRunner,
    TaskStore,
)
from mcpcore.server._tools import MAX_TOOL_NAME_LENGTH

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_STATE_TTL",
    "DEFAULT_TASK_TTL_MS",
    "MAX_COMPLETION_VALUES",
    "MAX_ENVELOPE_SIZE",
    "MAX_FOLLOWED_TASKS",
    "MAX_INPUT_REQUESTS",
    "MAX_KNOWN_ENVELOPES",
    "MAX_PAGE_SIZE",
    "MAX_RESOURCE_SUBSCRIPTIONS",
    "MAX_SEALED_SIZE",
    "MAX_TASKS",
    "MAX_TOOL_NAME_LENGTH",
    "MAX_UPDATE_CONFLICTS",
    "MAX_URI_LENGTH",
    "MIN_SECRET_SIZE",
    "Context",
    "FastCall",
    "FastCalls",
    "McpError",
    "MemoryHub",
    "MemoryTaskStore",
    "MissingCapabilityError",
    "NotificationHub",
    "Outbound",
    "Ran",
    "ResourceNotFoundError",
    "Server",
    "TaskRecord",
    "TaskRunner",
    "TaskStore",
    "ToolError",
]
