"""The README's "Benchmark your server" commands run as written (bounded in count).

The URL command runs against ``examples/everything.py --transport http`` on a port of
the test's pick, with ``--requests`` and ``--warmup 0`` appended (the README's runs 5 s per
level); the stdio command runs exactly as written, from the checkout.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from bench._listening import wait_listening
from bench._ports import reserve_port
from tests.transports.everything_http import START_TIMEOUT

pytestmark = pytest.mark.timeout(180)

ROOT: Final = Path(__file__).resolve().parent.parent.parent
README: Final = (ROOT / "README.md").read_text()


def section_commands() -> list[str]:
    """The ``mcpcore bench`` lines of the section's bash block."""
    start = README.index("\n## Benchmark your server\n")
    end = README.index("\n## ", start + 1)
    (block,) = re.findall(r"```bash\n(.*?)```", README[start:end], re.S)
    return [line for line in block.splitlines() if line.startswith("mcpcore bench")]


def mcpcore() -> str:
    return str(Path(sys.executable).parent / "mcpcore")


@pytest.fixture
def everything_port() -> Iterator[int]:
    port = reserve_port()
    command = [sys.executable, "examples/everything.py", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port, process, timeout=START_TIMEOUT)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def test_the_section_has_the_three_commands() -> None:
    commands = section_commands()
    assert [shlex.split(line)[:3] for line in commands] == [
        ["mcpcore", "bench", "run"],
        ["mcpcore", "bench", "run"],
        ["mcpcore", "bench", "codec"],
    ]


def test_run_takes_every_option_the_section_names() -> None:
    start = README.index("\n## Benchmark your server\n")
    text = README[start : README.index("\n## ", start + 1)]
    # (everything.py's options, and python -m bench's)
    others = {"--transport", "--port", "--only"}
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)) - others
    shown = subprocess.run(
        [mcpcore(), "bench", "run", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert {"--tool", "--rate", "--json", "--plot"} <= named
    assert not {option for option in named if option not in shown}


def test_the_url_command_runs(everything_port: int, tmp_path: Path) -> None:
    line = section_commands()[0].replace(":3001/", f":{everything_port}/")
    words = [*shlex.split(line), "--requests", "20", "--warmup", "0"]
    done = subprocess.run(
        [mcpcore(), *words[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    records = json.loads((tmp_path / "run.json").read_text())
    assert [(r["concurrency"], r["requests"], r["errors"]) for r in records] == [
        (1, 20, 0),
        (8, 20, 0),
        (64, 20, 0),
    ]
    assert (tmp_path / "run.png").read_bytes().startswith(b"\x89PNG")


def test_the_stdio_command_runs_as_written() -> None:
    words = shlex.split(section_commands()[1])
    words[words.index("python")] = sys.executable
    done = subprocess.run(
        [mcpcore(), *words[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\s+1\s+2000\s+0\s", done.stdout, re.M), done.stdout
    assert re.search(r"^\s+8\s+2000\s+0\s", done.stdout, re.M), done.stdout


def test_the_codec_command_runs_as_written() -> None:
    words = shlex.split(section_commands()[2])
    bounded = [*words[1:], "--repeat", "1", "--seconds", "0.01"]  # (as written, timed briefly)
    done = subprocess.run(
        [mcpcore(), *bounded], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    for kind in ("tools/call request", "tools/call result", "notifications/progress"):
        assert kind in done.stdout
