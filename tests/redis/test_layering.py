"""transports/_redis takes trio's primitives only through `transports._runtime.primitives`.

The client runs under asyncio where trio may not be installed, and under trio through
anyio's streams: a direct ``import trio`` would break the first and bypass the choice
`primitives` makes per call. It also stays below the transports: it imports its own
modules, the runtime's, anyio, hiredis and the standard library, nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.test_layering import imported_names

PACKAGE = Path(__file__).parent.parent.parent / "transports" / "_redis"
FILES = sorted(PACKAGE.glob("*.py"))
ALLOWED_THIRD_PARTY = frozenset({"anyio", "hiredis"})
ALLOWED_OURS = ("transports._redis", "transports._runtime")


def test_the_package_has_modules_to_check() -> None:
    assert {path.name for path in FILES} >= {"client.py", "pubsub.py", "url.py", "errors.py"}


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_a_redis_module_imports_only_what_it_may(path: Path) -> None:
    found = set()
    for name in imported_names(path.read_text()):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY:
            continue
        if top == "transports" and name.startswith(ALLOWED_OURS):
            continue
        found.add(name)
    assert not found, f"{path.name} imports {sorted(found)}"


def test_the_check_catches_a_direct_trio_import() -> None:
    assert "trio" in imported_names("import trio")
    assert "trio" not in sys.stdlib_module_names
    assert "trio" not in ALLOWED_THIRD_PARTY
