"""Multi round-trip requests (2026-07-28 basic/patterns/mrtr), the client's half.

A 2026-07-28 server may answer ``tools/call``, ``resources/read`` or ``prompts/get``
with an `InputRequiredResult`. The client's duties (CHECKLIST §9.1):

- "If inputRequests is present, (C) MUST construct the responses before retrying"; a
  kind the client did not declare is the server's error ("MUST NOT include an input
  request kind the client did not declare"), and the client never invents an answer.
- The retry "repeats the original params and adds inputResponses (same keys) plus
  requestState", under a new JSON-RPC id (G18).
- requestState is echoed exactly: never inspected, parsed or modified, and never added
  when the server sent none. The string is passed through as the very object decoded.
- "If it is absent, (C) MAY retry immediately" with the state alone.

Input requests and responses are not JSON-RPC messages (G2): the answers are bare
results keyed like the requests.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import msgspec
from msgspec import UnsetType

from mcpcore._capabilities import required_client_capabilities
from mcpcore.client._callbacks import ClientCallbacks
from mcpcore.client._errors import UnsupportedInputRequestError
from mcpcore.types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    InputRequests,
    InputRequiredResult,
    InputResponse,
    ListRootsRequest,
    ListRootsResult,
)

__all__ = ["MAX_INPUT_ROUNDS", "answer_input_requests", "check_input_requests", "retry_params"]

#: Retries one request may take before the client gives up on a server that keeps asking
#: for input. The TypeScript, C# and Go SDKs use 10 as well; a real exchange (a form,
#: then a confirmation) takes two or three.
MAX_INPUT_ROUNDS: Final = 10

_P = TypeVar("_P", bound=msgspec.Struct)


def _method_of(request: Any) -> str:
    return str(type(request).__struct_config__.tag)


def check_input_requests(
    requests: InputRequests, callbacks: ClientCallbacks, capabilities: ClientCapabilities | None
) -> None:
    """Refuse input requests this client can't answer, before any callback runs.

    Checked first, all of them, so a user is never asked half the questions of a round
    that can't complete.

    Raises:
        UnsupportedInputRequestError: A kind, elicitation mode or sampling feature the client
            did not declare, or one no callback answers.
    """
    for key, request in requests.items():
        method = _method_of(request)
        missing = required_client_capabilities(method, request.params, capabilities)
        if missing is not None:
            needed = msgspec.json.encode(missing).decode()
            raise UnsupportedInputRequestError(key, method, f"needs {needed}, not declared")
        callback = {
            "elicitation/create": callbacks.elicitation,
            "sampling/createMessage": callbacks.sampling,
            "roots/list": callbacks.roots,
        }.get(method)
        if callback is None:
            raise UnsupportedInputRequestError(key, method, "no callback answers it")


async def answer_input_requests(
    requests: InputRequests, callbacks: ClientCallbacks, capabilities: ClientCapabilities | None
) -> dict[str, InputResponse]:
    """Answer every input request with the client's callbacks.

    The callbacks run one after another, in the server's order (the core starts no
    tasks). A callback's exception propagates: there is nobody to send an error to.

    Args:
        requests: The `InputRequiredResult.input_requests`.
        callbacks: The client's callbacks.
        capabilities: What the client declared on the request.

    Returns:
        The ``inputResponses``, keyed like ``requests``.

    Raises:
        UnsupportedInputRequestError: See `check_input_requests`.
        TypeError: A callback returned something other than its result type.
    """
    check_input_requests(requests, callbacks, capabilities)
    responses: dict[str, InputResponse] = {}
    for key, request in requests.items():
        answer, expected = await _answer(key, request, callbacks)
        if not isinstance(answer, expected):
            raise TypeError(
                f"the {_method_of(request)} callback returned {type(answer).__name__}, "
                f"not {expected.__name__}"
            )
        responses[key] = answer
    return responses


async def _answer(key: str, request: Any, callbacks: ClientCallbacks) -> tuple[Any, type[Any]]:
    """One input request's answer, from its callback, and the type it must have."""
    if isinstance(request, ElicitRequest) and callbacks.elicitation is not None:
        return await callbacks.elicitation(request.params), ElicitResult
    if isinstance(request, CreateMessageRequest) and callbacks.sampling is not None:
        return await callbacks.sampling(request.params), CreateMessageResult
    if isinstance(request, ListRootsRequest) and callbacks.roots is not None:
        return await callbacks.roots(), ListRootsResult
    # (`check_input_requests` refuses these before any callback runs)
    raise UnsupportedInputRequestError(key, _method_of(request), "no callback answers it")


def retry_params(
    params: _P, asked: InputRequiredResult, responses: dict[str, InputResponse] | UnsetType
) -> _P:
    """The params of the retry: the original ones, the answers, the state echoed.

    Args:
        params: The params of the original request (never of an earlier retry: each
            retry carries only the answers of its own round).
        asked: The `InputRequiredResult` being answered.
        responses: Its answers, or UNSET when it asked for none.

    Returns:
        A copy of ``params`` with ``inputResponses`` and ``requestState`` set, or left
        out when there is nothing to send.
    """
    return msgspec.structs.replace(
        params, input_responses=responses, request_state=asked.request_state
    )
