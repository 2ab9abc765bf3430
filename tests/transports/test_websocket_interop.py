"""WebSocket interoperability with the official SDKs that speak it (issue 6's acceptance).

* The TypeScript SDK v1 ``WebSocketClientTransport`` (``@modelcontextprotocol/sdk``
  1.32.x, on node 22) against ``examples/everything.py --transport ws``;
* the Python SDK 1.x ``websocket_client`` (``mcp==1.30.0``, in its own environment)
  against the same server;
* our client against the Python SDK 1.x ``websocket_server`` (on Starlette and uvicorn).

Each client lists and calls tools, reads a resource and gets a prompt. The SDKs are
installed on first use into ``.conformance/`` (`tests.transports.sdk_installs`) and
reused; the everything server is shared by the module's tests.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import pytest
import trio

from bench._listening import wait_listening
from bench._ports import reserve_port
from mcpcore import types
from mcpcore.versions import Era
from tests.conformance.suite import ensure_suite
from tests.transports.sdk_installs import ensure_python_sdk1, ensure_ts_sdk
from tests.transports.trio_helpers import PYTHON, REPOSITORY
from transports import open_websocket_client

EVERYTHING: Final = REPOSITORY / "examples" / "everything.py"
TS_CLIENT: Final = REPOSITORY / "tests" / "transports" / "ws_ts_client.mjs"
SDK1_CLIENT: Final = REPOSITORY / "tests" / "transports" / "sdk1_ws_client.py"
SDK1_SERVER: Final = REPOSITORY / "tests" / "transports" / "sdk1_ws_server.py"
#: Seconds a server may take to start listening (the SDK's imports take a while).
START_TIMEOUT: Final = 30.0
#: Seconds a client script may take from start to finish.
CLIENT_TIMEOUT: Final = 60.0
SIMPLE_TEXT: Final = "This is a simple text response for testing."
STATIC_TEXT: Final = "This is the content of the static text resource."
PROMPT_TEXT: Final = "Prompt with arguments: arg1='first', arg2='second'"


@pytest.fixture(scope="module")
def everything_ws() -> Iterator[str]:
    """``examples/everything.py --transport ws`` on a free port; its URL."""
    port = reserve_port()
    process = subprocess.Popen(
        [PYTHON, str(EVERYTHING), "--transport", "ws", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process, timeout=START_TIMEOUT, name="the everything server")
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        process.kill()
        process.wait(timeout=START_TIMEOUT)


def _run_client(command: list[str]) -> dict[str, Any]:
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return document


def _assert_everything_answers(document: dict[str, Any]) -> None:
    assert document["server"] == "mcpcore-everything"
    assert {"test_simple_text", "test_tool_with_progress"} <= set(document["tools"])
    assert document["called"]["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    [contents] = document["resource"]["contents"]
    assert contents["uri"] == "test://static-text"
    assert contents["text"] == STATIC_TEXT
    [message] = document["prompt"]["messages"]
    assert message["content"] == {"type": "text", "text": PROMPT_TEXT}


def test_the_typescript_sdk_v1_client_against_the_everything_server(everything_ws: str) -> None:
    node = ensure_suite().node  # node 22: its global WebSocket is what the transport uses
    document = _run_client([str(node), str(TS_CLIENT), str(ensure_ts_sdk()), everything_ws])
    _assert_everything_answers(document)
    assert document["protocol"] == "mcp"  # the subprotocol we selected


def test_the_python_sdk1_client_against_the_everything_server(everything_ws: str) -> None:
    document = _run_client([str(ensure_python_sdk1()), str(SDK1_CLIENT), everything_ws])
    _assert_everything_answers(document)
    assert document["protocol"] == "2025-11-25"  # the handshake era, scoped to the socket


@contextmanager
def sdk1_server() -> Iterator[str]:
    """The Python SDK 1.x websocket server (`sdk1_ws_server.py`); its URL."""
    process = subprocess.Popen(
        [str(ensure_python_sdk1()), str(SDK1_SERVER)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # (it logs every request, and our era probe's refusal)
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # its port, or EOF if it died
        assert line.startswith("PORT "), f"the SDK 1.x server did not start: {line!r}"
        yield f"ws://127.0.0.1:{int(line.split()[1])}/ws"
    finally:
        if process.stdout is not None:
            process.stdout.close()
        process.kill()
        process.wait(timeout=START_TIMEOUT)


def test_our_client_against_the_python_sdk1_server() -> None:
    with sdk1_server() as url:
        trio.run(_talk_to_sdk1, url)


async def _talk_to_sdk1(url: str) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []
    got_log = trio.Event()

    def on_notification(event: Any) -> None:
        if isinstance(event.params, types.LoggingMessageNotificationParams):
            logged.append(event.params)
            got_log.set()

    with trio.fail_after(CLIENT_TIMEOUT):
        # "auto": the 2026-07-28 probe is refused, and the handshake follows.
        async with open_websocket_client(url, on_notification=on_notification) as client:
            assert client.era is Era.LEGACY
            assert client.subprotocol == "mcp"
            assert client.server_info is not None
            assert client.server_info.name == "sdk1-websocket"
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["add", "shout"]
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.content == [types.TextContent(text="5")]
            shouted = await client.call_tool("shout", {"text": "hi"})
            assert shouted.content == [types.TextContent(text="HI")]
            await got_log.wait()
            assert logged[0].data == "shouting hi"
            resource = await client.read_resource("test://greeting")
            [contents] = resource.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "Hello from the SDK 1.x"
            prompt = await client.get_prompt("greet", {"name": "Bob"})
            [message] = prompt.messages
            assert message.content == types.TextContent(text="Say hello to Bob")
            await client.ping()
        assert client.closed_reason is not None
