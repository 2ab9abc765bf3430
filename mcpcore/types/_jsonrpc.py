"""JSON-RPC envelopes, error objects and the spec's error responses."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ._base import UNSET, MCPType, RequestId, UnsetType
from ._common import PaginatedRequestParams
from ._elicitation import ElicitRequestURLParams
from ._lifecycle import ClientCapabilities

__all__ = [
    "Error",
    "HeaderMismatchError",
    "HeaderMismatchErrorObject",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONRPCBatchRequest",
    "JSONRPCBatchResponse",
    "JSONRPCError",
    "JSONRPCErrorResponse",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "MissingRequiredClientCapabilityErrorData",
    "MissingRequiredClientCapabilityErrorObject",
    "Notification",
    "PaginatedRequest",
    "ParseError",
    "Request",
    "URLElicitationRequiredError",
    "URLElicitationRequiredErrorData",
    "URLElicitationRequiredErrorObject",
    "UnsupportedProtocolVersionError",
    "UnsupportedProtocolVersionErrorData",
    "UnsupportedProtocolVersionErrorObject",
]


# Generic messages: method-agnostic shapes, with params kept as JSON objects for whoever
# knows the method.


class Request(MCPType, kw_only=True):
    """A request of any method, without the JSON-RPC envelope fields."""

    method: str
    params: dict[str, Any] | UnsetType = UNSET


class Notification(MCPType, kw_only=True):
    """A notification of any method, without the JSON-RPC envelope fields."""

    method: str
    params: dict[str, Any] | UnsetType = UNSET


class PaginatedRequest(MCPType, kw_only=True):
    """A paginated request of any method."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: PaginatedRequestParams | UnsetType = UNSET


class JSONRPCRequest(MCPType, kw_only=True):
    """A request that expects a response."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: dict[str, Any] | UnsetType = UNSET


class JSONRPCNotification(MCPType, kw_only=True):
    """A notification which does not expect a response."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: dict[str, Any] | UnsetType = UNSET


class JSONRPCResultResponse(MCPType, kw_only=True):
    """A successful (non-error) response to a request.

    ``result`` stays a JSON object: which Result it is depends on the request's method
    (the typed ``XxxResultResponse`` classes carry a typed result).
    """

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: dict[str, Any]


# Error objects.


class Error(MCPType, kw_only=True):
    """The error object of a JSON-RPC error response."""

    code: int
    message: str
    data: Any | UnsetType = UNSET


class ParseError(Error, kw_only=True):
    """A JSON-RPC error indicating that invalid JSON was received by the server."""

    code: Literal[-32700] = -32700


class InvalidRequestError(Error, kw_only=True):
    """A JSON-RPC error indicating that the request is not a valid request object."""

    code: Literal[-32600] = -32600


class MethodNotFoundError(Error, kw_only=True):
    """A JSON-RPC error indicating that the requested method does not exist or is not available."""

    code: Literal[-32601] = -32601


class InvalidParamsError(Error, kw_only=True):
    """A JSON-RPC error indicating that the method parameters are invalid or malformed."""

    code: Literal[-32602] = -32602


class InternalError(Error, kw_only=True):
    """A JSON-RPC error indicating that an internal error occurred on the receiver."""

    code: Literal[-32603] = -32603


class JSONRPCErrorResponse(MCPType, kw_only=True):
    """A response to a request that indicates an error occurred.

    ``id`` may be omitted when the request's id could not be read (2025-11-25 onwards);
    ``"id": null`` is rejected, as RequestId excludes null.
    """

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | UnsetType = UNSET
    error: Error


class JSONRPCError(JSONRPCErrorResponse, kw_only=True):
    """A response to a request that indicates an error occurred; ``id`` is required.

    Legacy only: 2024-11-05 … 2025-06-18 (JSONRPCErrorResponse from 2025-11-25).
    """

    id: RequestId


#: A response to a request, containing either the result or error. In 2024-11-05 …
#: 2025-06-18 JSONRPCResponse was the success shape, JSONRPCResultResponse here.
JSONRPCResponse: TypeAlias = JSONRPCResultResponse | JSONRPCErrorResponse

#: A JSON-RPC batch request. Legacy only: 2025-03-26.
JSONRPCBatchRequest: TypeAlias = list[JSONRPCRequest | JSONRPCNotification]

#: A JSON-RPC batch response. Legacy only: 2025-03-26.
JSONRPCBatchResponse: TypeAlias = list[JSONRPCResultResponse | JSONRPCErrorResponse]

#: Any JSON-RPC message (typing only: the members carry no tag msgspec could use, so a
#: codec tells them apart by their keys: ``method`` + ``id``, ``method``, ``result``,
#: ``error``; arrays are 2025-03-26 batches).
JSONRPCMessage: TypeAlias = (
    JSONRPCRequest
    | JSONRPCNotification
    | JSONRPCResultResponse
    | JSONRPCErrorResponse
    | JSONRPCBatchRequest
    | JSONRPCBatchResponse
)


# The spec's error responses, with their error objects.


class HeaderMismatchErrorObject(Error, kw_only=True):  # noqa: N818 (a Struct, not an exception)
    """The error object of a HeaderMismatchError."""

    code: Literal[-32020] = -32020


class HeaderMismatchError(JSONRPCErrorResponse, kw_only=True):
    """Returned when the HTTP headers do not match the request body, or are missing or malformed."""

    error: HeaderMismatchErrorObject


class MissingRequiredClientCapabilityErrorData(MCPType, kw_only=True):
    """The ``data`` of a MissingRequiredClientCapabilityError."""

    required_capabilities: ClientCapabilities


class MissingRequiredClientCapabilityErrorObject(Error, kw_only=True):  # noqa: N818 (a Struct, not an exception)
    """The error object of a MissingRequiredClientCapabilityError."""

    code: Literal[-32021] = -32021
    data: MissingRequiredClientCapabilityErrorData


class MissingRequiredClientCapabilityError(JSONRPCErrorResponse, kw_only=True):
    """Returned when a request requires a capability the client did not declare."""

    error: MissingRequiredClientCapabilityErrorObject


class UnsupportedProtocolVersionErrorData(MCPType, kw_only=True):
    """The ``data`` of an UnsupportedProtocolVersionError."""

    supported: list[str]
    requested: str


class UnsupportedProtocolVersionErrorObject(Error, kw_only=True):  # noqa: N818 (a Struct, not an exception)
    """The error object of an UnsupportedProtocolVersionError."""

    code: Literal[-32022] = -32022
    data: UnsupportedProtocolVersionErrorData


class UnsupportedProtocolVersionError(JSONRPCErrorResponse, kw_only=True):
    """Returned when the request's protocol version is unknown to the server or unsupported."""

    error: UnsupportedProtocolVersionErrorObject


class URLElicitationRequiredErrorData(MCPType, kw_only=True):
    """The ``data`` of a URLElicitationRequiredError.

    Legacy only: 2025-11-25.
    """

    elicitations: list[ElicitRequestURLParams]


class URLElicitationRequiredErrorObject(Error, kw_only=True):  # noqa: N818 (a Struct, not an exception)
    """The error object of a URLElicitationRequiredError.

    Legacy only: 2025-11-25.
    """

    code: Literal[-32042] = -32042
    data: URLElicitationRequiredErrorData


class URLElicitationRequiredError(JSONRPCErrorResponse, kw_only=True):
    """An error response saying the client must first complete URL-mode elicitations.

    Legacy only: 2025-11-25.
    """

    error: URLElicitationRequiredErrorObject
