"""``mcpcore serve`` as a person runs it: help, defaults, options, errors, logs, Ctrl+C."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio

from mcpcore import jsonrpc, types
from mcpcore.client import McpError
from mcpcore_cli.cli import main
from mcpcore_cli.folder.command import add_serve_command, parse_size
from mcpcore_cli.folder.limit_options import ServeLimits, serve_limits
from tests.cli.folder_tree import MCPCORE, START_TIMEOUT, make_tree, read_line
from tests.cli_helpers import route_address, started, stopped_output
from transports import open_http_client, open_stdio_client, open_websocket_client


@contextmanager
def running(*arguments: str, cwd: Path | None = None) -> Iterator[subprocess.Popen[str]]:
    """``mcpcore serve ...`` as a process (killed on exit if still running)."""
    process = subprocess.Popen(
        [MCPCORE, "serve", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=START_TIMEOUT)


def test_serve_help_shows_every_option_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: mcpcore serve")
    for option in (
        "--transport {stdio,http,ws}",
        "--stdio",
        "--host",
        "--port",
        "--allow-host",
        "--token",
        "MCPCORE_TOKEN",
        "--include-hidden",
        "--max-file-size",
    ):
        assert option in shown
    assert "examples:" in shown
    assert "mcpcore serve . --stdio" in shown
    assert "npx @modelcontextprotocol/inspector" in shown


def test_the_command_lists_serve(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "serve" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("10MiB", 10 << 20),
        ("512k", 512_000),
        ("1.5 GB", 1_500_000_000),
        ("300", 300),
        ("2KiB", 2048),
    ],
)
def test_sizes_are_read_the_way_people_write_them(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["ten", "10 parsecs", "-1", "0", ""])
def test_a_size_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_size(text)


@pytest.mark.parametrize("what", ["missing", "a file"])
def test_a_folder_that_can_not_be_served_is_a_clear_error(tmp_path: Path, what: str) -> None:
    (tmp_path / "file.txt").write_text("x")
    path = tmp_path / ("nothing" if what == "missing" else "file.txt")
    with running(str(path)) as process:
        out, err = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 2
    assert out == ""
    reason = "No such file or directory" if what == "missing" else "not a folder"
    assert err.strip() == f"mcpcore serve: can't serve {path}: {reason}"


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_by_default_this_folder_is_served_over_http_until_stopped(
    tmp_path: Path, stop: signal.Signals
) -> None:
    root = make_tree(tmp_path)
    with running("--port", "0", cwd=root) as process:
        assert process.stdout is not None
        serving = read_line(process, process.stdout)
        hint = process.stdout.readline()
        prefix = f"Serving {root} at http://127.0.0.1:"
        assert serving.startswith(prefix), serving
        url = serving[len("Serving ") + len(str(root)) + len(" at ") :].strip()
        assert url.endswith("/mcp")
        assert hint.startswith("Connect a client: npx @modelcontextprotocol/inspector")
        assert url in hint

        async def list_files() -> list[str]:
            async with open_http_client(url, timeout=10) as client:
                return [resource.name async for resource in client.iter_resources()]

        assert "notes.md" in trio.run(list_files)
        process.send_signal(stop)
        out, err = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 0
    assert out == ""
    assert err.splitlines() == [
        f"mcpcore serve: serving 5 files of {root}",
        "mcpcore serve: stopped",
    ]


def test_the_options_reach_the_server(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "big.txt").write_text("x" * 2000)
    with running(
        str(root), "--port", "0", "--include-hidden", "--max-file-size", "1KiB"
    ) as process:
        assert process.stdout is not None
        url = read_line(process, process.stdout).rsplit(" at ", 1)[1].strip()

        async def check() -> None:
            async with open_http_client(url, timeout=10) as client:
                listed = {resource.name: resource async for resource in client.iter_resources()}
                assert ".env" in listed
                big = listed["big.txt"].uri
                with pytest.raises(McpError) as large:
                    await client.read_resource(big)
                assert large.value.code == jsonrpc.INVALID_PARAMS
                assert "limit of 1 KiB" in large.value.message

        trio.run(check)


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with running(str(tmp_path), "--port", str(port)) as process:
            out, err = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 1
    assert out == ""
    assert f"mcpcore serve: port {port} is already in use: pick another with --port" in err
    assert "Traceback" not in err


def test_over_websocket_the_url_is_a_ws_one(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    with running(str(root), "--transport", "ws", "--port", "0") as process:
        assert process.stdout is not None
        url = read_line(process, process.stdout).rsplit(" at ", 1)[1].strip()
        assert url.startswith("ws://127.0.0.1:")

        async def read_notes() -> str:
            async with open_websocket_client(url, timeout=10) as client:
                read = await client.read_resource(f"file://{root}/notes.md")
                [contents] = read.contents
                assert isinstance(contents, types.TextResourceContents)
                return contents.text

        assert trio.run(read_notes).startswith("# Notes")


def test_over_stdio_logs_go_to_stderr_and_stdout_is_the_protocol(tmp_path: Path) -> None:
    # --stdio: the spelling for launchers that take --transport for themselves.
    root = make_tree(tmp_path)

    async def session() -> bytes:
        async with open_stdio_client(
            MCPCORE, ["serve", str(root), "--stdio"], stderr="capture", timeout=10
        ) as client:
            names = [resource.name async for resource in client.iter_resources()]
            assert "notes.md" in names
            assert client.oversized_messages == 0
            return client.stderr

    logged = trio.run(session)
    assert logged.decode().startswith(f"mcpcore serve: serving 5 files of {root}")


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("--port", "99999", "argument --port: not a port: '99999' (0 to 65535"),
        ("--port", "65536", "argument --port: not a port: '65536' (0 to 65535"),
        ("--port", "-1", "argument --port: not a port: '-1' (0 to 65535"),
        ("--port", "http", "argument --port: not a port: 'http' (0 to 65535"),
        # RFC 2606: .invalid never resolves.
        ("--host", "nowhere.invalid", "argument --host: can't resolve 'nowhere.invalid'"),
        ("--host", "", "argument --host: no address given"),
        ("--allow-host", "a b", "argument --allow-host: not a host: 'a b'"),
        ("--allow-host", "http://x/", "argument --allow-host: not a host: 'http://x/'"),
        ("--token", "two words", "argument --token: a token (--token or $MCPCORE_TOKEN)"),
    ],
)
def test_a_bad_address_option_is_a_one_line_error(
    tmp_path: Path, option: str, value: str, error: str
) -> None:
    with running(str(tmp_path), option, value) as process:
        out, err = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 2
    assert out == ""
    assert err.startswith("usage: mcpcore serve")
    assert err.splitlines()[-1].startswith(f"mcpcore serve: error: {error}")
    assert "Traceback" not in err
    assert value not in err or option != "--token"  # (a token is never echoed)


def test_a_bad_token_in_the_environment_is_refused_without_showing_it(tmp_path: Path) -> None:
    process = subprocess.run(
        [MCPCORE, "serve", str(tmp_path), "--port", "0"],
        env={**os.environ, "MCPCORE_TOKEN": "secret with spaces"},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )
    assert process.returncode == 2
    assert "argument --token: a token (--token or $MCPCORE_TOKEN)" in process.stderr
    assert "secret" not in process.stderr


@pytest.mark.parametrize("transport", ["ws", "stdio"])
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_every_transport_stops_cleanly_on_a_signal(
    tmp_path: Path, transport: str, stop: signal.Signals
) -> None:
    root = make_tree(tmp_path)
    command = [MCPCORE, "serve", str(root), "--transport", transport, "--port", "0"]
    with started(command) as process:  # (stdin open: over stdio it waits for messages)
        assert process.stdout is not None
        assert process.stdin is not None
        if transport == "stdio":  # serving once it answers
            process.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
            process.stdin.flush()
            assert '"id":1' in read_line(process, process.stdout)
        else:
            assert read_line(process, process.stdout).startswith(f"Serving {root} at ws://")
        process.send_signal(stop)
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 0
    assert err.splitlines() == [
        f"mcpcore serve: serving 5 files of {root}",
        "mcpcore serve: stopped",
    ]
    if transport == "stdio":
        assert out == ""  # (nothing but the protocol)


# ------------------------------------------------- beyond loopback: hosts, URLs, the token

#: A legacy ``initialize`` POST: answered 200 when the request's Host is served.
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
)


def status_for(port: int, host: str, token: str | None = None) -> int:
    """The status of an ``initialize`` sent to 127.0.0.1:``port`` naming ``host``."""
    headers = {
        "Host": host,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    http = HTTPConnection("127.0.0.1", port, timeout=START_TIMEOUT)
    try:
        http.request("POST", "/mcp", INITIALIZE, headers)
        response = http.getresponse()
        response.read()
        return response.status
    finally:
        http.close()


@dataclass
class Served:
    """A running ``mcpcore serve``: the URLs it printed, its port; its stderr once stopped."""

    urls: list[str]
    port: int
    stderr: str = ""


@contextmanager
def serving(root: Path, *arguments: str, token: str | None = None) -> Iterator[Served]:
    """``mcpcore serve root --port 0 ARGUMENTS``, stopped (SIGTERM) on exit."""
    environment = {key: value for key, value in os.environ.items() if key != "MCPCORE_TOKEN"}
    if token is not None:
        environment["MCPCORE_TOKEN"] = token
    process = subprocess.Popen(
        [MCPCORE, "serve", str(root), "--port", "0", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    served = Served([], 0)
    try:
        assert process.stdout is not None
        lines = [read_line(process, process.stdout)]
        while not lines[-1].startswith("Connect a client"):
            lines.append(process.stdout.readline())
        assert lines[0].startswith(f"Serving {root} at ")
        assert all(line.startswith("  and at ") for line in lines[1:-1]), lines
        served.urls = [lines[0].rsplit(" at ", 1)[1].strip()]
        served.urls += [line.removeprefix("  and at ").strip() for line in lines[1:-1]]
        served.port = urlsplit(served.urls[0]).port or 0
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        _, served.stderr = process.communicate(timeout=START_TIMEOUT)


async def list_files(url: str) -> list[str]:
    async with open_http_client(url, timeout=10) as client:
        return [resource.name async for resource in client.iter_resources()]


def test_on_every_interface_the_urls_printed_work_and_other_hosts_are_misdirected(
    tmp_path: Path,
) -> None:
    root = make_tree(tmp_path)
    with serving(root, "--host", "0.0.0.0") as served:
        port = served.port
        assert served.urls[0] == f"http://127.0.0.1:{port}/mcp"
        address = route_address()
        if address is not None:  # (a machine with a network beyond loopback)
            assert f"http://{address}:{port}/mcp" in served.urls
        for url in served.urls:  # each over its own address, naming it in Host
            assert "notes.md" in trio.run(list_files, url)
        assert status_for(port, f"mcp.example:{port}") == 421
    assert served.stderr.splitlines()[1] == (
        "mcpcore serve: warning: listening on every interface, beyond this machine, with no "
        "token: anyone who can reach it can use it; set MCPCORE_TOKEN (or --token) to require one"
    )


def test_allow_host_serves_another_name(tmp_path: Path) -> None:
    allowed = ("--allow-host", "mcp.example", "--allow-host", "other.example:1")
    with serving(tmp_path, *allowed) as served:
        port = served.port
        assert served.urls == [f"http://127.0.0.1:{port}/mcp"]
        assert status_for(port, f"mcp.example:{port}") == 200
        assert status_for(port, "MCP.example") == 200
        assert status_for(port, f"other.example:{port}") == 421  # (port 1 only)
        assert status_for(port, f"localhost:{port}") == 200
        address = route_address() or "192.0.2.7"
        assert status_for(port, f"{address}:{port}") == 421  # loopback: its names only
    assert "warning" not in served.stderr


def test_a_token_is_required_when_given_and_silences_the_warning(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0", token="s3cret-T0ken") as served:
        port = served.port
        assert status_for(port, f"127.0.0.1:{port}") == 401
        assert status_for(port, f"127.0.0.1:{port}", token="wrong") == 401
        assert status_for(port, f"127.0.0.1:{port}", token="s3cret-T0ken") == 200
    assert "warning" not in served.stderr


def test_help_lists_every_limit_a_client_can_hit_and_how_to_change_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    limits = text.split("limits (what a client can run into", 1)[1].split("examples:", 1)[0]
    for limit, option in [
        ("files listed", "--max-files"),
        ("file size", "--max-file-size"),
        ("message size", "--max-message-size"),
        ("partial messages", "--partial-budget"),
        ("connections", "--max-connections"),
        ("legacy sessions", "--max-sessions"),
    ]:
        assert limit in limits
        assert option in limits
        assert f"{option} " in text.split("limits (what", 1)[0]  # an option of its own
    assert "JSON nesting" in limits


def test_the_limit_options_reach_the_transports(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    with running(str(root), "--port", "0", "--max-message-size", "2KiB") as process:
        assert process.stdout is not None
        url = read_line(process, process.stdout).rsplit(" at ", 1)[1].strip()
        parts = urlsplit(url)
        connection = HTTPConnection(parts.hostname or "", parts.port, timeout=START_TIMEOUT)
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        for pad, status in [(3000, 413), (100, 200)]:
            connection.close()  # (a refusal closes the connection: a new one each time)
            params = {**hello, "pad": "x" * pad}
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            connection.request("POST", parts.path, body=body, headers=headers)
            answer = connection.getresponse()
            answer.read()
            assert (pad, answer.status) == (pad, status)
        connection.close()


def test_every_limit_option_sets_its_limit() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    add_serve_command(commands)
    options = "--max-message-size 1MiB --max-connections 7 --max-sessions 5 --partial-budget 8MiB"
    arguments = parser.parse_args(["serve", *options.split()])
    limits = serve_limits(arguments)
    assert limits.http.max_body_size == limits.websocket.max_message_size == 1 << 20
    assert limits.max_line_size == 1 << 20
    assert limits.http.max_connections == limits.websocket.max_connections == 7
    assert limits.http.max_sessions == 5
    assert limits.http.max_partial_bytes == limits.websocket.max_partial_bytes == 8 << 20
    defaults = serve_limits(parser.parse_args(["serve"]))
    assert defaults == ServeLimits()
