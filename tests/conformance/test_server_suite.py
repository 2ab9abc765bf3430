"""The official conformance suite against the everything server, served four ways.

Issue 5's acceptance: all three server runs pass completely, with at least the checks
the official Python SDK passes (CONFORMANCE.md §0 and §3), and no WARNING (CONFORMANCE
trap 10.1-7: every POST stream of a 2025-11-25 session is primed). The suite (node 22
and both releases) is installed into ``.conformance/`` on first use.

Issue 17's: the same runs, the same assertions, against `transports.AsgiApp`
(``examples.everything:asgi_app``) under a real uvicorn and under hypercorn's trio
worker, and mounted under a prefix in FastAPI (`tests.asgi.servers`). The reference is
``examples/everything.py --transport http`` (`transports.serve_http`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.asgi.servers import everything_endpoint
from tests.conformance.suite import Release, Suite, ensure_suite

#: (release, extra arguments, the baseline of passed checks).
RUNS = [
    pytest.param(("stable", (), 44), id="0.1.16-all"),
    pytest.param(("alpha", ("--spec-version", "2025-11-25"), 84), id="alpha.12-2025-11-25"),
    pytest.param(("alpha", ("--spec-version", "2026-07-28"), 152), id="alpha.12-2026-07-28"),
]


@pytest.fixture(scope="module")
def suite() -> Suite:
    return ensure_suite()


#: How the everything server is served (`tests.asgi.servers.ENDPOINTS`): each runs once
#: for the module's tests (pytest groups the tests by a module-scoped parameter).
SERVED = ["serve_http", "uvicorn", "hypercorn-trio", "fastapi"]


@pytest.fixture(scope="module", params=SERVED)
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with everything_endpoint(request.param) as endpoint:
        yield endpoint


def warnings_in(folder: Path) -> list[str]:
    """``scenario: check`` for every WARNING the saved checks hold."""
    found = []
    for checks in sorted(folder.rglob("checks.json")):
        for check in json.loads(checks.read_text()):
            if check.get("status") == "WARNING":
                found.append(f"{checks.parent.name}: {check.get('id')} {check.get('errorMessage')}")
    return found


@pytest.mark.parametrize("run", RUNS)
def test_the_server_suite_passes(
    suite: Suite, url: str, tmp_path: Path, run: tuple[Release, tuple[str, ...], int]
) -> None:
    release, extra, baseline = run
    result = suite.run(
        release, "server", "--url", url, "--suite", "all", *extra, "-o", str(tmp_path)
    )
    assert result.failed == 0, result.output
    assert result.passed >= baseline, result.output
    assert not warnings_in(tmp_path), (warnings_in(tmp_path), result.output)
