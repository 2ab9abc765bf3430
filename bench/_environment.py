"""Where the numbers come from: the machine, the interpreter and the library versions."""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import sys
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "describe"]

#: The distributions whose versions every report records: mcpcore and what it runs on,
#: then the comparisons (the official SDK and what its side runs on), then the chart's.
PACKAGES = (
    "mcpcore",
    "msgspec",
    "trio",
    "h11",
    "wsproto",
    "mcp",
    "mcp-types",
    "pydantic",
    "pydantic-core",
    "anyio",
    "httpx2",
    "starlette",
    "sse-starlette",
    "uvicorn",
    "uvloop",
    "httptools",
    "orjson",
    "matplotlib",
)


def describe() -> dict[str, Any]:
    """A JSON-ready description of this machine, interpreter and library versions."""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "compiler": platform.python_compiler(),
            "executable": sys.executable,
        },
        "machine": {
            "os": f"{platform.system()} {platform.release()}",
            "platform": platform.platform(),
            "architecture": platform.machine(),
            "cpu": _cpu_model(),
            "cpu_count": os.cpu_count(),
            "memory_bytes": _memory_bytes(),
            "load_average": _load_average(),
        },
        "packages": {name: _version(name) for name in PACKAGES},
        "mcpcore_source_sha256": _source_digest("mcpcore"),
        "transports_source_sha256": _source_digest("transports"),
    }


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    return platform.processor() or "unknown"


def _memory_bytes() -> int | None:
    """The machine's memory (Linux's ``MemTotal``), or None where it can't be read."""
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key == "MemTotal" and value.split()[1:] == ["kB"]:
                return int(value.split()[0]) * 1024
    return None


def _load_average() -> list[float] | None:
    if not hasattr(os, "getloadavg"):
        return None
    return [round(value, 2) for value in os.getloadavg()]


def _source_digest(package: str) -> str | None:
    """A digest of the package's ``.py`` files: which tree was measured (0.1.0 says little)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    digest = hashlib.sha256()
    for location in spec.submodule_search_locations:
        root = Path(location)
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()
