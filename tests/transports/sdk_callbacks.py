"""The official Python SDK client's callbacks, recording what our servers ask them.

Shared by the interop tests that drive the SDK's client against mcpcore's servers
(`test_interop_sdk_client`, `test_asyncio_stdio`).
"""

from __future__ import annotations

from typing import Any, Literal

import mcp_types as sdk_types
from mcp.client.session import ClientRequestContext
from pydantic import FileUrl

__all__ = ["Callbacks", "text_of"]


def text_of(result: sdk_types.CallToolResult | sdk_types.GetPromptResult) -> list[str]:
    """The texts of a tool result's content, or of a prompt's messages."""
    if isinstance(result, sdk_types.GetPromptResult):
        blocks: list[Any] = [message.content for message in result.messages]
    else:
        blocks = list(result.content)
    return [block.text for block in blocks if isinstance(block, sdk_types.TextContent)]


class Callbacks:
    """The SDK's sampling, elicitation and roots callbacks, recording what they are asked."""

    def __init__(self, *, elicit_action: Literal["accept", "decline", "cancel"] = "accept") -> None:
        self.elicit_action = elicit_action
        self.sampled: list[tuple[Any, sdk_types.CreateMessageRequestParams]] = []
        self.elicited: list[tuple[Any, sdk_types.ElicitRequestFormParams]] = []
        self.rooted: list[Any] = []

    def as_kwargs(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.list_roots,
        }

    async def sample(
        self, context: ClientRequestContext, params: sdk_types.CreateMessageRequestParams
    ) -> sdk_types.CreateMessageResult:
        self.sampled.append((context.request_id, params))
        return sdk_types.CreateMessageResult(
            role="assistant",
            content=sdk_types.TextContent(type="text", text="Paris"),
            model="interop-model",
            stop_reason="endTurn",
        )

    async def elicit(
        self, context: ClientRequestContext, params: sdk_types.ElicitRequestParams
    ) -> sdk_types.ElicitResult:
        assert isinstance(params, sdk_types.ElicitRequestFormParams)
        self.elicited.append((context.request_id, params))
        if self.elicit_action != "accept":
            return sdk_types.ElicitResult(action=self.elicit_action)
        properties = params.requested_schema.get("properties", {})
        answers: dict[str, Any] = {
            "name": "Ada",
            "color": "green",
            "username": "ada",
            "email": "ada@example.com",
            "ok": True,
        }
        return sdk_types.ElicitResult(
            action="accept", content={key: answers[key] for key in properties if key in answers}
        )

    async def list_roots(self, context: ClientRequestContext) -> sdk_types.ListRootsResult:
        self.rooted.append(context.request_id)
        return sdk_types.ListRootsResult(
            roots=[sdk_types.Root(uri=FileUrl("file:///tmp/interop"), name="interop")]
        )
