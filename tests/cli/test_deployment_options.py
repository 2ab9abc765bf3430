"""``--redis URL``: the command lines join a deployment (real processes, a real Redis).

Processes started separately with the same ``--redis`` form one server: a 2026-07-28
request state sealed by one is opened by another, even when one of them is a
``--workers`` supervisor (whose workers then take the deployment's key, not its own),
and a legacy session opened on one ``mcpcore serve`` is served by the other. An
unreachable Redis is a one-line error (status 1); ``--redis`` with stdio, a usage error
(status 2); ``--workers`` without ``--redis`` warns that legacy sessions stay per worker.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench._ports import reserve_port
from mcpcore_cli.deploying import REDIS_VARIABLE
from tests.cli.folder_tree import MCPCORE, read_line
from tests.cli.test_workers import (
    ASKING,
    CONFIRMED,
    ELICITING,
    EVERYTHING,
    answered,
    fresh_connection,
)
from tests.cli_helpers import START_TIMEOUT, started, stopped_output
from tests.redis_server import RedisServer
from tests.transports.http_raw import LEGACY, POST_HEADERS, message
from tests.transports.trio_helpers import PYTHON


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def port_of(banner: str) -> int:
    port = urlsplit(banner.rstrip("\n").split(" at ", 1)[1]).port
    assert port is not None
    return port


def legacy(port: int, body: bytes, session_id: str | None = None) -> tuple[int, str, Any]:
    """A 2025-11-25 POST: status, session id, and the last message of its answer."""
    headers = {**POST_HEADERS, "MCP-Protocol-Version": LEGACY}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    with fresh_connection(port) as connection:
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read().decode()
        session = response.getheader("mcp-session-id") or ""
    lines = [line[5:].strip() for line in data.splitlines() if line.startswith("data:")]
    messages = [json.loads(line) for line in lines if line] or ([json.loads(data)] if data else [])
    return response.status, session, messages[-1] if messages else None


def test_a_supervisor_s_workers_and_another_process_share_the_deployment_s_key(
    redis: RedisServer,
) -> None:
    command = [PYTHON, EVERYTHING, "--transport", "http", "--port", "0", "--redis", redis.url]
    with (
        started([*command, "--workers", "2"]) as supervisor,
        started(command) as single,
    ):
        assert supervisor.stdout is not None
        assert single.stdout is not None
        ports = [port_of(read_line(p, p.stdout)) for p in (supervisor, single)]
        for asking, answering in (ports, ports[::-1]):
            ask = {"name": ASKING, "arguments": {}, "_meta": ELICITING}
            with fresh_connection(asking) as connection:
                asked = answered(connection, "tools/call", ask)
            answer = {**ask, "inputResponses": CONFIRMED, "requestState": asked["requestState"]}
            with fresh_connection(answering) as connection:
                done = answered(connection, "tools/call", answer)
            assert done["content"] == [{"type": "text", "text": "state-ok"}]


def test_two_mcpcore_serve_processes_share_a_legacy_session(
    redis: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text("# shared")
    command = [MCPCORE, "serve", str(tmp_path), "--port", "0", "--redis", redis.url]
    with started(command) as first, started(command) as second:
        assert first.stdout is not None
        assert second.stdout is not None
        one, other = (port_of(read_line(p, p.stdout)) for p in (first, second))
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        }
        status, session_id, _ = legacy(one, message("initialize", params, 0))
        assert status == 200
        status, _, _ = legacy(other, message("notifications/initialized"), session_id)
        assert status == 202
        uri = (tmp_path / "notes.md").as_uri()
        status, _, read = legacy(other, message("resources/read", {"uri": uri}, 1), session_id)
        assert status == 200
        assert read["result"]["contents"][0]["text"] == "# shared"


@pytest.mark.parametrize("program", ["everything", "mcpcore"])
def test_an_unreachable_redis_is_a_one_line_error(program: str, tmp_path: Path) -> None:
    nowhere = f"redis://127.0.0.1:{reserve_port()}"
    if program == "everything":
        command = [PYTHON, EVERYTHING, "--transport", "http", "--port", "0", "--redis", nowhere]
    else:
        command = [MCPCORE, "serve", str(tmp_path), "--port", "0", "--redis", nowhere]
    with started(command) as process:
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 1
    assert "can't join the deployment: cannot connect to 127.0.0.1:" in err
    assert "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize(
    "command",
    [
        [PYTHON, EVERYTHING, "--transport", "stdio", "--redis", "redis://127.0.0.1"],
        [MCPCORE, "serve", "--stdio", "--redis", "redis://127.0.0.1"],
        [MCPCORE, "serve", "--redis", "http://127.0.0.1"],
    ],
    ids=["everything-stdio", "serve-stdio", "serve-bad-url"],
)
def test_a_misused_redis_option_is_a_usage_error(command: list[str]) -> None:
    with started(command) as process:
        process.wait(timeout=START_TIMEOUT)
        _, err = stopped_output(process)
    assert process.returncode == 2
    assert "--redis" in err
    assert "Traceback" not in err


def test_workers_without_redis_warn_that_legacy_sessions_stay_per_worker() -> None:
    command = [PYTHON, EVERYTHING, "--transport", "http", "--port", "0", "--workers", "2"]
    with started(command) as supervisor:
        assert supervisor.stdout is not None
        assert supervisor.stderr is not None
        read_line(supervisor, supervisor.stdout)  # (serving)
        warning = read_line(supervisor, supervisor.stderr)
    assert "legacy sessions" in warning
    assert "--redis" in warning


def test_the_environment_s_redis_is_for_http_servers_only(tmp_path: Path) -> None:
    nowhere = {REDIS_VARIABLE: f"redis://127.0.0.1:{reserve_port()}"}
    environment = {**os.environ, **nowhere}
    http = [MCPCORE, "serve", str(tmp_path), "--port", "0"]
    with started(http, env=environment) as process:
        process.wait(timeout=START_TIMEOUT)
        _, err = stopped_output(process)
    assert process.returncode == 1
    assert "can't join the deployment" in err
    # A stdio server of the same shell ignores it (stdin closed at once: it just stops).
    stdio = [PYTHON, EVERYTHING, "--transport", "stdio"]
    with started(stdio, env=environment) as process:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=START_TIMEOUT)
        _, err = stopped_output(process)
    assert process.returncode == 0, err
