"""What a hostile MCP server sends a client: its answer to a call, broken or not, or anything.

The grammar the clients' hostile-server property tests draw from
(``tests/transports/test_http_client_hostile.py`` over HTTP,
``tests/transports/test_stream_client_hostile.py`` over stdio and WebSocket): the call's
result or error with members dropped or changed, answers to other ids, notifications,
requests of the server, any JSON value, raw bytes. `ID` stands for the call's own id,
filled in by the server once it knows it (`tests.transports.mcp_answers.with_id`).
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

from mcpcore.client import ClientError, McpError
from tests.core.test_fuzz import json_values
from tests.transports.mcp_answers import ID, with_id
from transports import HttpStatusError

__all__ = ["DOCUMENTED", "ID", "messages", "proper_result", "with_id"]

#: What a call may raise, whatever a server sends: the server's error
#: (`mcpcore.client.McpError`), what we judge of its answers
#: (`mcpcore.client.ClientError`), HTTP's status (`transports.HttpStatusError`), a lost
#: connection, the call's timeout.
DOCUMENTED: Final = (McpError, ClientError, HttpStatusError, ConnectionError, TimeoutError)


def proper_result(era: str) -> dict[str, Any]:
    """A well-formed ``tools/call`` result in ``era`` (``"modern"`` or ``"legacy"``)."""
    value: dict[str, Any] = {"content": [{"type": "text", "text": "ok"}]}
    return {"resultType": "complete", **value} if era == "modern" else value


@st.composite
def messages(draw: st.DrawFn, era: str) -> Any:
    """A message the server might send: the call's answer, broken or not, or anything.

    A JSON value (the placeholder `ID` for the call's id), or raw bytes.
    """
    request_id = draw(st.sampled_from([ID, ID, ID, 999, "other", None]))
    kind = draw(st.sampled_from(["result", "result", "error", "notification", "request", "any"]))
    if kind == "result":
        value = draw(st.sampled_from([proper_result(era), {}, {"content": "x"}]) | json_values)
        message = {"jsonrpc": "2.0", "id": request_id, "result": value}
    elif kind == "error":
        error = draw(
            st.fixed_dictionaries(
                {"code": st.integers() | st.none() | st.text(max_size=4)},
                optional={
                    "message": st.text(max_size=8) | st.none() | st.integers(),
                    "data": json_values,
                },
            )
        )
        message = {"jsonrpc": "2.0", "id": request_id, "error": error}
    elif kind == "notification":
        method = draw(st.sampled_from(["notifications/progress", "notifications/message", "x"]))
        message = {"jsonrpc": "2.0", "method": method, "params": draw(json_values)}
    elif kind == "request":
        method = draw(st.sampled_from(["ping", "roots/list", "sampling/createMessage", "x"]))
        message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": draw(json_values)}
    else:
        return draw(json_values | st.binary(max_size=16))
    if draw(st.booleans()) and draw(st.booleans()):  # (a member dropped or changed)
        key = draw(st.sampled_from(sorted(message)))
        if draw(st.booleans()):
            del message[key]
        else:
            message[key] = draw(json_values)
    return message
