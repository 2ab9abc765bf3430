"""What an install of mcpcore with some extras holds, read from pyproject.toml.

    closure = distributions(["bench"])       # every distribution `pip install .[bench]` installs
    modules_of(closure)                      # the top-level modules they provide
    third_party_imports(files)               # the top-level modules some source files import

Requirements are followed through the installed distributions' metadata (their own
requirements and extras, markers evaluated for this interpreter); ``mcpcore[...]``, the
project's reference to itself, is resolved from pyproject.toml, not from whatever
version of mcpcore is installed.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path
from typing import Any, Final

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

__all__ = [
    "OUR_PACKAGES",
    "PYPROJECT",
    "ROOT",
    "distributions",
    "modules_of",
    "python_files",
    "third_party_imports",
]

ROOT: Final = Path(__file__).resolve().parent.parent
PYPROJECT: Final = ROOT / "pyproject.toml"
#: The top-level packages of this repository (never a third party's).
OUR_PACKAGES: Final = frozenset(
    {"mcpcore", "transports", "mcpcore_cli", "bench", "examples", "tests"}
)


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(PYPROJECT.read_text())["project"]
    return project


def _applies(requirement: Requirement, extras: Iterable[str]) -> bool:
    """Whether ``requirement`` is installed here, for a distribution installed with ``extras``."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def distributions(extras: Iterable[str]) -> set[str]:
    """The canonical names of every distribution ``pip install .[extras]`` installs.

    The project itself is not in the set; a distribution that is not installed here
    is in it, but its own requirements can't be followed (there is no metadata).
    """
    project = _project()
    ours = canonicalize_name(project["name"])
    optional: dict[str, list[str]] = project["optional-dependencies"]
    found: set[str] = set()
    done: set[tuple[str, str]] = set()  # (distribution, extra) pairs already followed
    todo = [(ours, extra) for extra in ("", *extras)]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in done:
            continue
        done.add((name, extra))
        if name == ours:
            texts = optional[extra] if extra else project["dependencies"]
        else:
            try:
                texts = requires(name) or []
            except PackageNotFoundError:
                continue
        for text in texts:
            requirement = Requirement(text)
            if not _applies(requirement, [extra] if extra else []):
                continue
            child = canonicalize_name(requirement.name)
            if child != ours:
                found.add(child)
            todo.extend((child, wanted) for wanted in ("", *sorted(requirement.extras)))
    return found


def modules_of(names: Iterable[str]) -> set[str]:
    """The top-level modules the installed distributions ``names`` provide."""
    wanted = {canonicalize_name(name) for name in names}
    return {
        module
        for module, providers in packages_distributions().items()
        if any(canonicalize_name(provider) in wanted for provider in providers)
    }


def python_files(*folders: str) -> list[Path]:
    """The ``.py`` files under these folders of the repository."""
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def third_party_imports(files: Iterable[Path]) -> dict[str, Path]:
    """Every top-level module ``files`` import that is neither stdlib nor ours: where."""
    found: dict[str, Path] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in OUR_PACKAGES:
                    found.setdefault(top, path)
    return found
