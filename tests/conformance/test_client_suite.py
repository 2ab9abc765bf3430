"""The official conformance suite in client mode, against examples/conformance_client.py.

Every client scenario that needs no OAuth (shared/spec/CONFORMANCE.md §9.2, §9.3), in
both releases and, for 0.2.0-alpha, at both revisions; and the ``auth/*`` scenarios
(§9.4) each release has, at the revisions whose requirement sets hold them, each run
against the suite's own authorization server (`transports.OAuth` does the whole flow: no
mock of our HTTP client). A scenario passes when the suite says so (exit 0: no FAILURE,
no WARNING, the client exited 0) with at least the checks the bar requires: a ✓ with 0
checks proves nothing (§2.5). The negative ``auth/*`` scenarios (a mismatched resource,
issuer or ``iss``) pass when the client refuses to go on, which the suite checks.

The 0.2.0-alpha authorization extensions run too, without a revision (the suite skips
extension scenarios at one): DPoP (``auth/dpop``, ``auth/dpop-nonce``: proofs at the
token endpoint and on every MCP request, and both servers' nonces), enterprise-managed
authorization (SEP-990: token exchange at the identity provider, then the JWT-bearer
grant) and workload identity (``auth/wif-jwt-bearer``).

The scenarios run four at a time, each against its own mock server; ``sse-retry``
measures the delay before the client's reconnection, so it runs on its own, after the
others (§2.4: "run sse-retry on its own").
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Final

import pytest

from tests.conformance.suite import Release, SuiteResult, ensure_suite
from tests.transports.trio_helpers import REPOSITORY

CLIENT: Final = REPOSITORY / "examples" / "conformance_client.py"
#: Scenarios run at once (each is a node mock server plus a Python client process).
PARALLEL: Final = 4

# (release, --spec-version or None, scenario) → the checks it must pass at least: the
# bar of CONFORMANCE.md §9 where it is the whole scenario, more where this client
# exercises more (http-standard-headers counts one check per method it sends).
SCENARIOS: Final[dict[tuple[Release, str | None, str], int]] = {
    ("stable", None, "initialize"): 1,
    ("stable", None, "tools_call"): 1,
    ("stable", None, "elicitation-sep1034-client-defaults"): 5,
    ("stable", None, "sse-retry"): 3,
    ("alpha", "2025-11-25", "initialize"): 1,
    ("alpha", "2025-11-25", "tools_call"): 2,
    ("alpha", "2025-11-25", "elicitation-sep1034-client-defaults"): 5,
    ("alpha", "2025-11-25", "sse-retry"): 3,
    ("alpha", "2025-11-25", "json-schema-2020-12-preservation"): 9,
    ("alpha", "2026-07-28", "tools_call"): 2,
    ("alpha", "2026-07-28", "request-metadata"): 8,
    ("alpha", "2026-07-28", "sep-2322-client-request-state"): 5,
    ("alpha", "2026-07-28", "http-standard-headers"): 9,
    ("alpha", "2026-07-28", "http-custom-headers"): 18,
    ("alpha", "2026-07-28", "http-invalid-tool-headers"): 12,
    ("alpha", "2026-07-28", "json-schema-ref-no-deref"): 1,
    ("alpha", "2026-07-28", "json-schema-2020-12-preservation"): 9,
}
# The auth/* scenarios: (scenario, the checks it passes at least) by where they run.
# R25: in the frozen 2025-11-25 set (and 2026-07-28's); 0.1.16 has them too.
_AUTH_R25: Final = {
    "auth/metadata-default": 18,
    "auth/metadata-var1": 18,
    "auth/metadata-var2": 18,
    "auth/metadata-var3": 18,
    "auth/basic-cimd": 12,
    "auth/scope-from-www-authenticate": 14,
    "auth/scope-from-scopes-supported": 14,
    "auth/scope-omitted-when-undefined": 14,
    "auth/scope-step-up": 22,
    "auth/scope-retry-limit": 26,
    "auth/token-endpoint-auth-basic": 19,
    "auth/token-endpoint-auth-post": 19,
    "auth/token-endpoint-auth-none": 19,
    "auth/pre-registration": 12,
}
# R26: new in the 2026-07-28 set.
_AUTH_R26: Final = {
    "auth/resource-mismatch": 2,
    "auth/offline-access-scope": 12,
    "auth/offline-access-not-supported": 14,
    "auth/authorization-server-migration": 27,
    "auth/iss-supported": 14,
    "auth/iss-not-advertised": 14,
    "auth/iss-supported-missing": 8,
    "auth/iss-wrong-issuer": 8,
    "auth/iss-unexpected": 8,
    "auth/iss-normalized": 8,
    "auth/metadata-issuer-mismatch": 3,
}
# The 2025-03-26 flows and the client-credentials extension: no --spec-version (a
# revision would skip them), in both releases.
_AUTH_UNVERSIONED: Final = {
    "auth/2025-03-26-oauth-metadata-backcompat": 12,
    "auth/2025-03-26-oauth-endpoint-fallback": 7,
    "auth/client-credentials-jwt": 8,
    "auth/client-credentials-basic": 8,
}
# The authorization extensions of 0.2.0-alpha (not in 0.1.16): no --spec-version either.
_AUTH_EXTENSIONS: Final = {
    "auth/dpop": 12,
    "auth/dpop-nonce": 14,
    "auth/wif-jwt-bearer": 8,
    "auth/enterprise-managed-authorization": 9,
}
# What 0.1.16 has of them, and its counts (fewer checks than alpha's in places).
_AUTH_STABLE: Final = {
    "auth/metadata-default": 13,
    "auth/metadata-var1": 13,
    "auth/metadata-var2": 13,
    "auth/metadata-var3": 13,
    "auth/basic-cimd": 13,
    "auth/scope-from-www-authenticate": 14,
    "auth/scope-from-scopes-supported": 14,
    "auth/scope-omitted-when-undefined": 14,
    "auth/scope-step-up": 22,
    "auth/scope-retry-limit": 26,
    "auth/token-endpoint-auth-basic": 18,
    "auth/token-endpoint-auth-post": 18,
    "auth/token-endpoint-auth-none": 18,
    "auth/pre-registration": 13,
    "auth/resource-mismatch": 2,
    "auth/offline-access-scope": 13,
    "auth/offline-access-not-supported": 14,
    **_AUTH_UNVERSIONED,
}
_AUTH_RUNS: Final[list[tuple[Release, str | None, dict[str, int]]]] = [
    ("stable", None, _AUTH_STABLE),
    ("alpha", "2025-11-25", _AUTH_R25),
    ("alpha", "2026-07-28", _AUTH_R25),
    ("alpha", "2026-07-28", _AUTH_R26),
    ("alpha", None, _AUTH_UNVERSIONED),
    ("alpha", None, _AUTH_EXTENSIONS),
]
for _release, _version, _counts in _AUTH_RUNS:
    for _name, _count in _counts.items():
        SCENARIOS[(_release, _version, _name)] = _count
TIMING_SENSITIVE: Final = "sse-retry"

Key = tuple[Release, str | None, str]


def _run(key: Key) -> SuiteResult:
    release, version, scenario = key
    # The suite splits --command on single spaces and appends the URL.
    command = f"{sys.executable} {CLIENT}"
    assert command.count(" ") == 1, "the interpreter's or the script's path has a space"
    arguments = ["client", "--command", command, "--scenario", scenario]
    if version is not None:
        arguments += ["--spec-version", version]
    return ensure_suite().run(release, *arguments)


@pytest.fixture(scope="module")
def results() -> dict[Key, SuiteResult]:
    """Every scenario's result: the others in parallel, then sse-retry alone."""
    ensure_suite()  # once, before the threads
    keys = list(SCENARIOS)
    batch = [key for key in keys if key[2] != TIMING_SENSITIVE]
    with ThreadPoolExecutor(PARALLEL) as pool:
        found = dict(zip(batch, pool.map(_run, batch), strict=True))
    for key in keys:
        if key[2] == TIMING_SENSITIVE:
            found[key] = _run(key)
    return found


@pytest.mark.parametrize(
    "key", list(SCENARIOS), ids=lambda key: f"{key[0]}-{key[1] or 'default'}-{key[2]}"
)
def test_client_scenario(key: Key, results: dict[Key, SuiteResult]) -> None:
    result = results[key]
    assert result.returncode == 0, result.output
    assert result.failed == 0, result.output
    assert result.warnings == 0, result.output
    assert result.passed >= SCENARIOS[key], result.output
