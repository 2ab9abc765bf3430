"""A flood of partial messages costs a real server bounded memory, given back on close.

Issue 15, defect 3, measured on a real server process (`partial_flood_server`, HTTP and
WebSocket in one process, one budget): many connections each send most of a large
message and stop (HTTP bodies of the full `transports.MAX_BODY_SIZE`, WebSocket text
frames of 15 MiB). The server's resident memory (``VmRSS``) may grow by at most the
process's budget (`transports.MAX_PARTIAL_BYTES`) plus every connection's floor
(`transports.PARTIAL_FLOOR`) and some slack; the connections past the budget are
refused (413, 1009); a small request is still answered meanwhile; and once the
connections close, the memory goes back to near where it started, and nothing of the
budget is held. Counts and memory thresholds only: the polling waits are bounded in
number, and nothing asserts a duration.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from dataclasses import dataclass
from typing import Final

import trio

from tests.transports.http_raw import RawConnection, modern_body, modern_headers
from tests.transports.trio_helpers import PYTHON, REPOSITORY
from tests.transports.ws_raw import modern_request
from transports import MAX_BODY_SIZE, MAX_PARTIAL_BYTES, PARTIAL_FLOOR

SERVER: Final = REPOSITORY / "tests" / "transports" / "partial_flood_server.py"
#: HTTP connections, each announcing a body of the full 4 MiB (192 MiB in all).
HTTP_FLOOD: Final = 48
#: WebSocket connections, each sending most of one 15 MiB text frame (120 MiB in all).
WS_FLOOD: Final = 8
WS_MESSAGE: Final = 15 * 1024 * 1024
#: Bytes written per send: the senders interleave.
CHUNK: Final = 256 * 1024
MIB: Final = 1024 * 1024
#: What the flood may cost beyond the budget and the floors: each connection's tasks,
#: h11 and wsproto state, the reads in flight, and the allocator's rounding.
PEAK_SLACK: Final = 24 * MIB
#: How far above its baseline the server may stay once every connection closed.
AFTER_SLACK: Final = 16 * MIB
#: Memory samples taken while waiting for the server to read, or to give back (each
#: after `POLL_INTERVAL` seconds): a bound on the waiting, not a measure of speed.
MAX_POLLS: Final = 600
POLL_INTERVAL: Final = 0.05
#: Seconds the whole test may take (a hang fails instead of blocking the suite).
TEST_BOUND: Final = 120.0


def rss(pid: int) -> int:
    """The resident memory of process ``pid``, in bytes (``VmRSS``)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@dataclass
class Flooder:
    """One flooding connection: what it sent, and whether the server refused it."""

    sent: int = 0
    refused: bool = False
    done: bool = False


async def flood_http(port: int, flooder: Flooder) -> None:
    """Announce a 4 MiB body and send all of it but its last byte; hold on."""
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"MCP-Protocol-Version: 2026-07-28\r\nContent-Length: {MAX_BODY_SIZE}\r\n\r\n"
        )
        await stream.send_all(head.encode())
        await _send_unless_refused(stream, flooder, MAX_BODY_SIZE - 1, b"[", b"HTTP/1.1 413 ")


async def open_websocket(port: int) -> trio.SocketStream:
    """A connection to ``serve_websocket`` with its opening handshake done."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    handshake = (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
    )
    await stream.send_all(handshake.encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += await stream.receive_some(4096)
    assert answer.startswith(b"HTTP/1.1 101 "), answer
    return stream


def text_frame_head(size: int) -> bytes:
    """The head of one final, masked text frame of ``size`` bytes (a key of zeros)."""
    return struct.pack("!BBQ", 0x81, 0x80 | 127, size) + bytes(4)


async def flood_websocket(port: int, flooder: Flooder) -> None:
    """Send all but the last byte of a 15 MiB text frame; hold on."""
    async with await open_websocket(port) as stream:
        await stream.send_all(text_frame_head(WS_MESSAGE))
        # (A refusal is our Close frame: 1009.)
        await _send_unless_refused(stream, flooder, WS_MESSAGE - 1, b"a", b"\x88")


async def _send_unless_refused(
    stream: trio.SocketStream, flooder: Flooder, size: int, filler: bytes, refusal: bytes
) -> None:
    """Send ``size`` bytes of ``filler`` until the server answers (a refusal); then hold."""
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            data = await stream.receive_some(4096)
            assert data.startswith(refusal), data[:40]
            flooder.refused = True
            sending.cancel()

        nursery.start_soon(watch)
        with trio.CancelScope() as sending:
            chunk = filler * CHUNK
            try:
                while flooder.sent < size:
                    piece = min(CHUNK, size - flooder.sent)
                    await stream.send_all(chunk[:piece])
                    flooder.sent += piece
            except trio.BrokenResourceError:
                flooder.refused = True
        flooder.done = True
        await trio.sleep_forever()  # (the connection stays open until the test closes it)


async def budget_held(port: int) -> int:
    """Ask the server (a small request, answered whatever the flood) what it holds."""
    async with await RawConnection.open(port) as http:
        body = modern_body("tools/call", {"name": "partial_budget_held", "arguments": {}})
        response = await http.request(
            headers=modern_headers("tools/call", "partial_budget_held"), body=body
        )
        assert response.status == 200, response
        return int(json.loads(response.body)["result"]["content"][0]["text"])


async def warm_up(http_port: int, ws_port: int) -> None:
    """A small message each way, so that what they import is in the baseline."""
    assert await budget_held(http_port) == 0
    async with await open_websocket(ws_port) as stream:
        ping = json.dumps(modern_request(1, "tools/list")).encode()
        await stream.send_all(struct.pack("!BBH", 0x81, 0x80 | 126, len(ping)) + bytes(4) + ping)
        assert (await stream.receive_some(65536))[:1] == b"\x81"  # the answer's text frame


async def measure(pid: int, http_port: int, ws_port: int) -> dict[str, int]:
    """Flood, read the peak, close, read what is left; the numbers, in bytes."""
    await warm_up(http_port, ws_port)
    for _ in range(MAX_POLLS):  # (the warm-up connection's memory goes back first)
        if await budget_held(http_port) == 0:
            break
        await trio.sleep(POLL_INTERVAL)
    baseline = peak = rss(pid)
    flooders = [Flooder() for _ in range(HTTP_FLOOD + WS_FLOOD)]
    async with trio.open_nursery() as nursery:
        for index, flooder in enumerate(flooders):
            if index < HTTP_FLOOD:
                nursery.start_soon(flood_http, http_port, flooder)
            else:
                nursery.start_soon(flood_websocket, ws_port, flooder)
        for _ in range(MAX_POLLS):
            await trio.sleep(POLL_INTERVAL)
            peak = max(peak, rss(pid))
            # Until the server has read what the connections it did not refuse sent.
            pending = sum(flooder.sent for flooder in flooders if not flooder.refused)
            done = all(flooder.done for flooder in flooders)
            if done and peak - baseline >= 0.9 * pending:
                break
        held = await budget_held(http_port)  # a small request during the flood
        nursery.cancel_scope.cancel()  # every flooding connection closes
    after = rss(pid)
    for _ in range(MAX_POLLS):
        if after - baseline <= AFTER_SLACK and await budget_held(http_port) == 0:
            break
        await trio.sleep(POLL_INTERVAL)
        after = rss(pid)
    return {
        "baseline": baseline,
        "peak": peak,
        "after": after,
        "held_during": held,
        "held_after": await budget_held(http_port),
        "refused_http": sum(flooder.refused for flooder in flooders[:HTTP_FLOOD]),
        "refused_ws": sum(flooder.refused for flooder in flooders[HTTP_FLOOD:]),
    }


def test_a_flood_of_partial_messages_is_bounded_and_given_back_when_it_closes() -> None:
    with subprocess.Popen(
        [PYTHON, str(SERVER)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    ) as process:
        try:
            assert process.stdout is not None
            http_port, ws_port = map(int, process.stdout.readline().split())

            async def bounded() -> dict[str, int]:
                with trio.fail_after(TEST_BOUND):
                    return await measure(process.pid, http_port, ws_port)

            numbers = trio.run(bounded)
        finally:
            process.kill()
    report = ", ".join(
        f"{name} {value / MIB:.1f} MiB"
        if name in ("baseline", "peak", "after")
        else f"{name} {value}"
        for name, value in numbers.items()
    )
    print(f"\npartial-message flood: {report}", file=sys.stderr)
    floors = (HTTP_FLOOD + WS_FLOOD) * PARTIAL_FLOOR
    assert numbers["peak"] - numbers["baseline"] <= MAX_PARTIAL_BYTES + floors + PEAK_SLACK, report
    assert numbers["after"] - numbers["baseline"] <= AFTER_SLACK, report
    assert 0 < numbers["held_during"] <= MAX_PARTIAL_BYTES, report
    assert numbers["held_after"] == 0, report
    assert numbers["refused_http"] + numbers["refused_ws"] > 0, report
