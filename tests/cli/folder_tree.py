"""A folder to serve in the ``mcpcore serve`` tests, and the attempts to escape it.

    root = make_tree(tmp_path)          # tmp_path/served, and tmp_path/outside next to it
    with serve_subprocess(root) as url: # `mcpcore serve root --port 0`, its URL
        ...

The tree holds text, binary, nested and hidden files, a symlink inside the folder, and
everything that must never be served: symlinks to a file and to a folder outside it, a
symlink to a hidden file, a FIFO and a socket. `TRAVERSALS` lists URIs that try to get
out, each of which the server refuses with -32602 in both eras; `HIDDEN` lists URIs of
files that exist but are hidden, answered "not found".
"""

from __future__ import annotations

import base64
import os
import selectors
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import trio

from examples.everything import PNG
from mcpcore import NotificationReceived
from tests.transports.trio_helpers import PYTHON

__all__ = [
    "BINARY",
    "HIDDEN",
    "MCPCORE",
    "NOTIFY_WITHIN",
    "START_TIMEOUT",
    "TEXT",
    "TRAVERSALS",
    "Recorder",
    "make_tree",
    "read_line",
    "serve_subprocess",
    "traversal_uris",
]

#: Seconds within which a change must be announced (issue 8's acceptance).
NOTIFY_WITHIN: Final = 2.0
#: Seconds the server process may take to start and print its URL.
START_TIMEOUT: Final = 20.0
#: Seconds of one wait for the server's output (`read_line`).
LINE_WAIT: Final = 0.1
#: The installed console script.
MCPCORE: Final = str(Path(PYTHON).parent / "mcpcore")
TEXT: Final = "# Notes\n\nSome text, and a second line.\n"
BINARY: Final = base64.b64decode(PNG)

#: URIs (relative to the folder's URI, or absolute when they start with "file:") that
#: try to leave the folder or reach what it must not serve: each is refused, -32602.
TRAVERSALS: Final = (
    "../outside/outside.txt",
    "%2e%2e/outside/outside.txt",
    "%2E%2E%2Foutside%2Foutside.txt",
    "notes.md/../../outside/outside.txt",
    "src/%2e%2e/%2e%2e/outside/outside.txt",
    "src%2F..%2F..%2Foutside%2Foutside.txt",
    "./notes.md",
    "src//app.py",
    "escape.txt",
    "escape-dir/secret.txt",
    "pipe",
    "socket",
    "notes.md%00.txt",
    "notes.md?raw=1",
    "notes.md#top",
    "x" * 300,
    "a/" * 2100 + "b",
    "file:///etc/passwd",
    "file:///{outside}/outside.txt",
    "file:///{root}/../outside/outside.txt",
)
#: Files that exist but are hidden (or reached through a symlink to a hidden file):
#: "not found", -32002 in the legacy era and -32602 in 2026-07-28.
HIDDEN: Final = (".env", ".git/config", "hidden-link.txt")


def make_tree(base: Path) -> Path:
    """Build the served folder under ``base`` (and a folder outside it); its path."""
    root = base / "served"
    outside = base / "outside"
    (root / "src" / "util").mkdir(parents=True)
    (root / "data").mkdir()
    (root / ".git").mkdir()
    outside.mkdir()
    (root / "notes.md").write_text(TEXT)
    (root / "data" / "pixel.png").write_bytes(BINARY)
    (root / "src" / "app.py").write_text("def main():\n    return 'app'\n")
    (root / "src" / "util" / "helpers.py").write_text("def helper():\n    return 42\n")
    (root / ".env").write_text("TOKEN=secret\n")
    (root / ".git" / "config").write_text("[core]\n")
    (outside / "outside.txt").write_text("outside\n")
    (outside / "secret.txt").write_text("secret\n")
    (root / "notes-link.md").symlink_to("notes.md")
    (root / "escape.txt").symlink_to(outside / "outside.txt")
    (root / "escape-dir").symlink_to(outside)
    (root / "hidden-link.txt").symlink_to(".env")
    os.mkfifo(root / "pipe")
    path = str(root / "socket")
    assert len(path) < 100, "an AF_UNIX path must fit in sun_path"
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(path)
    return root


def traversal_uris(root: Path, folder_uri: str) -> list[str]:
    """`TRAVERSALS` as full URIs for the folder at ``root``."""
    outside = str(root.parent / "outside").lstrip("/")
    uris = []
    for attempt in TRAVERSALS:
        if attempt.startswith("file:"):
            uris.append(attempt.format(outside=outside, root=str(root).lstrip("/")))
        else:
            uris.append(folder_uri + attempt)
    return uris


@contextmanager
def serve_subprocess(root: Path, *arguments: str) -> Iterator[str]:
    """Run ``mcpcore serve root --port 0 ...`` (HTTP); yields the URL it prints."""
    assert shutil.which(MCPCORE) is not None, "the mcpcore console script is installed"
    process = subprocess.Popen(
        [MCPCORE, "serve", str(root), "--port", "0", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = read_line(process, process.stdout)
        prefix = f"Serving {root.resolve()} at "
        assert line.startswith(prefix), line
        yield line[len(prefix) :].strip()
    finally:
        process.kill()
        process.communicate(timeout=START_TIMEOUT)


def read_line(process: subprocess.Popen[str], stream: Any) -> str:
    """The next line ``process`` writes to ``stream``, within `START_TIMEOUT`.

    (A count of waits of `LINE_WAIT` seconds, not a clock.)
    """
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        for _ in range(round(START_TIMEOUT / LINE_WAIT)):
            if selector.select(timeout=LINE_WAIT):
                line: str = stream.readline()
                if line:
                    return line
            if process.poll() is not None:
                _, stderr = process.communicate()
                raise RuntimeError(f"mcpcore serve exited: {stderr}")
    raise TimeoutError("mcpcore serve printed no URL")


class Recorder:
    """Collects notifications (as an ``on_notification`` callback) and waits for one."""

    def __init__(self) -> None:
        self.received: list[NotificationReceived] = []
        self._changed = trio.Event()

    def __call__(self, event: NotificationReceived) -> None:
        self.received.append(event)
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for(
        self, method: str, uri: str | None = None, *, within: float = NOTIFY_WITHIN
    ) -> NotificationReceived:
        """The first notification of ``method`` (about ``uri``) received, within bounds."""
        with trio.fail_after(within):
            while True:
                for event in self.received:
                    if event.method == method and (uri is None or event.params.uri == uri):
                        return event
                await self._changed.wait()

    def clear(self) -> None:
        """Forget what was received."""
        self.received.clear()
