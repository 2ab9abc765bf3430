"""Each extra of pyproject.toml installs every module the code it serves imports.

A fresh virtualenv with ``pip install -e '.[bench]'`` once failed at ``python -m bench``:
the ``bench`` extra lacked the transports' dependencies. These tests catch that without
building a virtualenv: the modules a part of the repository imports (its own files and
the packages it imports at run time) must come from the distributions its extra
installs (followed through their own requirements).
"""

from __future__ import annotations

from importlib.metadata import packages_distributions
from typing import Final

import pytest
from packaging.utils import canonicalize_name

from tests.extras import ROOT, distributions, python_files, third_party_imports

# (extras installed, the folders whose imports they must satisfy): the core needs its
# dependencies; the transports (and `mcpcore serve`) the trio extra, but for a deployment
# of several workers (`transports._redis`, `transports._deploy`), which needs the redis
# extra besides; the ASGI app the asgi extra (that it runs with trio absent is
# `tests/transports/test_asgi_app.py`'s); JWT access tokens checked against a JWKS
# (`transports.JwtVerifier`) and the OAuth client's `private_key_jwt` signatures the oauth
# extra; the benchmarks drive the core and the transports.
CASES = [
    ([], ["mcpcore"]),
    (["trio"], ["mcpcore", "transports"]),
    (["redis"], ["transports/_redis"]),
    (["trio", "redis"], ["mcpcore", "transports"]),
    (["trio", "oauth"], ["mcpcore", "transports"]),
    (["asgi"], ["mcpcore", "transports/_asgi"]),
    # (and `mcpcore bench`'s installed subcommands: rich, hdrhistogram)
    (["bench"], ["mcpcore", "transports", "bench", "mcpcore_cli/bench"]),
]
#: What only the redis extra brings: left out of the cases without it.
REDIS_ONLY: Final = ("transports/_redis", "transports/_deploy")
#: What only the oauth extra brings (PyJWT, cryptography): left out of the cases without it.
OAUTH_ONLY: Final = (
    "transports/_net/jwt_verifier.py",
    # `private_key_jwt` client assertions, signed by PyJWT (`transports.OAuth`).
    "transports/_http/client/assertion.py",
    # DPoP proofs (RFC 9449), imported by `transports.OAuth` only when it signs one.
    "transports/_http/client/dpop.py",
)
#: Each extra that brings parts of its own, and those parts (the bench extra has them all).
EXTRA_ONLY: Final = {"redis": REDIS_ONLY, "oauth": OAUTH_ONLY}


def missing_modules(extras: list[str], folders: list[str]) -> dict[str, str]:
    """The imported modules that no distribution of the extras provides: where imported."""
    installed = distributions(extras)
    providers = packages_distributions()
    missing: dict[str, str] = {}
    files = python_files(*folders)
    for extra, parts in EXTRA_ONLY.items():
        if extra not in extras and "bench" not in extras:
            left_out = [ROOT / part for part in parts]
            files = [path for path in files if not any(path.is_relative_to(p) for p in left_out)]
    for module, path in third_party_imports(files).items():
        # A module not installed here (an optional one) is taken to be its distribution's
        # namesake: the usual case, and a mismatch then shows up as missing.
        names = {canonicalize_name(name) for name in providers.get(module, [module])}
        if not names & installed:
            missing[module] = str(path)
    return missing


@pytest.mark.parametrize(
    ("extras", "folders"),
    CASES,
    ids=["core", "trio", "redis", "trio+redis", "trio+oauth", "asgi", "bench"],
)
def test_an_extra_installs_what_its_code_imports(extras: list[str], folders: list[str]) -> None:
    assert missing_modules(extras, folders) == {}


def test_the_check_sees_a_missing_distribution() -> None:
    # Without the trio extra the transports' imports are not all there.
    missing = missing_modules([], ["transports"])
    assert {"trio", "wsproto"} <= set(missing)


def test_the_bench_extra_reaches_through_its_requirements() -> None:
    # Transitively: trio (through mcpcore[trio]) requires outcome, which the transports
    # import directly; the official SDK requires anyio.
    installed = distributions(["bench"])
    assert {"trio", "outcome", "mcp", "anyio", "h11", "wsproto"} <= installed
    assert "mcpcore" not in installed
