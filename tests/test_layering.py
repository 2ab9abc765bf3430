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


# -- transports/ and mcpcore_cli/: arrows point down -----------------------------------

#: The units of the drivers, lowest first: a module may import its own unit and the units
#: listed before it, never one after (ARCHITECTURE.md). `_runtime` knows no transport; the
#: Redis client knows only the runtime; the client core and the neutral HTTP/1.1 + socket
#: layer know no transport either; WebSocket sits on `_net`; Streamable HTTP's server takes
#: WebSocket upgrades on its endpoint; the ASGI app serves that server's router; a
#: deployment of several workers (`_deploy`) answers forwarded requests with the ASGI
#: app's per-request machinery; the package exports them all; the command line is an
#: application on top.
DRIVER_LAYERS = (
    "transports._runtime",
    "transports._redis",
    "transports._client",
    "transports._net",
    "transports._stdio",
    # The WebSocket client authorizes with the HTTP client's authenticators (OAuth's
    # metadata and tokens travel over HTTP), so it sits above them.
    "transports._http.client",
    "transports._websocket",
    "transports._http.server",
    "transports._asgi",
    "transports._deploy",
    "transports",
    "mcpcore_cli",
)
ROOT = CORE.parent
DRIVER_FILES = sorted([*(ROOT / "transports").rglob("*.py"), *(ROOT / "mcpcore_cli").rglob("*.py")])


def unit_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (the longest prefix), or None."""
    matches = [u for u in DRIVER_LAYERS if module == u or module.startswith(u + ".")]
    return max(matches, key=len) if matches else None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str) -> set[str]:
    """Every absolute module an import statement names (``from a.b import c``: a.b, a.b.c)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_driver_layers_have_modules_to_check() -> None:
    units = {unit_of(module_name(path)) for path in DRIVER_FILES}
    assert units == set(DRIVER_LAYERS)


@pytest.mark.parametrize("path", DRIVER_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_driver_modules_import_only_their_layer_and_the_ones_below(path: Path) -> None:
    rank = DRIVER_LAYERS.index(unit_of(module_name(path)) or "")
    above = {
        name
        for name in imported_names(path.read_text())
        if (unit := unit_of(name)) is not None and DRIVER_LAYERS.index(unit) > rank
    }
    assert not above, f"{path} imports {sorted(above)}, above its layer"


def test_the_layer_check_itself_catches_an_upward_import() -> None:
    assert unit_of("transports._http.server.sessions") == "transports._http.server"
    assert unit_of("transports._websocket.upgrade") == "transports._websocket"
    names = imported_names("from transports._http.server import listener")
    assert "transports._http.server.listener" in names
    assert DRIVER_LAYERS.index("transports._http.server") > DRIVER_LAYERS.index("transports._net")


#: The private pieces of the drivers an application of this distribution uses: the
#: exception-group unwrapping of the client openers (`mcpcore_cli.stopping`), the
#: HTTP/1.1 the bench's raw HTTP ceiling speaks (`bench/_http_ceiling.py`: the same
#: code as mcpcore's client and server, so that the ceiling runs under the same rules),
#: and the block an ASGI request runs in (`bench/_asgi_apps.py`'s core floor pays for
#: being cancellable exactly what mcpcore's app pays).
PRIVATE_DRIVER_MODULES_USED = frozenset(
    {"transports._runtime.groups", "transports._net.http1", "transports._runtime.primitives"}
)
APPLICATION_FILES = sorted(
    path
    for folder in ("mcpcore_cli", "examples", "bench")
    for path in (ROOT / folder).rglob("*.py")
)


@pytest.mark.parametrize("path", APPLICATION_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_applications_use_the_public_transports_api(path: Path) -> None:
    names = imported_names(path.read_text())
    allowed = {
        name
        for name in names
        if any(name.startswith(module) for module in PRIVATE_DRIVER_MODULES_USED)
    }
    private = {
        name
        for name in names - allowed
        # (``from transports._net import http1`` names the package too: not a use of it.)
        if name.startswith("transports._") and not any(m.startswith(name + ".") for m in allowed)
    }
    assert not private, f"{path} imports private {sorted(private)}"


# ------------------------------------------------------- no cycles inside the core


def core_modules() -> dict[str, Path]:
    """Every module under mcpcore/, by dotted name (a package by its own name)."""
    modules = {}
    for path in CORE_FILES:
        parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def import_edges(name: str, source: str, known: set[str], *, is_package: bool) -> set[str]:
    """The core modules ``name`` imports: anywhere in ``source``, TYPE_CHECKING included.

    ``from package import name`` is an edge to the submodule when ``name`` is one, else
    to the package. Importing a submodule runs its parent packages first, but that is
    Python's own order, not a dependency of ours, so it is not an edge.
    """
    package = name if is_package else name.rpartition(".")[0]
    edges: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    edges.add(f"{target}.{alias.name}")
                elif target in known:
                    edges.add(target)
    edges.discard(name)
    return edges


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or None."""
    done: set[str] = set()
    for start in sorted(graph):
        path: list[str] = []
        on_path: set[str] = set()
        stack = [(start, iter(sorted(graph[start])))]
        if start in done:
            continue
        path.append(start)
        on_path.add(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif child in on_path:
                return [*path[path.index(child) :], child]
            elif child not in done:
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
                on_path.add(child)
    return None


def test_the_core_modules_form_no_import_cycle() -> None:
    # One concept per module, each importing only modules below it: a cycle (even one
    # hidden behind TYPE_CHECKING or inside a function) means two half-concepts.
    modules = core_modules()
    known = set(modules)
    graph = {
        name: import_edges(name, path.read_text(), known, is_package=path.name == "__init__.py")
        for name, path in modules.items()
    }
    assert sum(len(edges) for edges in graph.values()) > 100  # (the checker sees imports)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_checker_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    hidden = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from mcpcore.methods import MethodSpec\n"
        "def late():\n"
        "    from . import _state\n"
    )
    known = {"mcpcore.methods", "mcpcore._state", "mcpcore._probe"}
    edges = import_edges("mcpcore._probe", hidden, known, is_package=False)
    assert edges == {"mcpcore.methods", "mcpcore._state"}
