"""The official TypeScript SDK client against `transports.AsgiApp` (issue 17's acceptance).

``@modelcontextprotocol/sdk`` 1.32.x (installed on first use into ``.conformance/`` by
`tests.transports.sdk_installs`, run on the suite's node 22) connects with its
``StreamableHTTPClientTransport`` (`http_ts_client.mjs`): the 2025-11-25 handshake and
a session, then tools, a resource, a prompt, a tool reporting progress on the call's
stream, and the session ended with ``DELETE``. Its transport also opens the session's
``GET`` stream and drops it on close, so the app sees a client hang up on a stream.

It runs against the app under a real uvicorn, under hypercorn's trio worker and
mounted under ``/api`` in FastAPI, as the issue asks, and under the other servers too
(hypercorn's asyncio worker, uvicorn on uvloop, granian: a few hundred milliseconds
each) and in the Starlette mount: one server process each, shared by the module.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any, Final

import pytest

from tests.asgi.servers import ENDPOINTS, everything_endpoint
from tests.conformance.suite import ensure_suite
from tests.transports.sdk_installs import ensure_ts_sdk
from tests.transports.trio_helpers import REPOSITORY

TS_CLIENT: Final = REPOSITORY / "tests" / "asgi" / "http_ts_client.mjs"
#: Seconds the client script may take from start to finish (each of its requests is
#: bounded by 10 s on its own side).
CLIENT_TIMEOUT: Final = 60.0
SIMPLE_TEXT: Final = "This is a simple text response for testing."
STATIC_TEXT: Final = "This is the content of the static text resource."
PROMPT_TEXT: Final = "Prompt with arguments: arg1='first', arg2='second'"


@pytest.fixture(scope="module", params=list(ENDPOINTS))
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with everything_endpoint(request.param) as endpoint:
        yield endpoint


def run_ts_client(url: str) -> dict[str, Any]:
    """Run `http_ts_client.mjs` against ``url``; the JSON document it printed."""
    node = ensure_suite().node
    completed = subprocess.run(
        [str(node), str(TS_CLIENT), str(ensure_ts_sdk()), url],
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    document: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return document


def test_the_typescript_sdk_client_works_against_the_asgi_app(url: str) -> None:
    document = run_ts_client(url)
    assert document["server"] == "mcpcore-everything"
    assert document["protocol"] == "2025-11-25"  # the TS SDK 1.x's latest: a session
    assert document["session"]
    assert document["ended"]  # DELETE answered 2xx (or 405): the SDK dropped the session id
    assert {"test_simple_text", "test_tool_with_progress"} <= set(document["tools"])
    assert document["called"]["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    [contents] = document["resource"]["contents"]
    assert (contents["uri"], contents["text"]) == ("test://static-text", STATIC_TEXT)
    [message] = document["prompt"]["messages"]
    assert message["content"] == {"type": "text", "text": PROMPT_TEXT}
    assert document["slow"]["content"] == [{"type": "text", "text": "Progress test completed"}]
    assert document["progress"] == [[0, 100], [50, 100], [100, 100]]
