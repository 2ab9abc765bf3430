"""The official SDK's codec (``mcp-types`` 2.3.0, pydantic): its leanest typed path.

Import this module only where the SDK is installed. The protocol version is
2025-11-25, the legacy era mcpcore's own codec rows run in.

* Reading: ``mcp_types.jsonrpc_message_adapter.validate_json(data, by_name=False)``, as
  the stdio transports do (``mcp/server/stdio.py``, ``mcp/client/stdio.py``), gives a
  ``JSONRPCRequest``/``JSONRPCNotification``/``JSONRPCResponse`` whose body is a dict;
  then the params' model validates them as the server runner does
  (``mcp/server/runner.py``), or the result's as the client session does
  (``mcp/client/session.py``).
* Writing: ``model_dump(by_alias=True, mode="json", exclude_none=True)`` of the typed
  value (session and runner), wrapped in the JSON-RPC model the dispatcher builds, and
  ``model_dump_json(by_alias=True, exclude_unset=True)`` encoded to UTF-8, as the stdio
  transports write it.

The models are the SDK's own, by method (``mcp_types.methods``' maps), with the plain
models its client and server use for the benchmarks' fixed messages (`PARAMS_TYPES`,
`RESULT_TYPES`). ``bench.sdk`` adds what the SDK's session and runner do around this.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    ListToolsResult,
    ProgressNotificationParams,
    ReadResourceResult,
    jsonrpc_message_adapter,
)
from mcp_types.methods import MONOLITH_NOTIFICATIONS, MONOLITH_REQUESTS, MONOLITH_RESULTS
from pydantic import TypeAdapter

from mcpcore_cli.bench.messages import Payload

__all__ = [
    "PARAMS_TYPES",
    "RESULT_TYPES",
    "UnexpectedMessageError",
    "UnknownMethodError",
    "codec",
    "params_type",
    "result_type",
]

#: The typed params of the requests and notifications the benchmarks send.
PARAMS_TYPES: dict[str, Any] = {
    "tools/call": CallToolRequestParams,
    "notifications/progress": ProgressNotificationParams,
}
#: The typed results of the responses the benchmarks send, by the request's method.
RESULT_TYPES: dict[str, Any] = {
    "tools/call": CallToolResult,
    "resources/read": ReadResourceResult,
    "tools/list": ListToolsResult,
}


class UnexpectedMessageError(Exception):
    """The SDK read a message of another kind than the workload sends."""


def codec(payload: Payload) -> Callable[[], bytes]:
    """Decode ``payload`` into the SDK's typed models and encode it back, as the SDK does."""
    data = payload.data
    validate_json = jsonrpc_message_adapter.validate_json
    if payload.kind == "result":
        result_model = result_type(payload.method)

        def result_codec() -> bytes:
            message = validate_json(data, by_name=False)
            if not isinstance(message, JSONRPCResponse):
                raise UnexpectedMessageError(type(message).__name__)
            result = result_model.model_validate(message.result, by_name=False)
            out = JSONRPCResponse(
                jsonrpc="2.0",
                id=message.id,
                result=result.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
            text: str = out.model_dump_json(by_alias=True, exclude_unset=True)
            return text.encode()

        return result_codec

    params_model = params_type(payload.method)
    if payload.kind == "request":

        def request_codec() -> bytes:
            message = validate_json(data, by_name=False)
            if not isinstance(message, JSONRPCRequest):
                raise UnexpectedMessageError(type(message).__name__)
            params = params_model.model_validate(message.params, by_name=False)
            out = JSONRPCRequest(
                jsonrpc="2.0",
                id=message.id,
                method=message.method,
                params=params.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
            text: str = out.model_dump_json(by_alias=True, exclude_unset=True)
            return text.encode()

        return request_codec

    def notification_codec() -> bytes:
        message = validate_json(data, by_name=False)
        if not isinstance(message, JSONRPCNotification):
            raise UnexpectedMessageError(type(message).__name__)
        params = params_model.model_validate(message.params, by_name=False)
        out = JSONRPCNotification(
            jsonrpc="2.0",
            method=message.method,
            params=params.model_dump(by_alias=True, mode="json", exclude_none=True),
        )
        text: str = out.model_dump_json(by_alias=True, exclude_unset=True)
        return text.encode()

    return notification_codec


class UnknownMethodError(Exception):
    """The SDK has no model for the message's method."""


def params_type(method: str) -> Any:
    """The SDK model of ``method``'s params (a request's or a notification's)."""
    known = PARAMS_TYPES.get(method)
    if known is not None:
        return known
    message = MONOLITH_REQUESTS.get(method) or MONOLITH_NOTIFICATIONS.get(method)
    if message is None:
        raise UnknownMethodError(method)
    annotation = message.model_fields["params"].annotation
    if get_origin(annotation) in (Union, types.UnionType):  # "Params | None"
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    return annotation


def result_type(method: str) -> Any:
    """The SDK model of ``method``'s result (a union validated through a TypeAdapter)."""
    known = RESULT_TYPES.get(method)
    if known is not None:
        return known
    result = MONOLITH_RESULTS.get(method)
    if result is None:
        raise UnknownMethodError(method)
    if isinstance(result, type):
        return result
    return _AdaptedUnion(TypeAdapter(result))  # type: ignore[arg-type]


class _AdaptedUnion:
    """A union of result models with a model's ``model_validate``."""

    def __init__(self, adapter: TypeAdapter[Any]) -> None:
        self._adapter = adapter

    def model_validate(self, value: Any, *, by_name: bool = False) -> Any:
        return self._adapter.validate_python(value, by_name=by_name)
