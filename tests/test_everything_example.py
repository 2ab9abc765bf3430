"""``examples/everything.py`` run as a person runs it: where it serves, options, Ctrl+C."""

from __future__ import annotations

import re
import signal
import subprocess
from contextlib import AbstractContextManager

import pytest
import trio

from tests.cli.folder_tree import read_line
from tests.cli_helpers import START_TIMEOUT, route_address, started, stopped_output
from tests.transports.trio_helpers import PYTHON, REPOSITORY
from transports import open_http_client, open_websocket_client

EVERYTHING = str(REPOSITORY / "examples" / "everything.py")


def everything(*arguments: str) -> AbstractContextManager[subprocess.Popen[str]]:
    """``python examples/everything.py ARGUMENTS`` as a process."""
    return started([PYTHON, EVERYTHING, *arguments])


async def call_simple_text(url: str) -> str:
    opened = open_http_client(url) if url.startswith("http") else open_websocket_client(url)
    async with opened as client:
        result = await client.call_tool("test_simple_text")
        return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("transport", "scheme", "path"), [("http", "http", "/mcp"), ("ws", "ws", "/ws")]
)
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_it_prints_where_it_serves_and_stops_cleanly(
    transport: str, scheme: str, path: str, stop: signal.Signals
) -> None:
    with everything("--transport", transport, "--port", "0") as process:
        assert process.stdout is not None
        line = read_line(process, process.stdout)
        prefix = f"Serving the everything server at {scheme}://127.0.0.1:"
        assert line.startswith(prefix), line
        url = line.removeprefix("Serving the everything server at ").strip()
        assert url.endswith(path)
        assert "test" in trio.run(call_simple_text, url)
        process.send_signal(stop)
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 0
    assert out == ""
    assert err == ""  # (no traceback, nothing)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_over_stdio_it_prints_nothing_but_the_protocol_and_stops_cleanly(
    stop: signal.Signals,
) -> None:
    with everything("--transport", "stdio") as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        process.stdin.flush()
        assert read_line(process, process.stdout).startswith('{"jsonrpc":"2.0","id":1')
        process.send_signal(stop)
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 0
    assert out == ""
    assert err == ""


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("--port", "99999", "argument --port: not a port: '99999'"),
        ("--port", "-1", "argument --port: not a port: '-1'"),
        ("--host", "nowhere.invalid", "argument --host: can't resolve 'nowhere.invalid'"),
        ("--allow-host", "a/b", "argument --allow-host: not a host: 'a/b'"),
    ],
)
def test_a_bad_address_option_is_a_one_line_error(option: str, value: str, error: str) -> None:
    with everything("--transport", "http", option, value) as process:
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 2
    assert out == ""
    assert err.splitlines()[-1].startswith(f"everything.py: error: {error}")
    assert "Traceback" not in err


def test_on_every_interface_it_prints_each_url_and_warns_without_a_token() -> None:
    with everything("--transport", "http", "--port", "0", "--host", "0.0.0.0") as process:
        assert process.stdout is not None
        assert process.stderr is not None
        line = read_line(process, process.stdout)
        assert line.startswith("Serving the everything server at http://127.0.0.1:")
        warning = read_line(process, process.stderr)
        assert warning.startswith("warning: listening on every interface, beyond this machine")
        process.send_signal(signal.SIGINT)
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 0
    port = line.strip().rsplit(":", 1)[1].removesuffix("/mcp")
    others = [f"  and at http://{address}:{port}/mcp" for address in [route_address()] if address]
    assert set(others) <= set(out.splitlines())
    assert all(other.startswith("  and at http://") for other in out.splitlines())
    assert err == ""


def test_verbose_logs_each_request_to_stderr() -> None:
    with everything("--transport", "stdio", "-v") as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        process.stdin.flush()
        read_line(process, process.stdout)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert out == ""
    assert re.fullmatch(r"everything\.py: request 1 ping: ok in \d+\.\d ms\n", err), err
