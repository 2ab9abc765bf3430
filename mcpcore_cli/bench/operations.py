"""The request a load test sends, and how each answer is judged.

Every answer is checked: a request counts as a success only when the server answered
it with a result that is not an error. Everything else is an error of a *kind*, and the
report lists the kinds with their counts:

- a tool result with ``isError: true`` (the tool ran and failed);
- a JSON-RPC error answer, by code (an unknown tool, bad arguments...);
- no answer within the timeout;
- the connection lost, or refused at the HTTP level (by status).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Literal

from mcpcore import McpError
from transports import Client, ConnectionClosedError, HttpStatusError

__all__ = [
    "CONNECTION_CLOSED",
    "TIMED_OUT",
    "TOOL_ERROR",
    "Call",
    "Operation",
    "OperationKind",
    "bind",
]

#: The error kind of a tool result with ``isError: true``.
TOOL_ERROR: Final = "tool error (isError)"
#: The error kind of a request that got no answer within its timeout.
TIMED_OUT: Final = "timeout"
#: The error kind of a request whose connection went away (or could not be opened).
CONNECTION_CLOSED: Final = "connection closed"

#: What a load test asks for.
OperationKind = Literal["tool", "resource", "prompt"]
#: One request, sent and judged: None when it succeeded, else the kind of error.
Call = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True, kw_only=True)
class Operation:
    """The request every worker sends, again and again.

    Attributes:
        kind: ``tools/call``, ``resources/read`` or ``prompts/get``.
        name: The tool's or prompt's name, or the resource's URI.
        arguments: The tool's or prompt's arguments (a prompt's are strings).
    """

    kind: OperationKind
    name: str
    arguments: Mapping[str, Any] | None = None

    def describe(self) -> str:
        """The operation as the report names it (``tools/call echo``)."""
        method = {"tool": "tools/call", "resource": "resources/read", "prompt": "prompts/get"}
        return f"{method[self.kind]} {self.name}"


def bind(operation: Operation, client: Client, timeout: float) -> Call:
    """The `Call` that sends ``operation`` over ``client`` and judges its answer."""
    if operation.kind == "tool":
        request: Callable[[], Awaitable[Any]] = partial(
            client.call_tool, operation.name, operation.arguments, timeout=timeout
        )
    elif operation.kind == "resource":
        request = partial(client.read_resource, operation.name, timeout=timeout, fresh=True)
    else:
        request = partial(client.get_prompt, operation.name, operation.arguments, timeout=timeout)
    return partial(_judged, request)


async def _judged(request: Callable[[], Awaitable[Any]]) -> str | None:
    """Send one request: None when it succeeded, else the kind of error."""
    try:
        result = await request()
    except McpError as error:
        return f"JSON-RPC error {error.code}"
    except TimeoutError:
        return TIMED_OUT
    except HttpStatusError as error:
        return f"HTTP {error.status}"
    except ConnectionClosedError:
        return CONNECTION_CLOSED
    # (Only a tool result says it failed inside a result; the others are errors or not.)
    return TOOL_ERROR if getattr(result, "is_error", False) is True else None
