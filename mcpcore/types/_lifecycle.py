"""Lifecycle: implementation info, capabilities, server/discover, and legacy initialize/ping."""

from __future__ import annotations

from typing import Any

from ._base import UNSET, MCPType, UnsetType
from ._common import (
    CacheScope,
    Icon,
    NotificationParams,
    RequestParams,
    Result,
    TypedNotification,
    TypedRequest,
    TypedResultResponse,
)

__all__ = [
    "ClientCapabilities",
    "ClientTaskElicitationCapability",
    "ClientTaskRequestsCapability",
    "ClientTaskSamplingCapability",
    "ClientTasksCapability",
    "DiscoverRequest",
    "DiscoverResult",
    "DiscoverResultResponse",
    "ElicitationCapability",
    "Implementation",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerPromptsCapability",
    "ServerResourcesCapability",
    "ServerTaskRequestsCapability",
    "ServerTaskToolsCapability",
    "ServerTasksCapability",
    "ServerToolsCapability",
]


class Implementation(MCPType, kw_only=True):
    """Describes the MCP implementation."""

    name: str
    title: str | UnsetType = UNSET
    version: str
    description: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    website_url: str | UnsetType = UNSET


# Client capabilities. Each capability object is open; the Structs keep the known keys.


class RootsCapability(MCPType, kw_only=True):
    """Present if the client supports listing roots."""

    # Removed (deprecated) in 2026-07-28.
    list_changed: bool | UnsetType = UNSET


class SamplingCapability(MCPType, kw_only=True):
    """Present if the client supports sampling from an LLM."""

    context: dict[str, Any] | UnsetType = UNSET
    tools: dict[str, Any] | UnsetType = UNSET


class ElicitationCapability(MCPType, kw_only=True):
    """Present if the client supports elicitation; an empty object means form mode only."""

    form: dict[str, Any] | UnsetType = UNSET
    url: dict[str, Any] | UnsetType = UNSET


class ClientTaskSamplingCapability(MCPType, kw_only=True):
    """Task support for sampling requests.

    Legacy only: 2025-11-25.
    """

    create_message: dict[str, Any] | UnsetType = UNSET


class ClientTaskElicitationCapability(MCPType, kw_only=True):
    """Task support for elicitation requests.

    Legacy only: 2025-11-25.
    """

    create: dict[str, Any] | UnsetType = UNSET


class ClientTaskRequestsCapability(MCPType, kw_only=True):
    """The request types the client can run as tasks.

    Legacy only: 2025-11-25.
    """

    sampling: ClientTaskSamplingCapability | UnsetType = UNSET
    elicitation: ClientTaskElicitationCapability | UnsetType = UNSET


class ClientTasksCapability(MCPType, kw_only=True):
    """Present if the client supports task-augmented requests.

    Legacy only: 2025-11-25.
    """

    list: dict[str, Any] | UnsetType = UNSET
    cancel: dict[str, Any] | UnsetType = UNSET
    requests: ClientTaskRequestsCapability | UnsetType = UNSET


class ClientCapabilities(MCPType, kw_only=True):
    """Capabilities a client may support.

    Unknown top-level capabilities are dropped on decode; extensions belong in
    ``extensions`` (2026-07-28) or ``experimental``.
    """

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET
    roots: RootsCapability | UnsetType = UNSET
    sampling: SamplingCapability | UnsetType = UNSET
    elicitation: ElicitationCapability | UnsetType = UNSET
    tasks: ClientTasksCapability | UnsetType = UNSET


# Server capabilities.


class ServerPromptsCapability(MCPType, kw_only=True):
    """Present if the server offers any prompt templates."""

    list_changed: bool | UnsetType = UNSET


class ServerResourcesCapability(MCPType, kw_only=True):
    """Present if the server offers any resources to read."""

    subscribe: bool | UnsetType = UNSET
    list_changed: bool | UnsetType = UNSET


class ServerToolsCapability(MCPType, kw_only=True):
    """Present if the server offers any tools to call."""

    list_changed: bool | UnsetType = UNSET


class ServerTaskToolsCapability(MCPType, kw_only=True):
    """Task support for tool requests.

    Legacy only: 2025-11-25.
    """

    call: dict[str, Any] | UnsetType = UNSET


class ServerTaskRequestsCapability(MCPType, kw_only=True):
    """The request types the server can run as tasks.

    Legacy only: 2025-11-25.
    """

    tools: ServerTaskToolsCapability | UnsetType = UNSET


class ServerTasksCapability(MCPType, kw_only=True):
    """Present if the server supports task-augmented requests.

    Legacy only: 2025-11-25.
    """

    list: dict[str, Any] | UnsetType = UNSET
    cancel: dict[str, Any] | UnsetType = UNSET
    requests: ServerTaskRequestsCapability | UnsetType = UNSET


class ServerCapabilities(MCPType, kw_only=True):
    """Capabilities that a server may support.

    Unknown top-level capabilities are dropped on decode; extensions belong in
    ``extensions`` (2026-07-28) or ``experimental``.
    """

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET
    logging: dict[str, Any] | UnsetType = UNSET
    completions: dict[str, Any] | UnsetType = UNSET
    prompts: ServerPromptsCapability | UnsetType = UNSET
    resources: ServerResourcesCapability | UnsetType = UNSET
    tools: ServerToolsCapability | UnsetType = UNSET
    tasks: ServerTasksCapability | UnsetType = UNSET


class DiscoverRequest(TypedRequest, kw_only=True, tag="server/discover"):
    """A request from the client asking the server to advertise its versions and capabilities."""

    params: RequestParams


class DiscoverResult(Result, kw_only=True):
    """The result returned by the server for a server/discover request."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | UnsetType = UNSET
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class DiscoverResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a server/discover request."""

    result: DiscoverResult


class InitializeRequestParams(RequestParams, kw_only=True):
    """Parameters for an `initialize` request.

    Legacy only: 2024-11-05 … 2025-11-25 (a named definition in 2025-11-25 only).
    """

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeRequest(TypedRequest, kw_only=True, tag="initialize"):
    """Sent from the client to the server when it first connects, asking it to begin initialization.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: InitializeRequestParams


class InitializeResult(Result, kw_only=True):
    """After receiving an initialize request from the client, the server sends this response.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | UnsetType = UNSET


class InitializedNotification(TypedNotification, kw_only=True, tag="notifications/initialized"):
    """Sent from the client to the server after initialization has finished.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: NotificationParams | UnsetType = UNSET


class PingRequest(TypedRequest, kw_only=True, tag="ping"):
    """A ping, issued by either side to check that the other party is still alive.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: RequestParams | UnsetType = UNSET
