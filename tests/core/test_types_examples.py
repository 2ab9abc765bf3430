"""Every official 2026-07-28 example decodes into the type of the same name and re-encodes
to equal JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import mcpcore.types
from mcpcore.types._unions import WireUnion

EXAMPLES = Path(__file__).resolve().parents[1] / "spec" / "examples" / "2026-07-28"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))


def _walk(value: Any) -> list[Any]:
    """Every value nested in ``value``: Struct fields, list items, dict values."""
    found = [value]
    if isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            found += _walk(getattr(value, name))
    elif isinstance(value, list):
        for item in value:
            found += _walk(item)
    elif isinstance(value, dict):
        for item in value.values():
            found += _walk(item)
    return found


def test_examples_folder_is_populated() -> None:
    assert EXAMPLES.is_dir()
    assert len(EXAMPLE_FILES) >= 100
    assert len({path.parent.name for path in EXAMPLE_FILES}) >= 80


@pytest.mark.parametrize(
    "path", EXAMPLE_FILES, ids=[f"{p.parent.name}/{p.stem}" for p in EXAMPLE_FILES]
)
def test_example_round_trips(path: Path) -> None:
    data = path.read_bytes()
    type_ = getattr(mcpcore.types, path.parent.name)

    value = msgspec.json.decode(data, type=type_)

    assert json.loads(msgspec.json.encode(value)) == json.loads(data)
    # The private wire Structs of the untagged unions never reach users.
    assert not any(isinstance(item, WireUnion) for item in _walk(value))
