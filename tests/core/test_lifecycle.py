"""The lifecycle tables (mcpcore._state) are complete, and the Connection follows them.

Like h2's state-machine tests: every (side, phase, kind) is tried. A key the tables
leave out is illegal: on our side a `LocalProtocolError` that changes nothing, from the
peer the refusal the table names. And since the rules are lookups, not ``assert``s,
they hold under ``python -O`` too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpcore import (
    CLIENT,
    DEFAULT_METHODS,
    LATEST_LEGACY_VERSION,
    SERVER,
    Connection,
    Direction,
    InvalidMessage,
    LocalProtocolError,
    Phase,
    RequestReceived,
    ResponseReceived,
    Side,
    types,
)
from mcpcore._state import (
    ANSWER_KINDS,
    IGNORED,
    RECEIVING,
    RECEIVING_REQUESTS,
    REFUSED_REQUESTS,
    SENDING,
    STEPS,
    Kind,
    kind_of,
)
from tests.core.pair import INFO, Pair

ROOT = Path(__file__).parent.parent.parent
OPEN_PHASES = [phase for phase in Phase if phase is not Phase.CLOSED]
# What each side can receive at all (the method table decides the rest).
REQUEST_KINDS = {
    SERVER: (Kind.INITIALIZE, Kind.ENVELOPED_INITIALIZE, Kind.PING, Kind.REQUEST, Kind.ENVELOPED),
    CLIENT: (Kind.PING, Kind.REQUEST),
}
NOTIFICATION_KINDS = {
    SERVER: (Kind.INITIALIZED, Kind.CANCELLED, Kind.PROGRESS, Kind.NOTIFICATION),
    CLIENT: (Kind.CANCELLED, Kind.PROGRESS, Kind.LOG, Kind.NOTIFICATION),
}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


# ------------------------------------------------------------ the tables themselves


@pytest.mark.parametrize("side", list(Side))
@pytest.mark.parametrize("phase", OPEN_PHASES)
def test_every_request_is_admitted_or_refused_never_both(side: Side, phase: Phase) -> None:
    for kind in REQUEST_KINDS[side]:
        admitted = kind in RECEIVING_REQUESTS[side][phase]
        refused = kind in REFUSED_REQUESTS[side][phase]
        assert admitted != refused, (side, phase, kind)


@pytest.mark.parametrize("side", list(Side))
@pytest.mark.parametrize("phase", OPEN_PHASES)
def test_every_notification_is_accepted_or_ignored_for_a_reason(side: Side, phase: Phase) -> None:
    for kind in NOTIFICATION_KINDS[side]:
        assert kind in RECEIVING[side][phase] or kind in IGNORED, (side, phase, kind)


def test_a_closed_connection_may_do_nothing_but_close() -> None:
    for side in Side:
        assert not SENDING[side][Phase.CLOSED]
        assert not RECEIVING[side][Phase.CLOSED]
        assert not RECEIVING_REQUESTS[side][Phase.CLOSED]
        assert set(STEPS[side][Phase.CLOSED]) == {next(iter(STEPS[side][Phase.IDLE]))}


def test_plain_requests_never_move_the_lifecycle_when_answered() -> None:
    # The hot paths skip the answer-kind lookup for plain requests.
    assert Kind.REQUEST not in ANSWER_KINDS


# ------------------------------------------------ the Connection follows the tables


def _initialize_params() -> types.InitializeRequestParams:
    return types.InitializeRequestParams(
        protocol_version=LATEST_LEGACY_VERSION,
        capabilities=types.ClientCapabilities(),
        client_info=INFO,
    )


def _initializing(pair: Pair) -> RequestReceived:
    return pair.request("initialize", _initialize_params())


def _initialized(pair: Pair) -> None:
    request = _initializing(pair)
    result = types.InitializeResult(
        protocol_version=LATEST_LEGACY_VERSION,
        capabilities=types.ServerCapabilities(tools=types.ServerToolsCapability()),
        server_info=INFO,
    )
    pair.answer(request, result)


def _modern(pair: Pair) -> None:
    pair.go_modern()
    pair.request("tools/list")


# How to bring both ends of a pair to each phase.
REACH: dict[Phase, Callable[[Pair], object]] = {
    Phase.IDLE: lambda pair: None,
    Phase.INITIALIZING: _initializing,
    Phase.INITIALIZED: _initialized,
    Phase.OPERATING: lambda pair: pair.handshake(),
    Phase.MODERN: _modern,
    Phase.CLOSED: lambda pair: (pair.client.close(), pair.server.close()),
}


def connection_in(side: Side, phase: Phase) -> Connection:
    pair = Pair()
    REACH[phase](pair)
    connection = pair.client if side is CLIENT else pair.server
    assert connection.phase is phase
    return connection


def snapshot(connection: Connection) -> tuple[Any, ...]:
    return (
        connection.phase,
        connection.protocol_version,
        connection.capabilities,
        connection.their_capabilities,
        connection.pending_requests,
        connection.requests_in_flight,
    )


# Notifications with an action of their own: refused by send_notification whatever the phase.
DEDICATED = {
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/subscriptions/acknowledged",
}


def sendable(side: Side) -> list[str]:
    way = Direction.CLIENT_TO_SERVER if side is CLIENT else Direction.SERVER_TO_CLIENT
    return sorted(
        name
        for name, spec in DEFAULT_METHODS.items()
        if spec.direction & way and name not in DEDICATED
    )


@pytest.mark.parametrize("side", list(Side))
@pytest.mark.parametrize("phase", list(Phase))
def test_what_the_table_does_not_allow_raises_and_changes_nothing(side: Side, phase: Phase) -> None:
    connection = connection_in(side, phase)
    for method in sendable(side):
        is_request = DEFAULT_METHODS[method].is_request
        if kind_of(method, request=is_request) in SENDING[side][phase]:
            continue  # allowed by the lifecycle (other rules may still refuse it)
        before = snapshot(connection)
        send = connection.send_request if is_request else connection.send_notification
        with pytest.raises(LocalProtocolError):
            send(method)
        assert snapshot(connection) == before, method


def _request_of_kind(kind: Kind, side: Side) -> bytes:
    method = {Kind.INITIALIZE: "initialize", Kind.ENVELOPED_INITIALIZE: "initialize"}.get(
        kind, "ping" if kind is Kind.PING else "tools/list" if side is SERVER else "roots/list"
    )
    params: dict[str, Any] = {}
    if method == "initialize":
        params = json.loads(msgspec.json.encode(_initialize_params()))
    if kind in (Kind.ENVELOPED, Kind.ENVELOPED_INITIALIZE):
        params["_meta"] = ENVELOPE
    message = {"jsonrpc": "2.0", "id": 99, "method": method, "params": params}
    return json.dumps(message).encode()


@pytest.mark.parametrize("side", list(Side))
@pytest.mark.parametrize("phase", OPEN_PHASES)
def test_a_request_the_phase_does_not_admit_gets_the_tables_refusal(
    side: Side, phase: Phase
) -> None:
    for kind in REQUEST_KINDS[side]:
        refusal = REFUSED_REQUESTS[side][phase].get(kind)
        if refusal is None:
            continue
        connection = connection_in(side, phase)
        before = snapshot(connection)
        [event] = connection.receive(_request_of_kind(kind, side))
        assert isinstance(event, InvalidMessage), (kind, event)
        assert event.code == refusal.code, (kind, event)
        assert (event.reply is not None) is refusal.reply
        assert snapshot(connection) == before


# --------------------------------------------------- what the old asserts let through


def test_a_second_handshake_is_refused_before_anything_changes() -> None:
    # An operating client may not start initialize again; the request must not even be
    # recorded, so the peer's answer to its id is a stray, and the phase stays put.
    pair = Pair()
    pair.handshake()
    before = snapshot(pair.client)
    with pytest.raises(LocalProtocolError, match="operating"):
        pair.client.send_request("initialize", _initialize_params(), request_id=50)
    assert snapshot(pair.client) == before
    result = types.InitializeResult(
        protocol_version=LATEST_LEGACY_VERSION,
        capabilities=types.ServerCapabilities(),
        server_info=INFO,
    )
    stray = b'{"jsonrpc":"2.0","id":50,"result":%b}' % msgspec.json.encode(result)
    [event] = pair.client.receive(stray)
    assert isinstance(event, InvalidMessage)
    assert "unknown request" in event.message
    assert pair.client.phase is Phase.OPERATING


def test_a_modern_client_cant_start_the_handshake() -> None:
    client = Connection(CLIENT)
    client.start_modern()
    with pytest.raises(LocalProtocolError, match="modern"):
        client.send_request("initialize", _initialize_params())
    assert client.pending_requests == ()
    client.abandon_modern()  # nothing in flight: possible
    assert client.phase is Phase.IDLE


# ------------------------------------------------------------------------ abandon


def test_abandon_forgets_a_request_without_a_word() -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/list")
    assert pair.server.requests_in_flight == 1
    assert pair.server.abandon(request.request_id) is True
    assert pair.server.requests_in_flight == 0
    with pytest.raises(LocalProtocolError):
        pair.server.send_result(request.request_id, types.ListToolsResult(tools=[]))
    assert pair.server.abandon(request.request_id) is False  # (not open: nothing happens)
    assert pair.server.abandon("never seen") is False


def test_abandon_forgets_a_cancelled_request_too() -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/list")
    pair.to_server(pair.client.cancel(request.request_id))
    assert pair.server.is_cancelled(request.request_id)
    assert pair.server.abandon(request.request_id) is True
    assert pair.server.requests_in_flight == 0


def test_an_abandoned_initialize_leaves_the_era_open() -> None:
    pair = Pair()
    request = _initializing(pair)
    assert pair.server.phase is Phase.INITIALIZING
    assert pair.server.abandon(request.request_id) is True
    assert (pair.server.phase, pair.server.protocol_version) == (Phase.IDLE, None)
    # The next initialize is served as the first one was.
    [event] = pair.server.receive(_request_of_kind(Kind.INITIALIZE, SERVER))
    assert isinstance(event, RequestReceived)
    assert pair.server.phase is Phase.INITIALIZING


def test_abandon_is_not_an_answer_on_the_wire() -> None:
    # Unlike send_error, abandon returns no bytes for the driver to write or drop.
    pair = Pair()
    pair.handshake()
    request = pair.request("ping")
    assert pair.server.abandon(request.request_id) is True
    _, data = pair.client.send_request("ping")
    [event] = pair.to_server(data)
    assert isinstance(event, RequestReceived)
    [answer] = pair.to_client(pair.server.send_result(event.request_id, types.EmptyResult()))
    assert isinstance(answer, ResponseReceived)


# ------------------------------------------------------------------ python -O


def test_the_core_has_no_assert_statement() -> None:
    # Under python -O an assert is gone: a rule written as one would silently vanish.
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "mcpcore").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assert)
    ]
    assert not found


def test_the_lifecycle_holds_under_python_O() -> None:
    # The connection's tests, run again with assertions stripped from the interpreter.
    # (pytest rewrites the tests' own asserts into plain ifs, so those still check.)
    result = subprocess.run(
        [
            sys.executable,
            "-O",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "ignore::pytest.PytestConfigWarning",
            "-k",
            "not python_O",
            "tests/core/test_lifecycle.py",
            "tests/core/test_connection_legacy.py",
            "tests/core/test_connection_modern.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout


def test_a_connection_holds_no_instance_dict() -> None:
    # Each of the thousands of idle sessions a server may hold pays for its Connection:
    # slotted, a client and server pair of an idle legacy session costs ~6.5 KB in
    # all (bench, layer memory); with an instance dict, 3 KB more.
    for side in (CLIENT, SERVER):
        connection = Connection(side)
        assert not hasattr(connection, "__dict__")
        connection.receive(b"")  # (still a working Connection)
