"""Content blocks and resource contents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from ._base import UNSET, MCPType, MetaObject, UnsetType, meta_field
from ._common import Annotations, Icon
from ._unions import resolve, untagged_union

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "SamplingMessageContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
]


class ResourceContents(MCPType, kw_only=True):
    """The contents of a specific resource or sub-resource."""

    meta: MetaObject | UnsetType = meta_field()
    uri: str
    mime_type: str | UnsetType = UNSET


class TextResourceContents(ResourceContents, kw_only=True):
    """The contents of a text resource."""

    text: str


class BlobResourceContents(ResourceContents, kw_only=True):
    """The contents of a binary resource, base64-encoded."""

    blob: str


def _pick_contents(value: Any) -> type[MCPType]:
    has_text = value.text is not UNSET
    has_blob = value.blob is not UNSET
    if has_text and has_blob:
        raise ValueError("resource contents must have either `text` or `blob`, not both")
    if has_text:
        return TextResourceContents
    if has_blob:
        return BlobResourceContents
    raise ValueError("resource contents must have either `text` or `blob`")


def _build_contents(value: Any) -> TextResourceContents | BlobResourceContents:
    # The hot case (every resources/read): built explicitly, not field by field.
    uri = value.uri
    if uri is UNSET:
        raise ValueError("Object missing required field `uri`")
    if _pick_contents(value) is TextResourceContents:
        return TextResourceContents(
            uri=uri, text=value.text, mime_type=value.mime_type, meta=value.meta
        )
    return BlobResourceContents(
        uri=uri, blob=value.blob, mime_type=value.mime_type, meta=value.meta
    )


# Text and blob contents carry no tag: they differ only by which of `text`/`blob` is set.
if TYPE_CHECKING:
    ResourceContentsItem: TypeAlias = TextResourceContents | BlobResourceContents
else:
    ResourceContentsItem = untagged_union(
        "_ResourceContentsWire",
        (TextResourceContents, BlobResourceContents),
        _pick_contents,
        _build_contents,
    )


class TextContent(MCPType, kw_only=True, tag_field="type", tag="text"):
    """Text provided to or from an LLM."""

    meta: MetaObject | UnsetType = meta_field()
    text: str
    annotations: Annotations | UnsetType = UNSET


class ImageContent(MCPType, kw_only=True, tag_field="type", tag="image"):
    """An image provided to or from an LLM."""

    meta: MetaObject | UnsetType = meta_field()
    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET


class AudioContent(MCPType, kw_only=True, tag_field="type", tag="audio"):
    """Audio provided to or from an LLM."""

    meta: MetaObject | UnsetType = meta_field()
    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET


class ResourceLink(MCPType, kw_only=True, tag_field="type", tag="resource_link"):
    """A resource the server is capable of reading, included in a prompt or tool call result."""

    meta: MetaObject | UnsetType = meta_field()
    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class EmbeddedResource(MCPType, kw_only=True, tag_field="type", tag="resource"):
    """The contents of a resource, embedded into a prompt or tool call result."""

    meta: MetaObject | UnsetType = meta_field()
    resource: ResourceContentsItem
    annotations: Annotations | UnsetType = UNSET

    def __post_init__(self) -> None:
        self.resource = resolve(self.resource)


#: A content block of a tool result, prompt message or resource link list.
ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)


class ToolUseContent(MCPType, kw_only=True, tag_field="type", tag="tool_use"):
    """A request from the assistant to call a tool."""

    meta: MetaObject | UnsetType = meta_field()
    id: str
    name: str
    input: dict[str, Any]


class ToolResultContent(MCPType, kw_only=True, tag_field="type", tag="tool_result"):
    """The result of a tool use, provided by the user back to the assistant."""

    meta: MetaObject | UnsetType = meta_field()
    tool_use_id: str
    content: list[ContentBlock]
    # An object in 2025-11-25, any JSON value in 2026-07-28; null stays null.
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET


#: A content block of a sampling message.
SamplingMessageContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
