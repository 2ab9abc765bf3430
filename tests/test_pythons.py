"""The other CPython versions mcpcore supports, each in a virtual environment of its own.

The suite runs on one interpreter (CI's is 3.11), and some code differs by version:
`transports._runtime.primitives.Interruptible` takes anyio's cancel scope on 3.10 (its
tasks have no ``uncancel``) and the task itself on 3.11+; asyncio's cancellation changed
again in 3.12 and 3.13; tomli stands in for tomllib on 3.10. So for each other
supported minor version found here (``python3.10``, ``python3.12``, ``python3.13`` on
the PATH, or among pyenv's versions: this project's machines have them), a fresh virtual
environment gets
mcpcore's runtime requirements (the ``trio``, ``asgi`` and ``redis`` extras) and the
test tools, and runs `SUBSET` of this suite from this checkout: the sans-IO core whole,
and the runtime parts that differ by version on asyncio and trio.

An interpreter that is not found is skipped, unless ``MCPCORE_TESTS_REQUIRE`` names
``pythons`` (CI sets it): then its absence fails, as nginx's does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from tests.deploy.balancer import REQUIRED_VARIABLE
from tests.extras import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

#: The minor versions checked here besides the suite's own (`requires-python` is >= 3.10).
VERSIONS: Final = ("3.10", "3.11", "3.12", "3.13")
#: The tests each version runs: the core, and what differs by version in the runtime.
SUBSET: Final = (
    "tests/core",
    "tests/transports/test_interruptible.py",
    "tests/transports/test_asgi_app.py",
    "tests/deploy/test_task_store.py",
    "tests/deploy/test_orphans.py",
)
#: The test tools the subset needs (besides mcpcore's own requirements).
TOOLS: Final = ("pytest>=8", "pytest-timeout>=2.3", "hypothesis>=6.100", "jsonschema>=4.20")
#: Seconds the installs and the run may take, per version.
INSTALL_TIMEOUT: Final = 600
RUN_TIMEOUT: Final = 600


def _requirements() -> list[str]:
    """mcpcore's runtime requirements with the extras the subset uses, from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    found = [*project["dependencies"], *extras["trio"], *extras["asgi"], *extras["redis"]]
    return sorted(set(found))


def _interpreter(version: str) -> str | None:
    """A ``pythonX.Y`` that really is that version: on the PATH, or among pyenv's versions.

    (pyenv's shim on the PATH runs only the versions selected, hence its folder too.)
    """
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python{version}")]
    candidates += [str(path) for path in sorted(pyenv.glob(f"{version}.*/bin/python{version}"))]
    for candidate in candidates:
        if candidate is None:
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


OTHERS: Final = [v for v in VERSIONS if v != f"{sys.version_info[0]}.{sys.version_info[1]}"]


@pytest.mark.timeout(INSTALL_TIMEOUT + RUN_TIMEOUT)
@pytest.mark.parametrize("version", OTHERS)
def test_the_core_and_the_runtime_pass_on_another_python(version: str, tmp_path: Path) -> None:
    interpreter = _interpreter(version)
    if interpreter is None:
        if "pythons" in os.environ.get(REQUIRED_VARIABLE, "").split(","):
            pytest.fail(f"python{version} is required here ({REQUIRED_VARIABLE}) but not found")
        pytest.skip(f"python{version} is not installed")
    venv = tmp_path / "venv"
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True, timeout=INSTALL_TIMEOUT)
    python = str(venv / "bin" / "python")
    install = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    installed = subprocess.run(
        [*install, *_requirements(), *TOOLS],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        cwd=tmp_path,
        check=False,
    )
    assert installed.returncode == 0, f"python{version}: pip failed\n{installed.stderr[-3000:]}"
    # From this checkout, not an installed copy: `python -m pytest` puts the working
    # folder first on sys.path, so `mcpcore`, `transports` and `tests` are the ones here.
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUBSET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert run.returncode == 0, (
        f"python{version}: {summary[0]}\n{run.stdout[-3000:]}{run.stderr[-2000:]}"
    )
    assert " passed" in summary[0], summary
