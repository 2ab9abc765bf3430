"""`serve_stdio` as a real subprocess, spoken to line by line.

The client side here is deliberately raw (bytes on the pipes), so that the server is
tested on what it writes, whatever our client would do: broken and oversized lines,
stray prints, cancellation, end of input in the middle of a request, a thousand
pipelined calls, and a handler that waits on the client while others queue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from mcpcore.framing import LineFramer
from tests.transports.trio_helpers import trio_test

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "transports" / "server_fixture.py"
EVERYTHING = ROOT / "examples" / "everything.py"
#: Seconds any one test may take, start to exit.
TEST_TIMEOUT = 30.0
#: Seconds to wait for any one line from the server.
LINE_TIMEOUT = 10.0
#: The `_meta` that makes a request a 2026-07-28 one.
MODERN_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


trio_run = trio_test(timeout=TEST_TIMEOUT)


class RawPeer:
    """The client end of a stdio server's pipes: lines out, JSON values in."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._framer = LineFramer()
        self._lines: list[bytes] = []
        self.stderr = ""  # what `wait_for_stderr` read

    async def send_line(self, data: bytes) -> None:
        await self._stdin.send_all(data + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_line(json.dumps(message).encode())

    async def receive(self) -> dict[str, Any]:
        with trio.fail_after(LINE_TIMEOUT):
            while not self._lines:
                chunk = await self._stdout.receive_some(65536)
                assert chunk, "the server closed stdout"
                for line in self._framer.feed(chunk):
                    assert isinstance(line, bytes)
                    self._lines.append(line)
        value = json.loads(self._lines.pop(0))
        assert isinstance(value, dict)
        return value

    async def rest(self) -> bytes:
        """Everything the server writes until it closes stdout."""
        data = b"".join(line + b"\n" for line in self._lines)
        self._lines.clear()
        while chunk := await self._stdout.receive_some(65536):
            data += chunk
        return data

    async def handshake(self) -> None:
        await self.send(
            request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"sampling": {}},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            )
        )
        answer = await self.receive()
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def close_stdin(self) -> None:
        await self._stdin.aclose()

    async def wait_for_stderr(self, text: str) -> str:
        """Read stderr until ``text`` shows up; everything read so far."""
        assert self.process.stderr is not None
        with trio.fail_after(LINE_TIMEOUT):
            while text not in self.stderr:
                chunk = await self.process.stderr.receive_some(65536)
                assert chunk, f"stderr ended before {text!r}"
                self.stderr += chunk.decode()
        return self.stderr


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})


@asynccontextmanager
async def running(script: Path, *options: str) -> AsyncIterator[RawPeer]:
    """A server subprocess, killed and reaped however the test ends."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(script), *options],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield RawPeer(process)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    await pipe.aclose()


async def stop(peer: RawPeer) -> tuple[int, str]:
    """Close stdin, wait for the exit; the exit status and everything on stderr."""
    await peer.close_stdin()
    assert peer.process.stderr is not None
    stderr = peer.stderr.encode()
    with trio.fail_after(LINE_TIMEOUT):
        while chunk := await peer.process.stderr.receive_some(65536):
            stderr += chunk
        code = await peer.process.wait()
    return code, stderr.decode()


# -- garbage on the wire ------------------------------------------------------------


@trio_run
async def test_broken_lines_are_answered_and_the_stream_goes_on() -> None:
    async with running(EVERYTHING, "--transport", "stdio") as peer:
        await peer.send_line(b'{"jsonrpc":"2.0","id":1,"method":')
        assert (await peer.receive())["error"]["code"] == -32700
        await peer.send_line(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":"\xff\xfe"}')
        assert (await peer.receive())["error"]["code"] == -32700
        await peer.send_line(b"[]")
        assert (await peer.receive())["error"]["code"] == -32600
        await peer.handshake()
        await peer.send(call(3, "test_simple_text"))
        answer = await peer.receive()
        assert answer["id"] == 3
        assert answer["result"]["content"][0]["text"].startswith("This is a simple")
        code, _ = await stop(peer)
        assert code == 0


@trio_run
async def test_an_oversized_line_is_refused_and_the_next_one_served() -> None:
    async with running(EVERYTHING, "--transport", "stdio") as peer:
        await peer.handshake()
        huge = json.dumps(call(1, "test_simple_text", padding="x" * (17 * 1024 * 1024)))
        await peer.send_line(huge.encode())
        refusal = await peer.receive()
        assert refusal["error"]["code"] == -32600
        assert "too large" in refusal["error"]["message"]
        assert "id" not in refusal  # the id was in the dropped line
        await peer.send(call(2, "test_simple_text"))
        assert (await peer.receive())["id"] == 2


@trio_run
async def test_prints_go_to_stderr_and_never_into_the_protocol() -> None:
    async with running(FIXTURE) as peer:
        await peer.handshake()
        await peer.send(call(1, "shout", text="hello"))
        answer = await peer.receive()
        assert answer["result"]["content"][0]["text"] == "HELLO"
        code, stderr = await stop(peer)
        assert code == 0
        assert "print: hello" in stderr
        assert "fd1: hello" in stderr
        assert await peer.rest() == b""  # nothing else ever came on stdout


# -- cancellation and the end of input ------------------------------------------------


@trio_run
async def test_a_cancelled_request_stops_its_handler_and_gets_no_answer() -> None:
    async with running(FIXTURE) as peer:
        await peer.handshake()
        await peer.send(call(1, "wait_forever"))
        await peer.wait_for_stderr("started 1")
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "changed my mind"},
            }
        )
        await peer.send(request(2, "ping"))
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        code, stderr = await stop(peer)
        assert code == 0
        assert "started 1" in stderr
        assert "cancelled 1" in stderr
        assert await peer.rest() == b""  # no answer to request 1, ever


@trio_run
async def test_end_of_input_mid_request_lets_it_finish_then_exits() -> None:
    async with running(FIXTURE, "--grace", "5") as peer:
        await peer.handshake()
        await peer.send(call(1, "slow", seconds=0.2))
        code, _ = await stop(peer)
        assert code == 0
        [answer] = [json.loads(line) for line in (await peer.rest()).splitlines()]
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == "slept 0.2"


@trio_run
async def test_end_of_input_cancels_what_outlives_the_grace() -> None:
    async with running(FIXTURE, "--grace", "0.2") as peer:
        await peer.handshake()
        await peer.send(call(1, "wait_forever"))
        await peer.wait_for_stderr("started 1")
        with trio.fail_after(5):  # the grace, not the handler, decides when we exit
            code, stderr = await stop(peer)
        assert code == 0
        assert "cancelled 1" in stderr
        assert await peer.rest() == b""


# -- load and backpressure ------------------------------------------------------------


@trio_run
async def test_a_thousand_pipelined_calls_are_each_answered_once() -> None:
    async with running(EVERYTHING, "--transport", "stdio") as peer:
        await peer.handshake()
        burst = b"".join(
            json.dumps(call(n, "test_simple_text")).encode() + b"\n" for n in range(1, 1001)
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer._stdin.send_all, burst)
            answers = [await peer.receive() for _ in range(1000)]
        assert sorted(answer["id"] for answer in answers) == list(range(1, 1001))
        assert all("result" in answer for answer in answers)


@trio_run
async def test_a_handler_waiting_on_the_client_does_not_block_the_reader() -> None:
    # One handler slot only. The first call waits for the client's model; while it
    # waits, its slot is free, so the second call runs and the answer is read.
    async with running(FIXTURE, "--max-handlers", "1") as peer:
        await peer.handshake()
        await peer.send(call(1, "ask_model"))
        question = await peer.receive()
        assert question["method"] == "sampling/createMessage"
        await peer.send(call(2, "shout", text="meanwhile"))
        assert (await peer.receive())["id"] == 2
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "Paris"},
                    "model": "m",
                },
            }
        )
        answer = await peer.receive()
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == "Paris"


@trio_run
async def test_cancelling_a_tool_cancels_its_question_to_the_client() -> None:
    async with running(FIXTURE) as peer:
        await peer.handshake()
        await peer.send(call(1, "ask_model"))
        question = await peer.receive()
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1},
            }
        )
        # The server gives up its own request: cancellation both ways.
        cancelled = await peer.receive()
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"]["requestId"] == question["id"]
        await peer.send(request(2, "ping"))
        assert (await peer.receive())["id"] == 2


@trio_run
async def test_both_eras_are_served_the_first_request_deciding() -> None:
    async with running(EVERYTHING, "--transport", "stdio") as modern:
        await modern.send(
            request(1, "tools/call", {"name": "test_simple_text", "_meta": MODERN_ENVELOPE})
        )
        answer = await modern.receive()
        assert answer["result"]["resultType"] == "complete"
        await modern.send(
            request(
                2,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            )
        )
        assert (await modern.receive())["error"]["code"] == -32022


def test_stdin_and_stdout_are_left_blocking_for_whoever_shares_them() -> None:
    # The server's stdin and stdout are open files shared with us (a terminal, say);
    # trio makes them non-blocking while serving and restores them when its streams
    # close, so the server must close them on every way out.
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    try:
        server = subprocess.Popen(
            [sys.executable, str(EVERYTHING), "--transport", "stdio"],
            stdin=stdin_read,
            stdout=stdout_write,
            stderr=subprocess.DEVNULL,
        )
        os.close(stdin_write)  # end of input at once: serve, then exit
        assert server.wait(timeout=LINE_TIMEOUT) == 0
        assert os.get_blocking(stdin_read)
        assert os.get_blocking(stdout_write)
    finally:
        for fd in (stdin_read, stdout_read, stdout_write):
            os.close(fd)


def test_stdin_may_be_a_regular_file(tmp_path: Path) -> None:
    # `server < requests.jsonl`: a file cannot be polled (epoll refuses it), so the
    # reader must only ever wait on a pipe, never on a file that merely ran short.
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"".join(
            json.dumps(message).encode() + b"\n"
            for message in (
                request(1, "server/discover", {"_meta": MODERN_ENVELOPE}),
                request(2, "tools/call", {"name": "test_simple_text", "_meta": MODERN_ENVELOPE}),
            )
        )
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, str(EVERYTHING), "--transport", "stdio"],
            stdin=stdin,
            capture_output=True,
            timeout=LINE_TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["resultType"] == "complete"
    assert answers[2]["result"]["content"][0]["type"] == "text"
