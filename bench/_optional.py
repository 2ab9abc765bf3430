"""Which comparison libraries can run: installed, and not left out with ``--without``.

The benchmark must run wherever mcpcore runs (CI installs neither the official SDK nor
orjson), so every comparison that needs one of them is optional and shows up as
``n/a`` when it can't run.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

__all__ = ["OPTIONAL", "Availability"]

#: Each optional comparison and the modules it needs.
OPTIONAL: dict[str, tuple[str, ...]] = {
    "sdk": ("mcp", "mcp_types", "pydantic"),
    "orjson": ("orjson",),
}


class Availability:
    """Answers "can this comparison run?" for one benchmark run."""

    def __init__(self, without: Iterable[str] = ()) -> None:
        excluded = frozenset(without)
        unknown = excluded - OPTIONAL.keys()
        if unknown:
            raise ValueError(f"unknown comparisons: {sorted(unknown)}")
        self._available = {
            name: name not in excluded and all(_installed(module) for module in modules)
            for name, modules in OPTIONAL.items()
        }

    def __contains__(self, name: object) -> bool:
        return bool(self._available.get(str(name), False))

    def as_dict(self) -> dict[str, bool]:
        """Each optional comparison and whether it runs."""
        return dict(self._available)


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
