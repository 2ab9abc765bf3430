"""`Server.never_waits`: the requests `Server.handle_request` answers in one step.

A driver runs such a request in the task that read it instead of a worker
(``transports._http.server.sessions``), trusting two things checked here for every tool
of the one-pass tests' server, in both eras: what ``never_waits`` says of a request
(a ``tools/call`` of a synchronous tool with no `Context` that never runs as a task),
and that `Server.handle_request` then finishes without ever suspending (the coroutine
ends at its first step), with the very answer it gives when awaited in an event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpcore import Connection, RequestReceived
from mcpcore.server import Server
from tests.core.test_fastcalls import _META, _TOOLS, _VALID, _Nowhere, _server

#: The tools of `_server` answered in one step: plain ``def``, no Context.
_ONE_STEP = {"echo", "add", "schema", "boom", "told", "refuses", "asks", "presumes", "odd"}
_LEGACY = "2025-11-25"


def _with_task_tool(server: Server) -> Server:
    @server.tool(task="optional")
    def tasked(text: str = "t") -> str:
        """A plain def that may run as a task (the tasks extension): not one step."""
        return text

    return server


def _connection(server: Server, era: str) -> Connection:
    """A server connection ready for ``era``'s requests (a legacy one after its handshake)."""
    connection = server.connection()
    if era == "legacy":
        params = {
            "protocolVersion": _LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        (event,) = connection.receive(_message(0, "initialize", params))
        assert isinstance(event, RequestReceived)
        asyncio.run(server.handle_request(connection, event, _Nowhere()))
        connection.receive(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return connection


def _message(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


def _request(
    connection: Connection, era: str, method: str, name: str | None, request_id: int = 7
) -> RequestReceived:
    params: dict[str, Any] = {} if era == "legacy" else {"_meta": _META}
    if name is not None:
        params["name"] = name
        if name in _VALID:
            params["arguments"] = _VALID[name]
    (event,) = connection.receive(_message(request_id, method, params))
    assert isinstance(event, RequestReceived), event
    return event


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("name", [*_TOOLS, "tasked"])
def test_a_call_said_never_to_wait_is_answered_in_one_step_as_awaited(era: str, name: str) -> None:
    stepped, awaited = _with_task_tool(_server()), _with_task_tool(_server())
    connection, twin = _connection(stepped, era), _connection(awaited, era)
    event = _request(connection, era, "tools/call", name)
    assert stepped.never_waits(event) is (name in _ONE_STEP)
    if name not in _ONE_STEP:
        return
    coroutine = stepped.handle_request(connection, event, _Nowhere())
    with pytest.raises(StopIteration) as ended:
        coroutine.send(None)  # (one step: a suspension would hand back what it waits on)
    expected = asyncio.run(
        awaited.handle_request(twin, _request(twin, era, "tools/call", name), _Nowhere())
    )
    assert expected is not None
    assert ended.value.value == expected
    assert json.loads(expected)["id"] == 7


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_only_tools_call_is_said_never_to_wait(era: str) -> None:
    server = _server()
    connection = _connection(server, era)
    assert not server.never_waits(_request(connection, era, "tools/list", None))
    if era == "legacy":
        assert not server.never_waits(_request(connection, era, "ping", None, request_id=8))
