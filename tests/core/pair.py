"""Two Connections back to back, no IO (h11's ConnectionPair idea), with a schema check.

Every message either side emits is recorded, and `Pair.check_schema` validates each
one against the official schema of the revision the conversation uses.
"""

from __future__ import annotations

import json
from typing import Any

from mcpcore import (
    CLIENT,
    LATEST_LEGACY_VERSION,
    LATEST_MODERN_VERSION,
    SERVER,
    Connection,
    Era,
    Event,
    types,
)
from mcpcore.events import InvalidMessage, RequestReceived, ResponseReceived
from tests.oracle import oracle

INFO = types.Implementation(name="test", version="1.0")


def server_capabilities() -> types.ServerCapabilities:
    """A server that advertises everything."""
    return types.ServerCapabilities(
        tools=types.ServerToolsCapability(list_changed=True),
        resources=types.ServerResourcesCapability(subscribe=True, list_changed=True),
        prompts=types.ServerPromptsCapability(list_changed=True),
        completions={},
        logging={},
    )


def client_capabilities() -> types.ClientCapabilities:
    """A client that declares everything."""
    return types.ClientCapabilities(
        roots=types.RootsCapability(list_changed=True),
        sampling=types.SamplingCapability(tools={}),
        elicitation=types.ElicitationCapability(form={}, url={}),
    )


#: Every Pair made during the current test; tests/core/conftest.py checks them all.
LIVE_PAIRS: list[Pair] = []


class Pair:
    """A client and a server Connection wired to each other by hand."""

    def __init__(
        self,
        *,
        server_caps: types.ServerCapabilities | None = None,
        client_caps: types.ClientCapabilities | None = None,
        implementation: types.Implementation | None = INFO,
    ) -> None:
        self.client_caps = client_caps if client_caps is not None else client_capabilities()
        self.client = Connection(
            CLIENT,
            capabilities=self.client_caps,
            implementation=implementation,
        )
        self.server = Connection(
            SERVER,
            capabilities=server_caps if server_caps is not None else server_capabilities(),
            implementation=implementation,
        )
        # (sender, bytes, method of the request a response answers) for the schema check
        self.emitted: list[tuple[str, bytes, str | None]] = []
        self._methods: dict[tuple[str, Any], str] = {}
        LIVE_PAIRS.append(self)

    # -- moving bytes -------------------------------------------------------

    def record(self, sender: str, data: bytes | None) -> None:
        if data is None:
            return
        message = json.loads(data)
        method = None
        if "method" in message and "id" in message:
            self._methods[sender, message["id"]] = message["method"]
        elif "method" not in message and "id" in message:
            peer = "server" if sender == "client" else "client"
            method = self._methods.get((peer, message["id"]))
        self.emitted.append((sender, data, method))

    def forget_last(self, sender: str) -> None:
        """Drop the last message ``sender`` emitted from the schema check: a test sent
        it invalid on purpose, to see the peer refuse it."""
        for index in range(len(self.emitted) - 1, -1, -1):
            if self.emitted[index][0] == sender:
                del self.emitted[index]
                return

    def to_server(self, data: bytes | None) -> list[Event]:
        assert data is not None
        self.record("client", data)
        events = self.server.receive(data)
        self._record_replies("server", events)
        return events

    def to_client(self, data: bytes | None) -> list[Event]:
        assert data is not None
        self.record("server", data)
        events = self.client.receive(data)
        self._record_replies("client", events)
        return events

    def _record_replies(self, sender: str, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, InvalidMessage) and event.reply is not None:
                self.record(sender, event.reply)

    # -- conversations --------------------------------------------------------

    def request(self, method: str, params: Any = None, **kwargs: Any) -> RequestReceived:
        """The client sends a request; return the server's (single) event for it."""
        _, data = self.client.send_request(method, params, **kwargs)
        [event] = self.to_server(data)
        assert isinstance(event, RequestReceived), event
        return event

    def answer(self, request: RequestReceived, result: Any) -> ResponseReceived:
        """The server answers; return the client's event for it."""
        [event] = self.to_client(self.server.send_result(request.request_id, result))
        assert isinstance(event, ResponseReceived), event
        return event

    def handshake(
        self, version: str = LATEST_LEGACY_VERSION, *, instructions: str | None = None
    ) -> types.InitializeResult:
        """Run the legacy initialize handshake to completion."""
        params = types.InitializeRequestParams(
            protocol_version=version,
            capabilities=self.client_caps,
            client_info=INFO,
        )
        request = self.request("initialize", params)
        result = types.InitializeResult(
            protocol_version=request.protocol_version or version,
            capabilities=server_capabilities(),
            server_info=INFO,
            instructions=types.UNSET if instructions is None else instructions,
        )
        response = self.answer(request, result)
        [initialized] = self.to_server(self.client.send_notification("notifications/initialized"))
        assert initialized is not None
        assert isinstance(response.result, types.InitializeResult)
        return response.result

    @staticmethod
    def handshake_client(client: Connection) -> None:
        """Bring a lone client through the handshake with a scripted server."""
        pair = Pair()
        pair.client = client
        pair.handshake()
        LIVE_PAIRS.remove(pair)  # its server is a throwaway

    def go_modern(self) -> None:
        """The client speaks 2026-07-28 from now on."""
        self.client.start_modern()

    # -- the oracle -------------------------------------------------------------

    @property
    def revision(self) -> str:
        """The revision this conversation speaks (the latest legacy one before any)."""
        if self.client.era is Era.MODERN or self.server.era is Era.MODERN:
            return LATEST_MODERN_VERSION
        return self.server.protocol_version or self.client.protocol_version or LATEST_LEGACY_VERSION

    def check_schema(self, revision: str | None = None) -> int:
        """Validate every recorded message against ``revision``; returns how many."""
        revision = revision or self.revision
        schema = oracle(revision)
        for _sender, data, method in self.emitted:
            schema.check(data, method=method)
        return len(self.emitted)
