"""The sans-IO rule: nothing under mcpcore/ touches IO, clocks, randomness or logging."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).parent.parent / "mcpcore"
# DESIGN.md §1: "mcpcore never imports transports, trio, asyncio, anyio, h11, wsproto,
# socket, threading, time, random or logging."
FORBIDDEN = frozenset(
    {
        "anyio",
        "asyncio",
        "h11",
        "logging",
        "random",
        "secrets",
        "selectors",
        "socket",
        "subprocess",
        "threading",
        "time",
        "transports",
        "trio",
        "wsproto",
    }
)


def imported_modules(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            modules.add("<dynamic __import__>")
    return modules


CORE_FILES = sorted(CORE.rglob("*.py"))


def test_the_core_has_modules_to_check() -> None:
    assert len(CORE_FILES) > 10


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_io_library(path: Path) -> None:
    found = imported_modules(path.read_text()) & (FORBIDDEN | {"<dynamic __import__>"})
    assert not found, f"{path} imports {sorted(found)}"


def test_importing_the_core_loads_no_io_library() -> None:
    # Catches transitive imports too: what does `import mcpcore` drag in?
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import mcpcore, mcpcore.types, mcpcore.framing\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    roots = {name.split(".")[0] for name in loaded}
    assert "mcpcore" in roots
    assert not roots & FORBIDDEN, sorted(roots & FORBIDDEN)


def test_the_checker_itself_catches_an_io_import() -> None:
    assert "trio" in imported_modules("import trio.lowlevel")
    assert "socket" in imported_modules("from socket import socket")
    assert "transports" in imported_modules("from transports.runtime import x")
