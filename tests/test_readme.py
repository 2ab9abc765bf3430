"""The README's examples work as written, from any folder, and name only real options.

Each ```python block runs as a script of its own, in a subprocess whose working folder
is a fresh empty one (not the checkout), where only what an install provides can be
imported (the ``mcpcore`` and ``transports`` packages, and the ``mcpcore`` command on
the PATH): a block that needs the checkout, or that does not run, fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from bench._listening import wait_listening
from bench._ports import reserve_port
from mcpcore_cli.deploying import REDIS_VARIABLE
from tests.redis_server import RedisServer
from tests.transports.everything_http import START_TIMEOUT
from tests.transports.http_raw import modern_body, modern_headers

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
#: Seconds a block may take (each starts servers and clients of its own).
BLOCK_TIMEOUT: Final = 60
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def section(title: str) -> str:
    """The README's text under ``## title``, up to the next section of that level."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else len(README)]


def installed_only(folder: Path) -> dict[str, str]:
    """An environment where the packages are importable as installed, and nothing else.

    ``folder`` gets links to the two packages the distribution installs (so that this
    checkout's code runs, not that of whatever mcpcore is installed); the checkout
    itself (``examples``, ``bench``, ``tests``) is not importable.
    """
    for package in ("mcpcore", "transports"):
        (folder / package).symlink_to(ROOT / package, target_is_directory=True)
    scripts = str(Path(sys.executable).parent)  # (the mcpcore command)
    return {
        **os.environ,
        "PYTHONPATH": str(folder),
        "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]),
    }


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A Redis for the examples that join a deployment (they read ``MCPCORE_REDIS_URL``)."""
    with RedisServer() as server:
        yield server.url


def test_the_readme_has_python_examples() -> None:
    assert len(PYTHON_BLOCKS) >= 4


@pytest.mark.parametrize(
    "block", PYTHON_BLOCKS, ids=[f"block{i}" for i in range(len(PYTHON_BLOCKS))]
)
def test_a_python_example_runs_as_written_from_any_folder(
    block: str, tmp_path: Path, redis_url: str
) -> None:
    packages = tmp_path / "site"
    packages.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "example.py").write_text(block)
    ran = subprocess.run(
        [sys.executable, "example.py"],
        cwd=work,
        env=installed_only(packages) | {REDIS_VARIABLE: redis_url},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr


def test_no_example_is_left_commented_out() -> None:
    for block in PYTHON_BLOCKS:
        assert "# trio.run(" not in block
        assert "# asyncio.run(" not in block


def options_named(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


def help_of(*command: str) -> str:
    shown = subprocess.run(
        [sys.executable, *command, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=True,
    )
    return shown.stdout


def test_mcpcore_serve_help_lists_every_option_the_readme_names() -> None:
    named = options_named(section("`mcpcore serve`"))
    # The MCP Inspector's own options, in its command lines.
    named -= {"--cli", "--method"}
    assert {"--host", "--port", "--allow-host", "--token", "--stdio"} <= named
    shown = help_of("-m", "mcpcore_cli.cli", "serve")
    assert not {option for option in named if option not in shown}


def test_the_everything_example_takes_the_options_the_readme_gives_it() -> None:
    lines = [line for line in README.splitlines() if "examples/everything.py --" in line]
    named = options_named("\n".join(line.split("#")[0] for line in lines))
    assert {"--transport", "--port"} <= named
    shown = help_of(str(ROOT / "examples" / "everything.py"))
    assert not {option for option in named if option not in shown}


def test_python_m_bench_takes_the_options_the_readme_gives_it() -> None:
    named = options_named(section("Benchmarks"))
    assert {"--json", "--plot", "--quick", "--busy-poll", "--repeat"} <= named
    shown = help_of("-m", "bench")
    assert not {option for option in named if option not in shown}


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.split("# --- the README's test command, verbatim ---\n", 1)[1].strip()
    assert command in README


def test_the_fastapi_example_serves_mcp_under_its_prefix(tmp_path: Path) -> None:
    # The section says: saved as app.py, `uvicorn app:app` serves MCP at /api/mcp.
    [block] = [block for block in PYTHON_BLOCKS if "FastAPI(" in block]
    packages = tmp_path / "site"
    packages.mkdir()
    (tmp_path / "app.py").write_text(block)
    port = reserve_port()
    command = [sys.executable, "-m", "uvicorn", "app:app", "--port", str(port)]
    with subprocess.Popen(
        command,
        cwd=tmp_path,
        env=installed_only(packages),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as served:
        try:
            base = f"http://127.0.0.1:{port}"
            wait_listening(port, served, timeout=START_TIMEOUT)
            body = modern_body("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
            headers = modern_headers("tools/call", "add")
            call = urllib.request.Request(f"{base}/api/mcp", body, headers, method="POST")
            with urllib.request.urlopen(call, timeout=BLOCK_TIMEOUT) as answer:
                result = json.loads(answer.read())["result"]
            with urllib.request.urlopen(f"{base}/health", timeout=BLOCK_TIMEOUT) as health:
                assert json.loads(health.read()) == {"ok": True}
        finally:
            served.terminate()
    assert result["content"][0]["text"] == "5"
