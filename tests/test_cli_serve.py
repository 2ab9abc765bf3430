"""``mcpcore serve`` as a person runs it: help, defaults, options, errors, logs, Ctrl+C."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

from mcpcore import jsonrpc, types
from mcpcore.client import McpError
from tests.transports.folder_tree import MCPCORE, START_TIMEOUT, make_tree, read_line
from transports import open_http_client, open_stdio_client, open_websocket_client
from transports._folder._command import parse_size
from transports.cli import main


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
