"""Elicitation: elicitation/create, its form schemas, and the legacy completion notification."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec

from ._base import UNSET, MCPType, MetaObject, UnsetType, meta_field
from ._common import InputRequestBase, NotificationParams, TypedNotification
from ._tasks import TaskAugmentedRequestParams
from ._unions import resolve, untagged_union

__all__ = [
    "BooleanSchema",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams",
    "EnumOption",
    "EnumSchema",
    "LegacyTitledEnumSchema",
    "MultiSelectEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "SingleSelectEnumSchema",
    "StringSchema",
    "TitledMultiSelectEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
    "decode_elicit_request_params",
]


# The primitive schemas exist for users who build a requestedSchema, and for the spec's
# examples. ElicitRequestFormParams.requested_schema itself stays a plain dict: their
# `type` values overlap ("string" is four of them), so they can't form a decodable union.


class StringSchema(MCPType, kw_only=True):
    """A string field of an elicitation form."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_length: int | UnsetType = UNSET
    max_length: int | UnsetType = UNSET
    format: Literal["email", "uri", "date", "date-time"] | UnsetType = UNSET
    default: str | UnsetType = UNSET


class NumberSchema(MCPType, kw_only=True):
    """A number or integer field of an elicitation form."""

    type: Literal["number", "integer"]
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    minimum: float | UnsetType = UNSET
    maximum: float | UnsetType = UNSET
    default: float | UnsetType = UNSET


class BooleanSchema(MCPType, kw_only=True):
    """A boolean field of an elicitation form."""

    type: Literal["boolean"] = "boolean"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    default: bool | UnsetType = UNSET


class UntitledSingleSelectEnumSchema(MCPType, kw_only=True):
    """Schema for single-selection enumeration without display titles for options."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    enum: list[str]
    default: str | UnsetType = UNSET


class EnumOption(MCPType, kw_only=True):
    """One option of a titled enum schema: the value (``const``) and its display title."""

    const: str
    title: str


class TitledSingleSelectEnumSchema(MCPType, kw_only=True):
    """Schema for single-selection enumeration with display titles for each option."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    one_of: list[EnumOption]
    default: str | UnsetType = UNSET


class UntitledMultiSelectEnumItems(MCPType, kw_only=True):
    """The ``items`` schema of an UntitledMultiSelectEnumSchema."""

    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(MCPType, kw_only=True):
    """Schema for multiple-selection enumeration without display titles for options."""

    type: Literal["array"] = "array"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_items: int | UnsetType = UNSET
    max_items: int | UnsetType = UNSET
    items: UntitledMultiSelectEnumItems
    default: list[str] | UnsetType = UNSET


class TitledMultiSelectEnumItems(MCPType, kw_only=True):
    """The ``items`` schema of a TitledMultiSelectEnumSchema."""

    any_of: list[EnumOption]


class TitledMultiSelectEnumSchema(MCPType, kw_only=True):
    """Schema for multiple-selection enumeration with display titles for each option."""

    type: Literal["array"] = "array"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_items: int | UnsetType = UNSET
    max_items: int | UnsetType = UNSET
    items: TitledMultiSelectEnumItems
    default: list[str] | UnsetType = UNSET


class LegacyTitledEnumSchema(MCPType, kw_only=True):
    """A single-select enum with display names in ``enumNames`` (deprecated).

    Use TitledSingleSelectEnumSchema instead. This is also the 2025-06-18 EnumSchema.
    """

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    enum: list[str]
    enum_names: list[str] | UnsetType = UNSET
    default: str | UnsetType = UNSET


#: Single-select enums.
SingleSelectEnumSchema: TypeAlias = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
#: Multi-select enums.
MultiSelectEnumSchema: TypeAlias = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
#: Every enum schema (in 2025-06-18, EnumSchema was the LegacyTitledEnumSchema shape).
EnumSchema: TypeAlias = (
    UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
    | LegacyTitledEnumSchema
)
#: Restricted schema definitions that only allow primitive types (typing only).
PrimitiveSchemaDefinition: TypeAlias = (
    StringSchema
    | NumberSchema
    | BooleanSchema
    | UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
    | LegacyTitledEnumSchema
)


class ElicitRequestFormParams(TaskAugmentedRequestParams, kw_only=True):
    """The parameters for a request to elicit non-sensitive information via a form.

    ``requested_schema`` is the JSON Schema object, kept verbatim.
    """

    # Optional: 2025-06-18 has no modes and 2025-11-25 lets form mode omit it.
    mode: Literal["form"] | UnsetType = UNSET
    message: str
    requested_schema: dict[str, Any]


class ElicitRequestURLParams(TaskAugmentedRequestParams, kw_only=True):
    """The parameters for a request to elicit information from the user via a URL."""

    mode: Literal["url"] = "url"
    message: str
    url: str
    # Required in 2025-11-25, removed in 2026-07-28.
    elicitation_id: str | UnsetType = UNSET


#: The parameters of an elicitation/create request, told apart by ``mode``.
ElicitRequestParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams


def _pick_elicit_params(value: Any) -> type[MCPType]:
    if value.mode is UNSET or value.mode == "form":
        return ElicitRequestFormParams
    if value.mode == "url":
        return ElicitRequestURLParams
    raise ValueError(f"unknown elicitation mode {value.mode!r}")


# `mode` may be missing (form), so it can't serve as a msgspec tag.
if TYPE_CHECKING:
    _ElicitParamsField: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams
else:
    _ElicitParamsField = untagged_union(
        "_ElicitRequestParamsWire",
        (ElicitRequestFormParams, ElicitRequestURLParams),
        _pick_elicit_params,
    )


def decode_elicit_request_params(value: Any) -> ElicitRequestParams:
    """Decode the params of an elicitation/create request, form or URL mode.

    `ElicitRequestParams` is a typing-only union (msgspec can't decode two untagged
    Structs); use this where the params are decoded on their own, outside ElicitRequest.

    Args:
        value: The raw JSON (``bytes``, ``str`` or `msgspec.Raw`) or an already-parsed
            JSON object.

    Returns:
        An ElicitRequestFormParams (``mode`` "form" or absent) or ElicitRequestURLParams.

    Raises:
        msgspec.ValidationError: ``value`` matches neither shape.
        msgspec.DecodeError: ``value`` is bytes or str that is not JSON.
    """
    wire: ElicitRequestParams
    if isinstance(value, bytes | bytearray | memoryview | str | msgspec.Raw):
        wire = msgspec.json.decode(value, type=_ElicitParamsField)
    else:
        wire = msgspec.convert(value, type=_ElicitParamsField)
    return resolve(wire)


class ElicitRequest(InputRequestBase, kw_only=True, tag="elicitation/create"):
    """A request from the server to elicit additional information from the user via the client."""

    params: _ElicitParamsField

    def __post_init__(self) -> None:
        self.params = resolve(self.params)


class ElicitResult(MCPType, kw_only=True):
    """The result returned by the client for an elicitation/create request.

    Not a `Result`: in 2026-07-28 it is an MRTR input response and carries no
    ``resultType``.
    """

    meta: MetaObject | UnsetType = meta_field()
    action: Literal["accept", "decline", "cancel"]
    # The schema says integer, the spec text says number; floats answer a NumberSchema.
    content: dict[str, str | int | float | bool | list[str]] | UnsetType = UNSET


class ElicitationCompleteNotificationParams(NotificationParams, kw_only=True):
    """Parameters for a `notifications/elicitation/complete` notification.

    Legacy only: 2025-11-25.
    """

    elicitation_id: str


class ElicitationCompleteNotification(
    TypedNotification, kw_only=True, tag="notifications/elicitation/complete"
):
    """A notification informing the client that an out-of-band elicitation completed.

    Legacy only: 2025-11-25.
    """

    params: ElicitationCompleteNotificationParams
