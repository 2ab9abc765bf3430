"""Fixtures of the ``mcpcore bench run`` tests: counting servers, started per test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

#: The server script (see its docstring).
SCRIPT: Final = Path(__file__).resolve().parent / "counting_server.py"
#: Seconds a server gets to stop after SIGTERM before it is killed.
STOP_TIMEOUT: Final = 10.0


@dataclass(frozen=True)
class CountingServer:
    """A counting server: where to reach it (its URL, or its stdio command words)."""

    target: list[str]
    count_file: Path

    def counts(self) -> dict[str, int]:
        """The server's own count of its answers, by fixture."""
        if not self.count_file.exists():
            return {}
        counts: dict[str, int] = json.loads(self.count_file.read_text())
        return counts


def _listening(kind: str, transport: str, count_file: Path) -> Iterator[CountingServer]:
    command = [sys.executable, str(SCRIPT), kind, transport, str(count_file)]
    # (stderr to /dev/null: the SDK logs every failing tool call, with its traceback, and
    # a full pipe would stop the server.)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # (the script prints its URL, or exits)
        assert line.startswith("URL "), f"the server printed {line!r}"
        yield CountingServer([line.split()[1]], count_file)
    finally:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
def counting_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CountingServer]:
    """The server ``request.param`` names: ``"mcpcore http"``, ``"sdk stdio"``..."""
    kind, transport = str(request.param).split()
    count_file = tmp_path / "counts.json"
    if transport == "stdio":  # started by mcpcore bench run itself
        yield CountingServer(
            ["--", sys.executable, str(SCRIPT), kind, "stdio", str(count_file)], count_file
        )
        return
    yield from _listening(kind, transport, count_file)
