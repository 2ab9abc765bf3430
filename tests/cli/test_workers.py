"""``--workers N``: a supervisor and N worker processes sharing one listening socket.

Real processes throughout: ``examples/everything.py`` and ``mcpcore serve`` started with
``--workers 2``. Which worker accepted a connection is read from /proc: the server side
of the connection (found in /proc/net/tcp by its two ports) is a socket that exactly one
worker holds open under /proc/PID/fd. Workers are the supervisor's children (the
parent in /proc/PID/stat). Every wait is a bounded number of polls or reads: a hang
fails the test, and nothing is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import pytest
import trio

from mcpcore_cli.deploying import SESSIONS_PER_WORKER
from mcpcore_cli.handover import WORKER_VARIABLE, handover_text, inherited_listening
from mcpcore_cli.workers import (
    MAX_RESTART_DELAY,
    MAX_WORKERS,
    RESTART_DELAY,
    STEADY_AFTER,
    restart_delay,
    worker_command,
    worker_count,
)
from tests.cli.folder_tree import MCPCORE, START_TIMEOUT, read_line
from tests.cli_helpers import started, stopped_output
from tests.transports.http_raw import modern_body, modern_headers
from tests.transports.trio_helpers import PYTHON, REPOSITORY
from transports import SECRET_SIZE, open_websocket_client

pytestmark = pytest.mark.skipif(
    not Path("/proc/net/tcp").exists(), reason="reads which worker accepted from /proc"
)

EVERYTHING: Final = str(REPOSITORY / "examples" / "everything.py")
#: Times a condition is checked before the test fails (with `POLL_PAUSE` between).
POLLS: Final = 400
POLL_PAUSE: Final = 0.05
#: Rounds of fresh connections tried, at most, until both workers have taken some: the
#: kernel gives each connection to whichever worker accepts first, so the odds of one
#: worker winning every round of many are nil, but not zero for a handful.
MAX_ROUNDS: Final = 200
#: Lines of stderr read, at most, while looking for one.
MAX_LINES: Final = 50
#: The everything server's fixture that asks for input: its answer carries a
#: ``requestState`` sealed with the key, which the second leg hands back.
ASKING: Final = "test_input_required_result_request_state"
ELICITING: Final[dict[str, Any]] = {
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
}
CONFIRMED: Final[dict[str, Any]] = {"confirm": {"action": "accept", "content": {"ok": True}}}

T = TypeVar("T")


# -- processes, from /proc ---------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (None: no such process)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # (the name, in parentheses, may hold spaces)


def children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie nobody reaped yet counts)."""
    fields = _stat(pid)
    return fields is None or fields[0] == "Z"


def poll(condition: Callable[[], T | None], what: str) -> T:
    """``condition()``'s first true value, checked at most `POLLS` times."""
    for _ in range(POLLS):
        value = condition()
        if value:
            return value
        time.sleep(POLL_PAUSE)
    raise AssertionError(f"never happened: {what}")


def server_side_inode(client: socket.socket) -> int:
    """The inode of the server's end of ``client``'s TCP connection (/proc/net/tcp)."""
    ours, theirs = client.getsockname()[1], client.getpeername()[1]
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = (int(field.rsplit(":", 1)[1], 16) for field in fields[1:3])
            if (local, remote) == (theirs, ours):
                return int(fields[9])
    raise AssertionError(f"no server side for the connection from port {ours}")


def accepting_worker(client: socket.socket, workers: set[int]) -> int:
    """The worker holding the server's end of ``client``'s connection."""
    link = f"socket:[{server_side_inode(client)}]"
    for pid in workers:
        for descriptor in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(descriptor) == link:
                    return pid
            except OSError:
                continue  # (closed since it was listed)
    raise AssertionError(f"none of {sorted(workers)} holds {link}")


def stderr_line(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    """The next line on ``process``'s stderr matching ``pattern`` (within `MAX_LINES`)."""
    for _ in range(MAX_LINES):
        found = re.search(pattern, read_line(process, process.stderr))
        if found:
            return found
    raise AssertionError(f"no line on stderr matches {pattern!r}")


# -- raw 2026-07-28 requests, each over a connection of its own ---------------------


@contextmanager
def fresh_connection(port: int) -> Iterator[HTTPConnection]:
    connection = HTTPConnection("127.0.0.1", port, timeout=START_TIMEOUT)
    try:
        yield connection
    finally:
        connection.close()


def answered(connection: HTTPConnection, method: str, params: dict[str, Any]) -> Any:
    """The result of a 2026-07-28 request sent on ``connection`` (which stays open)."""
    name = params.get("name")
    connection.request(
        "POST", "/mcp", body=modern_body(method, params), headers=modern_headers(method, name)
    )
    response = connection.getresponse()
    body = response.read()
    assert response.status == 200, body
    answer = json.loads(body)
    assert "result" in answer, answer
    return answer["result"]


def request_on_fresh_connection(
    port: int, workers: set[int], method: str, params: dict[str, Any]
) -> tuple[Any, int]:
    """``method``'s result over a new connection, and the worker that accepted it."""
    with fresh_connection(port) as connection:
        result = answered(connection, method, params)
        assert connection.sock is not None
        return result, accepting_worker(connection.sock, workers)


# -- supervisors -------------------------------------------------------------------


@dataclass
class Supervised:
    """A running supervisor: its process, URL, port and worker pids."""

    process: subprocess.Popen[str]
    banner: str
    url: str
    port: int
    workers: set[int]


@contextmanager
def supervised(command: list[str], **options: Any) -> Iterator[Supervised]:
    """``command`` (with ``--workers 2``) started, once it printed its URL."""
    with started(command, **options) as process:
        assert process.stdout is not None
        banner = read_line(process, process.stdout).rstrip("\n")
        url = banner.split(" at ", 1)[1]
        port = urlsplit(url).port
        assert port is not None
        workers = children(process.pid)  # (it prints its URL once every worker serves)
        assert len(workers) == 2
        yield Supervised(process, banner, url, port, workers)


def everything(*arguments: str) -> list[str]:
    return [PYTHON, EVERYTHING, "--port", "0", "--workers", "2", *arguments]


def stop(process: subprocess.Popen[str], how: signal.Signals) -> tuple[str, str]:
    """Send ``how`` to the supervisor; its output once it has exited."""
    process.send_signal(how)
    process.wait(timeout=START_TIMEOUT)
    return stopped_output(process)


# -- the tests ---------------------------------------------------------------------


def test_both_workers_serve_and_a_request_state_from_one_is_good_at_the_other() -> None:
    with supervised(everything("--transport", "http")) as served:
        assert served.url == f"http://127.0.0.1:{served.port}/mcp"
        accepted: set[int] = set()
        crossed = False
        for _ in range(MAX_ROUNDS):
            ask = {"name": ASKING, "arguments": {}, "_meta": ELICITING}
            asked, asker = request_on_fresh_connection(
                served.port, served.workers, "tools/call", ask
            )
            assert asked["resultType"] == "input_required"
            answer = {**ask, "inputResponses": CONFIRMED, "requestState": asked["requestState"]}
            done, answerer = request_on_fresh_connection(
                served.port, served.workers, "tools/call", answer
            )
            assert done["content"] == [{"type": "text", "text": "state-ok"}]
            accepted |= {asker, answerer}
            crossed = asker != answerer
            if crossed:
                break
        assert accepted == served.workers  # both accepted connections on the one port
        assert crossed  # a state sealed by one worker, opened by the other
        assert children(served.process.pid) == served.workers
        out, err = stop(served.process, signal.SIGTERM)
    assert served.process.returncode == 0
    assert out == ""
    assert err.count(" ready\n") == 2
    assert "Traceback" not in err


def test_mcpcore_serve_workers_share_the_port_and_the_listing_cursors(tmp_path: Path) -> None:
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(name)
    command = [MCPCORE, "serve", str(tmp_path), "--port", "0", "--page-size", "1"]
    with supervised([*command, "--workers", "2"]) as served:
        assert served.url == f"http://127.0.0.1:{served.port}/mcp"
        accepted: set[int] = set()
        crossed = False
        for _ in range(MAX_ROUNDS):
            first, lister = request_on_fresh_connection(
                served.port, served.workers, "resources/list", {}
            )
            cursor = {"cursor": first["nextCursor"]}
            second, follower = request_on_fresh_connection(
                served.port, served.workers, "resources/list", cursor
            )
            assert [page["resources"][0]["name"] for page in (first, second)] == ["a.md", "b.md"]
            accepted |= {lister, follower}
            crossed = lister != follower
            if crossed:
                break
        assert accepted == served.workers
        assert crossed
        out, err = stop(served.process, signal.SIGINT)
    assert served.process.returncode == 0
    assert served.banner == f"Serving {tmp_path.resolve()} at {served.url}"
    assert out.startswith("Connect a client: ")  # (the banner's hint)
    assert err.count(f"mcpcore serve: serving 3 files of {tmp_path.resolve()}\n") == 2
    assert err.endswith("mcpcore serve: stopped\n")
    assert err.count("stopped") == 1  # (the workers leave it to their supervisor)


def test_a_killed_worker_is_logged_and_restarted_and_requests_go_on() -> None:
    with supervised(everything("--transport", "http")) as served:
        process = served.process
        victim = min(served.workers)
        os.kill(victim, signal.SIGKILL)
        died = stderr_line(
            process, rf"^everything\.py: worker (\d) \(pid {victim}\) died \(signal 9\); restarting"
        )
        ready = stderr_line(
            process, rf"^everything\.py: worker {died.group(1)} \(pid (\d+)\) ready"
        )
        successor = int(ready.group(1))
        workers = served.workers - {victim} | {successor}
        assert children(process.pid) == workers
        accepted: set[int] = set()
        for _ in range(MAX_ROUNDS):  # (until the new worker has taken a connection)
            listed, worker = request_on_fresh_connection(served.port, workers, "tools/list", {})
            assert listed["tools"][0]["name"] == "test_simple_text"
            accepted.add(worker)
            if successor in accepted:
                break
        assert successor in accepted
        stop(process, signal.SIGTERM)
    assert process.returncode == 0
    assert gone(victim)
    assert all(gone(pid) for pid in workers)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_sigint_and_sigterm_stop_every_worker_and_exit_0(how: signal.Signals) -> None:
    with supervised(everything("--transport", "http")) as served:
        _, err = stop(served.process, how)
    assert served.process.returncode == 0
    assert all(gone(pid) for pid in served.workers)  # (reaped by the supervisor, first)
    assert "died" not in err
    assert "Traceback" not in err


def test_workers_of_a_killed_supervisor_stop_by_themselves() -> None:
    with supervised(everything("--transport", "http")) as served:
        served.process.kill()  # (no chance to stop them: they see its end of the pipe close)
        served.process.wait(timeout=START_TIMEOUT)
        assert poll(lambda: all(gone(pid) for pid in served.workers), "the workers exit")


def test_websocket_workers_serve() -> None:
    with supervised(everything("--transport", "ws")) as served:
        assert served.url == f"ws://127.0.0.1:{served.port}/ws"
        assert "test" in trio.run(simple_text_over_websocket, served.url)
        stop(served.process, signal.SIGTERM)
    assert served.process.returncode == 0


async def simple_text_over_websocket(url: str) -> str:
    async with open_websocket_client(url) as client:
        result = await client.call_tool("test_simple_text")
        return str(result.content[0].text)  # type: ignore[union-attr]


def test_a_first_worker_that_can_not_serve_fails_once_with_its_status(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with started([MCPCORE, "serve", str(missing), "--port", "0", "--workers", "2"]) as process:
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 2
    assert out == ""
    # (Besides the warning that legacy sessions stay per worker without --redis.)
    lines = [line for line in err.splitlines() if SESSIONS_PER_WORKER not in line]
    assert lines[0] == f"mcpcore serve: can't serve {missing}: No such file or directory"
    assert re.fullmatch(
        r"mcpcore serve: worker 1 \(pid \d+\) exited \(status 2\) before serving", lines[1]
    )
    assert len(lines) == 2  # (worker 2 never started)


COMMANDS: Final = {
    "everything": ([PYTHON, EVERYTHING, "--transport", "http"], "everything.py: error: "),
    "serve": ([MCPCORE, "serve"], "mcpcore serve: error: "),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["--workers", "0"], "argument --workers: not a number of workers: '0' (1 to 128, or auto"),
        (["--workers", "-2"], "argument --workers: not a number of workers: '-2'"),
        (["--workers", "junk"], "argument --workers: not a number of workers: 'junk'"),
        (["--workers", "129"], "argument --workers: not a number of workers: '129'"),
        (["--workers", "2", "--transport", "stdio"], "--workers 2 needs --transport http or ws"),
    ],
)
def test_a_bad_workers_option_is_a_one_line_usage_error(
    command: str, arguments: list[str], error: str, tmp_path: Path
) -> None:
    program, prefix = COMMANDS[command]
    with started([*program, *arguments], cwd=tmp_path) as process:
        process.wait(timeout=START_TIMEOUT)
        out, err = stopped_output(process)
    assert process.returncode == 2
    assert out == ""
    assert err.splitlines()[-1].startswith(prefix + error), err
    assert "Traceback" not in err


# -- the pieces, in this process -----------------------------------------------------


def test_auto_is_one_worker_per_core_this_process_may_use() -> None:
    assert worker_count("auto") == min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    assert worker_count(" 3 ") == 3
    with pytest.raises(argparse.ArgumentTypeError):
        worker_count(str(MAX_WORKERS + 1))


def test_restarts_wait_longer_while_workers_die_young_and_reset_once_they_lived() -> None:
    delays = [restart_delay(None, 0.1)]
    for _ in range(10):
        delays.append(restart_delay(delays[-1], 0.1))
    assert delays[:3] == [RESTART_DELAY, 2 * RESTART_DELAY, 4 * RESTART_DELAY]
    assert delays[-1] == MAX_RESTART_DELAY
    assert restart_delay(MAX_RESTART_DELAY, STEADY_AFTER) == RESTART_DELAY


def test_workers_run_this_process_own_command_line_and_nothing_else() -> None:
    assert worker_command(sys.argv[1:]) == [sys.executable, *sys.orig_argv[1:]]
    with pytest.raises(ValueError, match="own command line"):
        worker_command(["serve", "--workers", "2"])


def test_a_worker_takes_what_it_inherited_out_of_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = secrets.token_bytes(SECRET_SIZE)
    supervisor_end, worker_end = socket.socketpair()
    with supervisor_end, socket.create_server(("127.0.0.1", 0)) as listener:
        supervisor_end.sendall(key)
        control = worker_end.detach()
        text = handover_text(3, control, [listener.fileno()])
        monkeypatch.setenv(WORKER_VARIABLE, text)
        inherited = inherited_listening()
        assert inherited is not None
        assert WORKER_VARIABLE not in os.environ  # (a handler's subprocess sees none of it)
        assert (inherited.worker, inherited.key) == (3, key)
        assert [each.fileno() for each in inherited.sockets] == [listener.fileno()]
        assert not os.get_inheritable(control)
        for each in inherited.sockets:
            each.detach()  # (the listener is the test's to close)
        inherited.close()
        assert inherited_listening() is None  # (taken once)


@pytest.mark.parametrize("text", ["", "{}", '{"worker": 1, "control": "x", "listening": []}'])
def test_a_malformed_handover_is_a_clear_error(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKER_VARIABLE, text)
    with pytest.raises(ValueError, match=WORKER_VARIABLE):
        inherited_listening()
