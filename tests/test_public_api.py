"""The public API is what __all__ says, it is pinned, and nobody reaches past it.

The idea is trio's test_exports: pin the API so a change to it is a decision. The story
for a reader: a module whose name has no underscore (`PUBLIC_MODULES`) is one users
import, and its ``__all__`` is listed in tests/public_api.txt; every other module under
mcpcore/ has an underscore in its name and is imported by mcpcore alone.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import mcpcore

ROOT = Path(__file__).parent.parent
PINNED = Path(__file__).parent / "public_api.txt"

PUBLIC_MODULES = [
    "mcpcore",
    "mcpcore.auth",
    "mcpcore.client",
    "mcpcore.errors",
    "mcpcore.events",
    "mcpcore.framing",
    "mcpcore.http",
    "mcpcore.jsonrpc",
    "mcpcore.jsonschema",
    "mcpcore.methods",
    "mcpcore.server",
    "mcpcore.types",
    "mcpcore.uritemplate",
    "mcpcore.versions",
]

#: The drivers' public module: `transports` re-exports what users need (PEP 562, loaded
#: when first used) from its private subpackages. Pinned the same way.
DRIVER_MODULES = ["transports"]
PINNED_MODULES = [*PUBLIC_MODULES, *DRIVER_MODULES]

# Files outside mcpcore/ allowed to import a private mcpcore module, and why. Only tests
# of an internal piece that has no public face: everything else uses the public API.
PRIVATE_IMPORTS_ALLOWED = {
    # The era decision table, tried case by case without a server.
    "tests/core/test_client_era.py",
    # Pagination's cursor trail, and a lower page cap patched into the session.
    "tests/core/test_client_pagination.py",
    # The memos, raced against twins whose memo never recalls.
    "tests/core/test_fuzz.py",
    # The lifecycle tables, checked for completeness key by key.
    "tests/core/test_lifecycle.py",
    # WireUnion, the decoder behind the schema's untagged unions.
    "tests/core/test_types_behaviour.py",
    "tests/core/test_types_examples.py",
}
# Directories that are not ours (the conformance suite, virtual environments).
NOT_OURS = {".conformance", ".venv", ".venv-ci", "node_modules", ".git"}


def read_pinned() -> dict[str, set[str]]:
    pinned: dict[str, set[str]] = {name: set() for name in PINNED_MODULES}
    for line in PINNED.read_text().splitlines():
        if line and not line.startswith("#"):
            module, name = line.split()
            pinned.setdefault(module, set()).add(name)
    return pinned


@pytest.mark.parametrize("name", PINNED_MODULES)
def test_the_public_names_are_pinned(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    pinned = read_pinned()[name]
    assert exported == pinned, {
        "exported, not pinned": sorted(exported - pinned),
        "pinned, not exported": sorted(pinned - exported),
    }


def test_only_public_modules_are_pinned() -> None:
    assert set(read_pinned()) == set(PINNED_MODULES)


def test_every_module_is_public_or_named_private() -> None:
    names = [info.name for info in pkgutil.walk_packages(mcpcore.__path__, "mcpcore.")]
    public_looking = [
        name for name in names if not any(part.startswith("_") for part in name.split(".")[1:])
    ]
    assert sorted(public_looking) == sorted(set(PUBLIC_MODULES) - {"mcpcore"})


@pytest.mark.parametrize("name", PINNED_MODULES)
def test_all_names_exist_once(name: str) -> None:
    # (ruff's RUF022 keeps __all__ in order)
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    assert not [item for item in exported if not hasattr(module, item)]


def _documented_objects(module: ModuleType) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for item in module.__all__:
        value = getattr(module, item)
        if inspect.isclass(value) or inspect.isfunction(value):
            found.append((f"{module.__name__}.{item}", value))
            if inspect.isclass(value):
                for attr, member in vars(value).items():
                    if not attr.startswith("_") and (
                        inspect.isfunction(member) or isinstance(member, property)
                    ):
                        found.append((f"{module.__name__}.{item}.{attr}", member))
    return found


@pytest.mark.parametrize("name", PINNED_MODULES)
def test_every_public_name_has_a_docstring(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    undocumented = [
        qualified
        for qualified, value in _documented_objects(module)
        if not (inspect.getdoc(value) or "").strip()
    ]
    assert not undocumented


def test_every_core_module_has_a_docstring() -> None:
    names = [info.name for info in pkgutil.walk_packages(mcpcore.__path__, "mcpcore.")]
    assert len(names) > 20
    assert not [n for n in names if not importlib.import_module(n).__doc__]


# ------------------------------------------------- nobody reaches past the API


def is_private(module: str) -> bool:
    """Whether ``module`` (dotted) is, or is inside, a private mcpcore module."""
    parts = module.split(".")
    return parts[0] == "mcpcore" and any(part.startswith("_") for part in parts[1:])


def private_imports(source: str) -> Iterator[str]:
    """The private mcpcore modules ``source`` imports (TYPE_CHECKING imports included)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if is_private(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if is_private(node.module):
                yield node.module
            elif node.module.split(".")[0] == "mcpcore":
                for alias in node.names:
                    if is_private(f"{node.module}.{alias.name}"):
                        yield f"{node.module}.{alias.name}"


def outside_files() -> Iterator[Path]:
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] != "mcpcore" and not NOT_OURS & set(relative.parts):
            yield path


def test_nothing_outside_mcpcore_imports_a_private_mcpcore_module() -> None:
    found = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in outside_files()
        if str(path.relative_to(ROOT)) not in PRIVATE_IMPORTS_ALLOWED
        for module in private_imports(path.read_text())
    }
    assert not found


def test_the_allowed_private_imports_are_still_needed() -> None:
    # An exception nobody uses any more is removed, so the list stays honest.
    unused = [
        name
        for name in PRIVATE_IMPORTS_ALLOWED
        if not list(private_imports((ROOT / name).read_text()))
    ]
    assert not unused


def test_the_private_import_check_sees_every_form() -> None:
    assert list(private_imports("import mcpcore._state")) == ["mcpcore._state"]
    assert list(private_imports("from mcpcore.server._pagination import X")) == [
        "mcpcore.server._pagination"
    ]
    assert list(private_imports("from mcpcore.client import _session")) == [
        "mcpcore.client._session"
    ]
    assert list(private_imports("from mcpcore import types, _memo")) == ["mcpcore._memo"]
    assert not list(private_imports("from mcpcore.server import MAX_PAGE_SIZE, Server"))
