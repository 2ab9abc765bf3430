"""The ``mcpcore`` command: installed as a console script, with --help and --version."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

from transports.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_is_installed_and_reports_its_version() -> None:
    [script] = entry_points(group="console_scripts", name="mcpcore")
    assert script.value == "transports.cli:main"
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
