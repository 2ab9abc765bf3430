"""The official SDKs that still speak WebSocket, installed on demand for the interop tests.

Neither is a dependency of the project: the WebSocket transports were removed from the
Python SDK in 2.x (the project's test extra pins 2.3.0) and were never in the
TypeScript SDK's 2.x packages. So, like the conformance suite (`tests.conformance.suite`),
they are installed once into ``.conformance/`` (git-ignored) and reused:

* `ensure_ts_sdk`: ``@modelcontextprotocol/sdk`` 1.32.x from npm, whose
  ``WebSocketClientTransport`` runs on node 22 (its global ``WebSocket``; node 22 comes
  from `tests.conformance.suite.ensure_suite`);
* `ensure_python_sdk1`: a virtual environment with ``mcp[ws]==1.30.0`` (its
  ``websocket_client`` needs the ``websockets`` package) and uvicorn, for its
  ``websocket_server``.

Each is a no-op once installed (a few milliseconds), so only the first run pays for the
download (about 10 s and 25 s here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from tests.conformance.suite import INSTALL_DIR

__all__ = [
    "PYTHON_SDK1_REQUIREMENTS",
    "TS_SDK_VERSION",
    "ensure_python_sdk1",
    "ensure_ts_sdk",
]

#: The TypeScript SDK release the issue names (1.32.x, the last line with WebSocket).
TS_SDK_VERSION: Final = "1.32.2"
TS_SDK_DIR: Final = INSTALL_DIR / "ts-sdk"
_TS_PACKAGE: Final = f"@modelcontextprotocol/sdk@{TS_SDK_VERSION}"
#: What the Python SDK 1.x environment holds (the SDK's ``ws`` extra is ``websockets``).
PYTHON_SDK1_REQUIREMENTS: Final = ("mcp[ws]==1.30.0", "uvicorn>=0.31")
PYTHON_SDK1_DIR: Final = INSTALL_DIR / "py-sdk1"
#: Seconds one install may take (a few tens of megabytes from the registry).
INSTALL_TIMEOUT: Final = 600
_MARKER: Final = "installed.json"


def ensure_ts_sdk() -> Path:
    """Install the TypeScript SDK into ``.conformance/ts-sdk`` if missing; that folder.

    Raises:
        RuntimeError: npm is not installed.
        subprocess.CalledProcessError: npm failed (the registry unreachable...).
    """
    manifest = TS_SDK_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    if manifest.exists() and json.loads(manifest.read_text())["version"] == TS_SDK_VERSION:
        return TS_SDK_DIR
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the TypeScript SDK (see README)")
    TS_SDK_DIR.mkdir(parents=True, exist_ok=True)
    package = TS_SDK_DIR / "package.json"
    if not package.exists():
        package.write_text('{"name": "ts-sdk-interop", "private": true}\n')
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", _TS_PACKAGE],
        cwd=TS_SDK_DIR,
        check=True,
        timeout=INSTALL_TIMEOUT,
        capture_output=True,
        env={**os.environ, "npm_config_update_notifier": "false"},
    )
    return TS_SDK_DIR


def ensure_python_sdk1() -> Path:
    """Create the Python SDK 1.x environment if missing (or stale); its interpreter.

    Raises:
        subprocess.CalledProcessError: venv or pip failed (the registry unreachable...).
    """
    python = PYTHON_SDK1_DIR / "bin" / "python"
    marker = PYTHON_SDK1_DIR / _MARKER
    wanted = json.dumps(list(PYTHON_SDK1_REQUIREMENTS))
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    subprocess.run(
        [sys.executable, "-m", "venv", "--clear", str(PYTHON_SDK1_DIR)],
        check=True,
        timeout=INSTALL_TIMEOUT,
        capture_output=True,
    )
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *PYTHON_SDK1_REQUIREMENTS],
        check=True,
        timeout=INSTALL_TIMEOUT,
        capture_output=True,
    )
    marker.write_text(wanted)
    return python
