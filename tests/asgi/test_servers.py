"""The ASGI lifespan of `transports.AsgiApp` as the top-level app, under every server.

The conformance suites and the SDK clients (`tests.conformance.test_server_suite`,
`tests.transports.test_http_server_interop`, `tests.asgi.test_ts_client`) show that
each server starts the app's lifespan: legacy sessions only work once it runs the
workers. This shows the other end, under each server issue 17 names: asked to stop as
an operator would (SIGTERM) after serving a session and a 2026-07-28 client's calls, the
server runs the lifespan's shutdown and exits cleanly, within
`tests.asgi.servers.STOP_TIMEOUT`, with nothing logged as an error (a lifespan that failed
to stop is logged by each of them).
"""

from __future__ import annotations

import signal

import pytest

from tests.asgi.plain_http import initialize, send
from tests.asgi.servers import ASGI_SERVERS, asgi_server
from tests.asgi.test_mounts import check_repeated_calls
from tests.transports.http_raw import LEGACY, POST_HEADERS


@pytest.mark.parametrize("name", list(ASGI_SERVERS))
def test_the_server_stops_the_app_cleanly_after_a_session(name: str) -> None:
    with asgi_server(name) as running:
        opened = send(running.origin, "POST", "/mcp", initialize(), POST_HEADERS)
        assert opened.status == 200, opened
        assert opened.result()["protocolVersion"] == LEGACY
        check_repeated_calls(running.origin, "/mcp")  # (2026-07-28, in this server's library)
        # (uvicorn shuts down, then re-raises the signal it caught to its default action.)
        assert running.stop() in (0, -signal.SIGTERM), running.output()
        output = running.output()
    assert "Traceback" not in output, output
    assert "ERROR" not in output, output
