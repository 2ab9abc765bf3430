"""Answering a legacy server's requests: ping, sampling, elicitation, roots.

Before 2026-07-28 a server asks the client with JSON-RPC requests of its own (2026-07-28
moved all of them into MRTR, and "servers MUST NOT initiate JSON-RPC requests"). The
`Connection` has already refused what the client did not declare (-32601, "a client
without roots support → -32601"); what is left is checked against the finer parts of
the declaration and answered through the same callbacks MRTR uses.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec import UNSET

from mcpcore import jsonrpc
from mcpcore._capabilities import required_client_capabilities
from mcpcore._connection import Connection
from mcpcore.client._callbacks import ClientCallbacks
from mcpcore.client._errors import McpError
from mcpcore.events import RequestReceived
from mcpcore.types import (
    ClientCapabilities,
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    Result,
)

__all__ = ["answer_server_request"]

#: What a failed callback tells the server: nothing about the failure itself.
_INTERNAL_ERROR_MESSAGE: Final = "Internal error"


async def answer_server_request(
    connection: Connection, callbacks: ClientCallbacks, event: RequestReceived
) -> bytes | None:
    """The reply to one server request, or None when the server cancelled it.

    A callback's `McpError` is sent as it is; any other exception becomes a bare
    -32603 that leaks nothing of it (the exception goes to
    `ClientCallbacks.on_callback_error`). Cancellation (a `BaseException`) propagates.
    """
    request_id, method = event.request_id, event.method
    if method == "ping":
        # "The receiver MUST promptly reply with an empty response" (2024-11-05 ping).
        return connection.send_result(request_id, Result())
    callback, expected = _callback_for(callbacks, method)
    refusal = _refusal(connection, callback, event)
    if refusal is not None:
        return connection.send_error(request_id, *refusal)
    try:
        result = await (callback() if method == "roots/list" else callback(event.params))
    except McpError as error:
        data = UNSET if error.data is None else error.data
        return connection.send_error(request_id, error.code, error.message, data)
    except Exception as exc:  # the user's code: report it, answer without its details
        return _failed(connection, callbacks, event, exc)
    if not isinstance(result, expected):
        wrong = TypeError(
            f"the {method} callback returned {type(result).__name__}, not {expected.__name__}"
        )
        return _failed(connection, callbacks, event, wrong)
    return connection.send_result(request_id, result)


def _refusal(
    connection: Connection, callback: Any, event: RequestReceived
) -> tuple[int, str] | None:
    """The error (code, message) that answers a request no callback may take, or None."""
    method = event.method
    if callback is None:
        return jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}"
    capabilities = connection.capabilities
    declared = capabilities if isinstance(capabilities, ClientCapabilities) else None
    if required_client_capabilities(method, event.params, declared) is not None:
        # An elicitation mode or sampling tools we did not declare: "(C) returns -32602
        # for an undeclared mode" (2025-11-25 client/elicitation), and "(C) MUST return
        # an error" for undeclared tools (2025-11-25 client/sampling).
        return (
            jsonrpc.INVALID_PARAMS,
            f"Invalid params: {method} asks for a capability this client did not declare",
        )
    return None


def _failed(
    connection: Connection, callbacks: ClientCallbacks, event: RequestReceived, exc: Exception
) -> bytes | None:
    if callbacks.on_callback_error is not None:
        callbacks.on_callback_error(event.method, exc)
    return connection.send_error(event.request_id, jsonrpc.INTERNAL_ERROR, _INTERNAL_ERROR_MESSAGE)


def _callback_for(callbacks: ClientCallbacks, method: str) -> tuple[Any, type[Any]]:
    if method == "sampling/createMessage":
        return callbacks.sampling, CreateMessageResult
    if method == "elicitation/create":
        return callbacks.elicitation, ElicitResult
    if method == "roots/list":
        return callbacks.roots, ListRootsResult
    return None, type(None)
