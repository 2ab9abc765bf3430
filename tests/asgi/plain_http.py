"""Plain HTTP/1.1 requests to a real server, for the ASGI tests: `http.client`, bounded.

    answer = send(origin, "POST", "/api/mcp", body, POST_HEADERS)
    answer.status, answer.result()           # the JSON-RPC result, JSON or event stream
    with event_stream(origin, "/mcp") as events:
        first = next(events)                 # an `mcpcore.framing.SSEEvent`

Each request has a connection of its own; every read waits at most `REQUEST_TIMEOUT`
seconds, so a server that never answers fails the test instead of hanging it.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from mcpcore.framing import SSEEvent, SSEParser
from tests.transports.http_raw import LEGACY, message

__all__ = ["REQUEST_TIMEOUT", "Answer", "event_stream", "initialize", "send"]

#: Seconds any one read may wait.
REQUEST_TIMEOUT: Final = 10.0


def initialize(version: str = LEGACY) -> bytes:
    """A handshake era's ``initialize`` request (id 0) for ``version``."""
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "tests-asgi", "version": "1"},
    }
    return message("initialize", params, 0)


@dataclass(frozen=True)
class Answer:
    """A response, read whole."""

    status: int
    headers: dict[str, str]
    body: bytes

    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the body (one JSON document, or an event stream)."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            parser = SSEParser()
            events = parser.feed(self.body)
            parser.end_of_stream()
            return [json.loads(event.data) for event in events if event.data]
        return [json.loads(self.body)]

    def result(self) -> Any:
        """The result of the one answer in the body."""
        answers = [each for each in self.messages() if "result" in each or "error" in each]
        assert len(answers) == 1, self
        assert "result" in answers[0], answers[0]
        return answers[0]["result"]


def send(
    origin: str, method: str, path: str, body: bytes = b"", headers: Mapping[str, str] | None = None
) -> Answer:
    """One request on a connection of its own; the whole response."""
    address = urlsplit(origin)
    assert address.hostname is not None
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request(method, path, body=body or None, headers=dict(headers or {}))
        response = connection.getresponse()
        content = response.read()
        fields = {name.lower(): value for name, value in response.getheaders()}
        return Answer(response.status, fields, content)
    finally:
        connection.close()


@contextmanager
def event_stream(origin: str, path: str) -> Iterator[Iterator[SSEEvent]]:
    """GET ``path`` as an event stream; its events as they come (each read bounded)."""
    address = urlsplit(origin)
    assert address.hostname is not None
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request("GET", path, headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        assert response.status == 200, (response.status, response.read())
        yield _events_of(response)
    finally:
        connection.close()


def _events_of(response: http.client.HTTPResponse) -> Iterator[SSEEvent]:
    parser = SSEParser()
    while data := response.read1(65536):
        yield from parser.feed(data)
