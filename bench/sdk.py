"""The official SDK's codec (``mcp`` / ``mcp-types`` 2.3.0, pydantic), mirrored two ways.

Import this module only when `bench._optional.Availability` says ``"sdk"`` is available.
The protocol version is 2025-11-25, the legacy era mcpcore's own codec rows run in.

``codec`` (column ``sdk``) is the SDK's leanest way to do the job, the brief's "best
path": only the steps that turn bytes into typed models and back.

* Reading: ``mcp_types.jsonrpc_message_adapter.validate_json(data, by_name=False)``, as
  the stdio transports do (``mcp/server/stdio.py``, ``mcp/client/stdio.py``), gives a
  ``JSONRPCRequest``/``JSONRPCNotification``/``JSONRPCResponse`` whose body is a dict;
  then ``params_model.model_validate(params, by_name=False)`` as the server runner does
  (``mcp/server/runner.py``), or ``result_model.model_validate(raw, by_name=False)`` as
  the client session does (``mcp/client/session.py``).
* Writing: ``model_dump(by_alias=True, mode="json", exclude_none=True)`` of the typed
  value (session and runner), wrapped in the JSON-RPC model the dispatcher builds, and
  ``model_dump_json(by_alias=True, exclude_unset=True)`` encoded to UTF-8, as the stdio
  transports write it.

``session_codec`` (column ``sdk-session``) adds what the SDK's session and runner do
around those steps to the same message, each call taken from the files named above:

* the transport's ``bytes`` to ``str`` decode, and its newline on the way out;
* a request: ``RequestParams.model_validate`` for ``_meta`` (the runner's
  ``_extract_meta``), then ``mcp_types.methods.validate_client_request`` (the
  per-version surface check) before the typed params; written back through the typed
  ``CallToolRequest`` model as ``ClientSession.send_request`` does;
* a result: ``mcp_types.methods.validate_server_result`` before the typed result (the
  client session), and ``mcp_types.methods.serialize_server_result`` after the dump
  (the runner's ``_serialize``: a second validate-and-dump that drops the fields the
  revision does not know, such as ``resultType``);
* a notification: ``mcp_types.methods.parse_server_notification`` (the client
  session's ``_on_notify``); written through the typed ``ProgressNotification`` model
  as ``ServerSession.send_notification`` does.

Neither counts the middleware chain, contexts, tasks, OpenTelemetry spans or streams.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    ProgressNotification,
    RequestParams,
    jsonrpc_message_adapter,
)
from mcp_types.methods import (
    parse_server_notification,
    serialize_server_result,
    validate_client_request,
    validate_server_result,
)

from mcpcore_cli.bench.messages import Payload
from mcpcore_cli.bench.sdk_codecs import (
    UnexpectedMessageError,
    codec,
    params_type,
    result_type,
)

__all__ = ["VERSION", "codec", "round_trip", "session_codec"]

#: The negotiated revision the session path validates against.
VERSION = "2025-11-25"


def session_codec(payload: Payload) -> Callable[[], bytes]:
    """`codec` plus the checks and passes the SDK's session and runner add (see above)."""
    data = payload.data
    method = payload.method
    validate_json = jsonrpc_message_adapter.validate_json
    if payload.kind == "result":
        result_model = result_type(method)

        def result_codec() -> bytes:
            message = validate_json(data.decode(), by_name=False)
            if not isinstance(message, JSONRPCResponse):
                raise UnexpectedMessageError(type(message).__name__)
            validate_server_result(method, VERSION, message.result)
            result = result_model.model_validate(message.result, by_name=False)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            out = JSONRPCResponse(
                jsonrpc="2.0",
                id=message.id,
                result=serialize_server_result(method, VERSION, dumped),
            )
            line: str = out.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            return line.encode()

        return result_codec

    if payload.kind == "request":
        params_model = params_type(method)

        def request_codec() -> bytes:
            message = validate_json(data.decode(), by_name=False)
            if not isinstance(message, JSONRPCRequest) or message.params is None:
                raise UnexpectedMessageError(type(message).__name__)
            if "_meta" in message.params:
                RequestParams.model_validate(message.params, by_name=False)
            validate_client_request(message.method, VERSION, message.params)
            params = params_model.model_validate(message.params, by_name=False)
            dumped = CallToolRequest(params=params).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            out = JSONRPCRequest(
                jsonrpc="2.0", id=message.id, method=dumped["method"], params=dumped["params"]
            )
            line: str = out.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            return line.encode()

        return request_codec

    def notification_codec() -> bytes:
        message = validate_json(data.decode(), by_name=False)
        if not isinstance(message, JSONRPCNotification):
            raise UnexpectedMessageError(type(message).__name__)
        notification = parse_server_notification(message.method, VERSION, message.params)
        if not isinstance(notification, ProgressNotification):
            raise UnexpectedMessageError(type(notification).__name__)
        dumped = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
        out = JSONRPCNotification(jsonrpc="2.0", method=dumped["method"], params=dumped["params"])
        line: str = out.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        return line.encode()

    return notification_codec


def round_trip(request: bytes, response: bytes) -> Callable[[], object]:
    """The SDK's codec work for one ``tools/call`` round trip, with no session around it.

    ``request`` and ``response`` are the bytes mcpcore exchanged; the typed values the
    SDK's client and server would hold are built from them once. One call then does
    what the two SDK peers' codecs do: the client encodes the request, the server
    decodes and types it, the server encodes the result, the client decodes and types
    it.
    """
    validate_json = jsonrpc_message_adapter.validate_json
    request_message = validate_json(request, by_name=False)
    response_message = validate_json(response, by_name=False)
    if not isinstance(request_message, JSONRPCRequest):
        raise UnexpectedMessageError(type(request_message).__name__)
    if not isinstance(response_message, JSONRPCResponse):
        raise UnexpectedMessageError(type(response_message).__name__)
    request_id = request_message.id
    params = CallToolRequestParams.model_validate(request_message.params, by_name=False)
    result = CallToolResult.model_validate(response_message.result, by_name=False)

    def run() -> object:
        sent = JSONRPCRequest(
            jsonrpc="2.0",
            id=request_id,
            method="tools/call",
            params=params.model_dump(by_alias=True, mode="json", exclude_none=True),
        ).model_dump_json(by_alias=True, exclude_unset=True)
        received = validate_json(sent.encode(), by_name=False)
        if not isinstance(received, JSONRPCRequest):
            raise UnexpectedMessageError(type(received).__name__)
        CallToolRequestParams.model_validate(received.params, by_name=False)
        reply = JSONRPCResponse(
            jsonrpc="2.0",
            id=received.id,
            result=result.model_dump(by_alias=True, mode="json", exclude_none=True),
        ).model_dump_json(by_alias=True, exclude_unset=True)
        answer = validate_json(reply.encode(), by_name=False)
        if not isinstance(answer, JSONRPCResponse):
            raise UnexpectedMessageError(type(answer).__name__)
        return CallToolResult.model_validate(answer.result, by_name=False)

    return run
