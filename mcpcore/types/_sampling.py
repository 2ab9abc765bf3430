"""Sampling: sampling/createMessage (deprecated in 2026-07-28, where it is an MRTR input)."""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, MCPType, MetaObject, Role, UnsetType, meta_field
from ._common import InputRequestBase
from ._content import SamplingMessageContentBlock
from ._tasks import TaskAugmentedRequestParams
from ._tools import Tool

__all__ = [
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "ToolChoice",
]


class ModelHint(MCPType, kw_only=True):
    """Hints to use for model selection."""

    name: str | UnsetType = UNSET


class ModelPreferences(MCPType, kw_only=True):
    """The server's preferences for model selection, requested of the client during sampling."""

    hints: list[ModelHint] | UnsetType = UNSET
    cost_priority: float | UnsetType = UNSET
    speed_priority: float | UnsetType = UNSET
    intelligence_priority: float | UnsetType = UNSET


class ToolChoice(MCPType, kw_only=True):
    """Controls tool selection behavior for sampling requests."""

    mode: Literal["auto", "required", "none"] | UnsetType = UNSET


class SamplingMessage(MCPType, kw_only=True):
    """Describes a message issued to or received from an LLM API."""

    meta: MetaObject | UnsetType = meta_field()
    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]


class CreateMessageRequestParams(TaskAugmentedRequestParams, kw_only=True):
    """Parameters for a `sampling/createMessage` request."""

    messages: list[SamplingMessage]
    model_preferences: ModelPreferences | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
    include_context: Literal["none", "thisServer", "allServers"] | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    max_tokens: int
    stop_sequences: list[str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    tools: list[Tool] | UnsetType = UNSET
    tool_choice: ToolChoice | UnsetType = UNSET


class CreateMessageRequest(InputRequestBase, kw_only=True, tag="sampling/createMessage"):
    """A request from the server to sample an LLM via the client."""

    params: CreateMessageRequestParams


class CreateMessageResult(MCPType, kw_only=True):
    """The result returned by the client for a sampling/createMessage request.

    Not a `Result`: in 2026-07-28 it is an MRTR input response and carries no
    ``resultType``.
    """

    meta: MetaObject | UnsetType = meta_field()
    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    model: str
    stop_reason: str | UnsetType = UNSET
