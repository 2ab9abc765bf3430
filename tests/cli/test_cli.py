"""The ``mcpcore`` command: installed as a console script, with --help and --version."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

from mcpcore_cli.cli import main
from mcpcore_cli.folder import command
from tests.cli.folder_tree import MCPCORE
from tests.extras import distributions, modules_of
from tests.transports.trio_helpers import PYTHON

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_is_installed_and_reports_its_version() -> None:
    [script] = entry_points(group="console_scripts", name="mcpcore")
    assert script.value == "mcpcore_cli.cli:main"
    command = shutil.which("mcpcore", path=str(Path(sys.executable).parent))
    assert command is not None
    shown = subprocess.run(
        [command, "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    assert shown.stdout.strip() == f"mcpcore {version('mcpcore')}"


def test_help_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert "usage: mcpcore" in capsys.readouterr().out


def test_no_command_prints_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: mcpcore" in capsys.readouterr().err


def test_an_unknown_command_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


# ----------------------------------------------------- installed without the trio extra

#: Loaded at start-up from PYTHONPATH (Python's site hook): a meta-path finder that
#: refuses the modules the trio extra installs, as in a venv with only `pip install mcpcore`.
SITECUSTOMIZE = """\
import sys

BLOCKED = frozenset({blocked!r})


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""
INSTALL_HINT = "which is not installed: pip install 'mcpcore[trio]'"


def without_the_trio_extra(tmp_path: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` where nothing of the trio extra can be imported."""
    blocked = modules_of(distributions(["trio"]) - distributions([]))
    assert {"trio", "h11", "wsproto", "watchfiles", "outcome"} <= blocked
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE.format(blocked=sorted(blocked)))
    path = os.pathsep.join([str(tmp_path), str(ROOT)])
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )


@pytest.mark.parametrize(
    "arguments",
    [
        ["serve"],
        ["serve", ".", "--port", "0"],
        ["serve", "--stdio"],
        ["serve", "--help"],
        ["serve", "--no-such-option"],
    ],
    ids=" ".join,
)
def test_without_the_trio_extra_every_command_says_what_to_install(
    tmp_path: Path, arguments: list[str]
) -> None:
    ran = without_the_trio_extra(tmp_path, MCPCORE, *arguments)
    assert ran.returncode == 2
    assert ran.stdout == ""
    [line] = ran.stderr.splitlines()
    assert line.startswith("mcpcore: needs ")
    assert line.endswith(INSTALL_HINT)


def test_without_the_trio_extra_no_command_shows_the_usage_and_what_to_install(
    tmp_path: Path,
) -> None:
    ran = without_the_trio_extra(tmp_path, MCPCORE)
    assert ran.returncode == 2
    assert ran.stderr.startswith("usage: mcpcore")
    assert ran.stderr.splitlines()[-1].endswith(INSTALL_HINT)
    assert "Traceback" not in ran.stderr


def test_without_the_trio_extra_help_and_version_still_work(tmp_path: Path) -> None:
    shown = without_the_trio_extra(tmp_path, MCPCORE, "--version")
    assert (shown.returncode, shown.stdout.strip()) == (0, f"mcpcore {version('mcpcore')}")
    helped = without_the_trio_extra(tmp_path, MCPCORE, "--help")
    assert helped.returncode == 0
    assert "serve" in helped.stdout
    assert "needs the trio extra" in helped.stdout
    assert helped.stderr == ""


def test_without_the_bench_extra_mcpcore_bench_says_what_to_install(tmp_path: Path) -> None:
    ran = without_the_trio_extra(tmp_path, MCPCORE, "bench", "--quick")
    assert ran.returncode == 2
    [line] = ran.stderr.splitlines()
    assert line.startswith("mcpcore bench: needs ")
    assert line.endswith("which is not installed: pip install -e '.[bench]'")


def test_without_the_trio_extra_the_transports_name_the_extra(tmp_path: Path) -> None:
    ran = without_the_trio_extra(tmp_path, PYTHON, "-c", "from transports import serve_http")
    assert ran.returncode == 1
    assert ran.stderr.splitlines()[-1].startswith("ImportError: transports.serve_http needs ")
    assert ran.stderr.splitlines()[-1].endswith(INSTALL_HINT)


def test_ctrl_c_before_serving_begins_is_a_quiet_exit_130(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # (Ctrl+C while a large folder is still being read: before trio runs.)

    def interrupted(arguments: object, **options: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "run_serve_command", interrupted)
    assert main(["serve", str(tmp_path)]) == 130
