"""Multi round-trip requests (2026-07-28): InputRequiredResult and its inputs.

Also the three result responses that may carry an InputRequiredResult.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec

from ._base import UNSET, MCPType, UnsetType

# InputResponses is defined in `common` (the request params of tools, resources and
# prompts need it) and re-exported here with the rest of the MRTR vocabulary.
from ._common import InputResponses, Result, TypedResultResponse
from ._elicitation import ElicitRequest, ElicitResult
from ._prompts import GetPromptResult
from ._resources import ReadResourceResult
from ._roots import ListRootsRequest, ListRootsResult
from ._sampling import CreateMessageRequest, CreateMessageResult
from ._tools import CallToolResult
from ._unions import resolve, untagged_union

__all__ = [
    "CallToolResultResponse",
    "GetPromptResultResponse",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponses",
    "ReadResourceResultResponse",
    "decode_input_response",
]

#: A server-initiated request inside an InputRequiredResult: ``{method, params}``.
InputRequest: TypeAlias = CreateMessageRequest | ListRootsRequest | ElicitRequest

#: Server-initiated requests the client must fulfil, keyed by server-assigned ids.
InputRequests: TypeAlias = dict[str, InputRequest]

#: The client's answer to one InputRequest (typing only: the members carry no tag, see
#: `decode_input_response`).
InputResponse: TypeAlias = CreateMessageResult | ListRootsResult | ElicitResult


class InputRequiredResult(Result, kw_only=True):
    """Sent by the server to indicate that additional input is needed to complete the request."""

    result_type: Literal["input_required"] = "input_required"
    input_requests: InputRequests | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


_INPUT_RESPONSE_TYPES: dict[
    str, type[ElicitResult] | type[CreateMessageResult] | type[ListRootsResult]
] = {
    "elicitation/create": ElicitResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
}


def decode_input_response(method: str, value: Any) -> InputResponse:
    """Convert one InputResponses value into the result type of the request it answers.

    Args:
        method: The method of the InputRequest the value answers.
        value: The JSON object (or an already-built result Struct).

    Returns:
        An ElicitResult, CreateMessageResult or ListRootsResult.

    Raises:
        ValueError: ``method`` is not a method an InputRequest can have.
        msgspec.ValidationError: ``value`` does not have the result's shape.
    """
    result_type = _INPUT_RESPONSE_TYPES.get(method)
    if result_type is None:
        raise ValueError(f"no input request has the method {method!r}")
    return msgspec.convert(value, type=result_type)


def _pick_result(result_type: type[MCPType]) -> Any:
    # A missing resultType is a legacy "complete"; anything but "input_required" must
    # have the complete result's shape.
    def pick(value: Any) -> type[MCPType]:
        if value.result_type == "input_required":
            return InputRequiredResult
        return result_type

    return pick


# Neither member has a tag msgspec can use: `resultType` is absent from legacy results.
if TYPE_CHECKING:
    _CallToolResultField: TypeAlias = InputRequiredResult | CallToolResult
    _ReadResourceResultField: TypeAlias = InputRequiredResult | ReadResourceResult
    _GetPromptResultField: TypeAlias = InputRequiredResult | GetPromptResult
else:
    _CallToolResultField = untagged_union(
        "_CallToolResultWire",
        (InputRequiredResult, CallToolResult),
        _pick_result(CallToolResult),
    )
    _ReadResourceResultField = untagged_union(
        "_ReadResourceResultWire",
        (InputRequiredResult, ReadResourceResult),
        _pick_result(ReadResourceResult),
    )
    _GetPromptResultField = untagged_union(
        "_GetPromptResultWire",
        (InputRequiredResult, GetPromptResult),
        _pick_result(GetPromptResult),
    )


class CallToolResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a tools/call request."""

    result: _CallToolResultField

    def __post_init__(self) -> None:
        self.result = resolve(self.result)


class ReadResourceResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a resources/read request."""

    result: _ReadResourceResultField

    def __post_init__(self) -> None:
        self.result = resolve(self.result)


class GetPromptResultResponse(TypedResultResponse, kw_only=True):
    """A successful response from the server for a prompts/get request."""

    result: _GetPromptResultField

    def __post_init__(self) -> None:
        self.result = resolve(self.result)
