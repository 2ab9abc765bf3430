"""The public API is what __all__ says, and every public name is documented.

The idea is trio's test_exports: pin the API so a change to it is a decision.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import mcpcore

PUBLIC_MODULES = [
    "mcpcore",
    "mcpcore.types",
    "mcpcore.framing",
    "mcpcore.http",
    "mcpcore.jsonrpc",
    "mcpcore.versions",
    "mcpcore.server",
    "mcpcore.client",
    "mcpcore.uritemplate",
    "mcpcore.jsonschema",
]

# The top-level API, pinned: a change here is a change users see.
MCPCORE_API = {
    "ALL_VERSIONS",
    "CLIENT",
    "CancelRequested",
    "Connection",
    "DEFAULT_METHODS",
    "Direction",
    "Era",
    "ErrorReceived",
    "Event",
    "InvalidMessage",
    "InvalidResponse",
    "LATEST_LEGACY_VERSION",
    "LATEST_MODERN_VERSION",
    "LATEST_VERSION",
    "LEGACY_VERSIONS",
    "LocalProtocolError",
    "McpError",
    "MAX_JSON_DEPTH",
    "MAX_RECENTLY_CLOSED_IDS",
    "MAX_REQUESTS_IN_FLIGHT",
    "MAX_SUBSCRIPTIONS",
    "MODERN_VERSIONS",
    "MethodSpec",
    "MethodTable",
    "NotificationReceived",
    "Phase",
    "ProgressReceived",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestReceived",
    "ResponseReceived",
    "Role",
    "SERVER",
    "SubscriptionEnded",
    "__version__",
}


def test_the_top_level_api_is_pinned() -> None:
    assert set(mcpcore.__all__) == MCPCORE_API


@pytest.mark.parametrize("name", PUBLIC_MODULES)
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


@pytest.mark.parametrize("name", PUBLIC_MODULES)
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
