"""The stdio client's process handling, against `client_fixture_server.py`.

Crashes, a mute server, stderr, the shutdown ladder (stdin closed, SIGTERM, SIGKILL),
cancellation seen from the server's side, progress that resets the timeout.
"""

from __future__ import annotations

import signal
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
import trio
import trio.testing

from mcpcore import types
from mcpcore.client import ConnectMode
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from transports import (
    ConnectionClosedError,
    ServerExitedError,
    StdioClient,
    open_stdio_client,
)

FIXTURE = str(REPOSITORY / "tests" / "transports" / "client_fixture_server.py")
#: The shutdown grace of the tests that walk the ladder to SIGTERM and SIGKILL.
SHORT_GRACE = 0.2


def fixture(
    behaviour: str = "serve", *, mode: ConnectMode = "legacy", **options: Any
) -> AbstractAsyncContextManager[StdioClient]:
    options.setdefault("timeout", 10)
    return open_stdio_client(PYTHON, [FIXTURE, "--behaviour", behaviour], mode=mode, **options)


def text_of(result: Any) -> str:
    [block] = result.content
    return str(block.text)


# ---------------------------------------------------------------- a dying server


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@trio_test
async def test_a_crash_fails_every_pending_call_with_the_exit_status(mode: ConnectMode) -> None:
    failures: list[BaseException] = []
    async with fixture(mode=mode, stderr="capture") as client:

        async def sleeper(tag: str) -> None:
            with pytest.raises(ServerExitedError) as raised:
                await client.call_tool("sleep", {"seconds": 30, "tag": tag})
            failures.append(raised.value)

        async with trio.open_nursery() as nursery:
            for tag in "abc":
                nursery.start_soon(sleeper, tag)
            await trio.testing.wait_all_tasks_blocked()  # the three calls are pending
            assert len(client.session.connection.pending_requests) == 3
            with pytest.raises(ServerExitedError) as crashed:
                await client.call_tool("crash", {"code": 3})
        # (At once, not after the calls' timeouts: those would be TimeoutErrors.)
        failures.append(crashed.value)
        assert len(failures) == 4
        for failure in failures:
            assert isinstance(failure, ServerExitedError)
            assert isinstance(failure, ConnectionError)
            assert failure.returncode == 3
            assert failure.stderr is not None
            assert b"crashing with 3" in failure.stderr
        assert "exited with status 3" in str(crashed.value)
        assert client.returncode == 3
        assert client.closed_reason is crashed.value
        # Later calls fail the same way, at once.
        with pytest.raises(ServerExitedError):
            await client.call_tool("say", {"text": "anyone?"})


@trio_test
async def test_a_crash_ends_a_listen_stream_with_the_exit_status() -> None:
    async with fixture(mode="auto") as client:
        wanted = types.SubscriptionFilter(tools_list_changed=True)
        async with client.listen(wanted) as stream:
            with pytest.raises(ServerExitedError):
                await client.call_tool("crash", {"code": 4})
            with pytest.raises(ServerExitedError) as raised:
                await anext(stream)
            assert raised.value.returncode == 4
            assert stream.ended


@trio_test
async def test_a_server_that_exits_before_the_handshake_is_reported() -> None:
    with pytest.raises(ServerExitedError) as raised:
        async with fixture("exit-at-once", stderr="capture"):
            pass  # pragma: no cover
    assert raised.value.returncode == 5
    assert raised.value.stderr == b"not today\n"


@trio_test
async def test_a_server_that_closes_stdout_but_lives_on_is_a_closed_connection() -> None:
    with pytest.raises(ConnectionClosedError) as raised:
        async with fixture("close-stdout"):
            pass  # pragma: no cover
    assert not isinstance(raised.value, ServerExitedError)
    assert raised.value.reason == "the server closed its stdout"


@trio_test
async def test_an_unanswered_initialize_times_out_and_closes_the_connection() -> None:
    # The timeout, then the client closes the silent server's stdin and the server exits
    # on its EOF: with no grace before SIGTERM to speak of (an hour), the test would
    # time out if the client failed to close stdin.
    with pytest.raises(TimeoutError):
        async with fixture("silent", timeout=0.3, shutdown_grace=3600):
            pass  # pragma: no cover


@trio_test
async def test_closing_fails_pending_calls_and_is_idempotent() -> None:
    async with fixture() as client:
        async with trio.open_nursery() as nursery:

            async def pending() -> None:
                with pytest.raises(ConnectionClosedError) as raised:
                    await client.call_tool("sleep", {"seconds": 30})
                assert raised.value.reason == "the client closed the connection"

            nursery.start_soon(pending)
            await trio.testing.wait_all_tasks_blocked()
            await client.aclose()
        await client.aclose()
        with pytest.raises(ConnectionClosedError):
            await client.list_tools()
        assert client.returncode == 0  # stdin closed: the server exited by itself


# ----------------------------------------------------------------- shutdown


@trio_test
async def test_a_server_that_ignores_stdin_eof_gets_sigterm() -> None:
    async with fixture("ignore-eof", shutdown_grace=SHORT_GRACE) as client:
        await client.ping()
    assert client.returncode == -signal.SIGTERM


@trio_test
async def test_a_server_that_ignores_sigterm_gets_sigkill() -> None:
    async with fixture("ignore-sigterm", shutdown_grace=SHORT_GRACE) as client:
        await client.ping()
    assert client.returncode == -signal.SIGKILL


@trio_test
async def test_an_exception_in_the_block_comes_out_as_itself() -> None:
    clients: list[StdioClient] = []

    async def failing_block() -> None:
        async with fixture() as client:
            clients.append(client)
            await client.ping()
            raise KeyError("mine")

    with pytest.raises(KeyError, match="mine") as raised:
        await failing_block()
    assert raised.value.__context__ is None  # not "during handling of" an exception group
    assert clients[0].returncode == 0


# ------------------------------------------------------------------- stderr


@trio_test
async def test_stderr_lines_go_to_a_callable() -> None:
    lines: list[bytes] = []
    arrived = trio.Event()

    def on_line(line: bytes) -> None:
        lines.append(line)
        if line == b"hello there":
            arrived.set()

    async with fixture(stderr=on_line) as client:
        assert text_of(await client.call_tool("say", {"text": "hello there"})) == "said"
        await arrived.wait()
        assert b"hello there\n" in client.stderr
    assert b"hello there" in lines


# --------------------------------------------------- cancelling, on the wire


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@trio_test
async def test_timeouts_and_cancellations_send_notifications_cancelled(mode: ConnectMode) -> None:
    async with fixture(mode=mode) as client:
        with pytest.raises(TimeoutError):
            await client.call_tool("sleep", {"seconds": 30, "tag": "timed-out"}, timeout=0.1)
        with trio.move_on_after(0.1):
            await client.call_tool("sleep", {"seconds": 30, "tag": "cancelled"})
        # The server saw both cancellations (it stops the handler: "receivers SHOULD
        # stop work"), and the connection is fine.
        for tag in ("timed-out", "cancelled"):
            answer = await client.call_tool("was_cancelled", {"tag": tag})
            assert text_of(answer) == "yes"
        answer = await client.call_tool("was_cancelled", {"tag": "never-ran", "wait": 0.1})
        assert text_of(answer) == "no"


@trio_test
async def test_a_failing_progress_callback_fails_the_call_and_cancels_it() -> None:
    def explode(value: float, total: float | None, message: str | None) -> None:
        raise ValueError("bad callback")

    async with fixture() as client:
        with pytest.raises(ValueError, match="bad callback"):
            await client.call_tool(
                "steps", {"count": 50, "interval": 0.05}, progress=explode, timeout=10
            )
        assert client.session.connection.pending_requests == ()
        await client.ping()


# ------------------------------------------------------------ progress and timeouts


@trio_test
async def test_progress_resets_the_timeout_when_asked() -> None:
    values: list[float] = []
    async with fixture() as client:
        # Six steps 0.1 s apart: 0.6 s in all, never more than 0.1 s without news.
        arguments = {"count": 6, "interval": 0.1}
        with pytest.raises(TimeoutError):
            await client.call_tool("steps", arguments, timeout=0.3)
        result = await client.call_tool(
            "steps",
            arguments,
            timeout=0.3,
            reset_timeout_on_progress=True,
            progress=lambda value, total, message: values.append(value),
        )
        assert text_of(result) == "6 steps"
        assert values == [1, 2, 3, 4, 5, 6]


@trio_test
async def test_progress_never_stretches_a_call_past_the_hard_maximum() -> None:
    # Progress every 0.05 s keeps restarting a 1 s timeout: only the hard maximum can
    # end the call before its 50 steps are through.
    values: list[float] = []
    async with fixture(max_total_timeout=0.35) as client:
        with pytest.raises(TimeoutError):
            await client.call_tool(
                "steps",
                {"count": 50, "interval": 0.05},
                timeout=1,
                reset_timeout_on_progress=True,
                progress=lambda value, total, message: values.append(value),
            )
        assert len(values) < 50
        assert client.session.connection.pending_requests == ()  # cancelled on the wire


# ------------------------------------------------------- what a server writes


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@trio_test
async def test_a_tool_printing_to_stdout_corrupts_nothing(mode: ConnectMode) -> None:
    async with fixture(mode=mode, stderr="capture") as client:
        for _ in range(3):
            assert text_of(await client.call_tool("shout", {"text": "LOUD"})) == "shouted"
        await client.list_tools()
        assert client.oversized_messages == 0
    # Both writes went to the server's stderr instead (six lines of it).
    assert client.stderr.count(b"LOUD\n") == 6


@trio_test
async def test_garbage_and_an_oversized_line_from_the_server_are_survived() -> None:
    async with fixture("noisy", mode="auto", max_message_size=64 * 1024) as client:
        assert client.era is not None
        assert text_of(await client.call_tool("say", {"text": "still here"})) == "said"
        assert client.oversized_messages == 1
        assert client.closed_reason is None
