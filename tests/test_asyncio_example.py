"""The embedding proof: `examples/asyncio_stdio_server.py` served as a real subprocess.

The example serves the everything `Server` with `transports.serve_stdio_asyncio` on
plain asyncio, and is run here with trio and wsproto unimportable (as where they are
not installed). A `ClientSession`, driven by a small asyncio loop over the
subprocess's pipes, talks to it in both eras: tools, resources, prompts, legacy
server-to-client requests, 2026-07-28 multi round-trip requests, progress,
cancellation, and a clean exit on stdin EOF. Every wait is bounded.
"""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpcore import (
    ErrorReceived,
    InvalidResponse,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    types,
)
from mcpcore.client import ClientCallbacks, ClientSession, McpError, Outcome
from mcpcore.framing import LineFramer
from mcpcore.versions import LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, Era

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "asyncio_stdio_server.py"
#: Seconds any one exchange may take before the test fails (the example answers in ms).
EXCHANGE_TIMEOUT = 20.0
#: Seconds the whole conversation may take, start to exit.
TEST_TIMEOUT = 60.0
#: Runs the script named first on its command line with trio and wsproto unimportable
#: (``None`` in `sys.modules`: what Python does for a module that is not installed).
WITHOUT_TRIO = (
    "import runpy, sys\n"
    "sys.modules['trio'] = sys.modules['wsproto'] = None\n"
    "runpy.run_path(sys.argv[1], run_name='__main__')\n"
)
INFO = types.Implementation(name="asyncio-example-test", version="1.0")


class SubprocessClient:
    """A `Requester` over a child's stdin and stdout, and the reader that feeds the session."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._waiting: dict[types.RequestId, asyncio.Future[Outcome]] = {}
        self.session: ClientSession | None = None
        self.notifications: list[NotificationReceived | ProgressReceived] = []
        self.lines: list[dict[str, Any]] = []

    async def request(
        self, request_id: types.RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Write a request; wait (bounded) for the event that ends it."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self.send(data)
        try:
            return await asyncio.wait_for(future, timeout or EXCHANGE_TIMEOUT)
        finally:
            self._waiting.pop(request_id, None)

    async def send(self, data: bytes) -> None:
        """Write one message as one line."""
        self._stdin.write(data + b"\n")
        await self._stdin.drain()

    async def read_forever(self) -> None:
        """Feed what the server writes to the session, until its stdout ends."""
        assert self.session is not None
        framer = LineFramer()
        while chunk := await self._stdout.read(65536):
            for line in framer.feed(chunk):
                assert isinstance(line, bytes), line
                self.lines.append(json.loads(line))
                for event in self.session.connection.receive(line):
                    await self._route(event)

    async def _route(self, event: Any) -> None:
        assert self.session is not None
        if isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
            future = self._waiting.get(event.request_id) if event.request_id is not None else None
            if future is not None and not future.done():
                future.set_result(event)
        elif isinstance(event, RequestReceived):
            reply = await self.session.handle_server_request(event)
            if reply is not None:
                await self.send(reply)
        elif isinstance(event, NotificationReceived):
            self.session.handle_notification(event)
            self.notifications.append(event)
        elif isinstance(event, ProgressReceived):
            self.notifications.append(event)


async def answer_elicitation(
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    names = list(params.requested_schema.get("properties", {}))
    return types.ElicitResult(action="accept", content=dict.fromkeys(names, "Ada"))


async def answer_sampling(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="Paris"), model="test-model"
    )


Conversation = Callable[[ClientSession, SubprocessClient], Awaitable[None]]


async def talk_to_the_example(conversation: Conversation) -> int:
    """Start the example, run ``conversation`` against it, close stdin; its exit code."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WITHOUT_TRIO,
        str(EXAMPLE),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    client = SubprocessClient(process)
    callbacks = ClientCallbacks(elicitation=answer_elicitation, sampling=answer_sampling)
    client.session = ClientSession(client, client_info=INFO, callbacks=callbacks)
    reader = asyncio.create_task(client.read_forever())
    try:
        await conversation(client.session, client)
        assert process.stdin is not None
        process.stdin.close()
        # "(S) SHOULD exit promptly on stdin EOF."
        code = await asyncio.wait_for(process.wait(), EXCHANGE_TIMEOUT)
        await asyncio.wait_for(reader, EXCHANGE_TIMEOUT)
        return code
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        reader.cancel()


def run(conversation: Conversation) -> int:
    async def bounded() -> int:
        return await asyncio.wait_for(talk_to_the_example(conversation), TEST_TIMEOUT)

    return asyncio.run(bounded())


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_the_example_imports_without_trio() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['trio'] = sys.modules['wsproto'] = None; "
            "import examples.asyncio_stdio_server; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('trio', 'asyncio')))",
        ],
        cwd=EXAMPLE.parent.parent,
        capture_output=True,
        text=True,
        timeout=EXCHANGE_TIMEOUT,
        check=True,
    )
    modules = ast.literal_eval(loaded.stdout)
    assert "asyncio" in modules
    assert [name for name in modules if name.split(".")[0] == "trio"] == ["trio"]  # (None)


def test_a_legacy_client_gets_every_kind_of_answer() -> None:
    async def conversation(session: ClientSession, client: SubprocessClient) -> None:
        assert await session.connect("legacy") is Era.LEGACY
        assert session.protocol_version == LATEST_LEGACY_VERSION
        names = [tool.name async for tool in session.iter_tools()]
        assert names[0] == "test_simple_text"
        assert text_of(await session.call_tool("test_simple_text")) == (
            "This is a simple text response for testing."
        )
        # A server-to-client request over the same pipes, answered by the callback.
        sampled = await session.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text_of(sampled) == "LLM response: Paris"
        elicited = await session.call_tool("test_elicitation", {"message": "Who?"})
        assert "action=accept" in text_of(elicited)
        read = await session.read_resource("test://template/7/data")
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert json.loads(contents.text)["id"] == "7"
        prompt = await session.get_prompt("test_simple_prompt")
        assert len(prompt.messages) == 1
        progress = await session.call_tool("test_tool_with_progress", meta={"progressToken": "p1"})
        assert text_of(progress) == "Progress test completed"
        values = [n.progress for n in client.notifications if isinstance(n, ProgressReceived)]
        assert values == [0, 50, 100]
        with pytest.raises(McpError) as raised:
            await session.read_resource("test://nowhere")
        assert raised.value.code == -32002

    assert run(conversation) == 0


def test_a_modern_client_gets_discovery_and_multi_round_trips() -> None:
    async def conversation(session: ClientSession, client: SubprocessClient) -> None:
        assert await session.connect() is Era.MODERN
        assert session.protocol_version == LATEST_MODERN_VERSION
        result = await session.call_tool("test_input_required_result_multi_round")
        assert text_of(result) == '{"name":"Ada"} likes {"color":"Ada"}'
        retries = [
            line
            for line in client.lines
            if line.get("result", {}).get("resultType") == "input_required"
        ]
        assert len(retries) == 2  # the HMAC-sealed state went to the client and back
        with pytest.raises(McpError) as raised:
            await session.read_resource("test://nowhere")
        assert raised.value.code == -32602

    assert run(conversation) == 0


def test_a_cancelled_request_gets_no_answer_and_the_server_carries_on() -> None:
    async def conversation(session: ClientSession, client: SubprocessClient) -> None:
        await session.connect("legacy")
        connection = session.connection
        request_id, data = connection.send_request(
            "tools/call", types.CallToolRequestParams(name="test_reconnection")
        )
        await client.send(data)
        cancel = connection.cancel(request_id, "changed my mind")
        assert cancel is not None
        await client.send(cancel)
        # The server is still there, and answers the next request.
        await session.ping()
        await asyncio.sleep(0.5)  # longer than the tool's pause
        answered = [line for line in client.lines if line.get("id") == request_id]
        assert answered == []

    assert run(conversation) == 0


def test_an_oversized_or_broken_line_is_answered_and_survived() -> None:
    async def conversation(session: ClientSession, client: SubprocessClient) -> None:
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":')
        await session.connect("legacy")
        errors = [line for line in client.lines if line.get("error", {}).get("code") == -32700]
        assert len(errors) == 1
        # The id could not be read: it is left out (optional since 2025-11-25).
        assert "id" not in errors[0]

    assert run(conversation) == 0
