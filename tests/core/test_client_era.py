"""Era detection: the server/discover probe, the initialize fallback (CHECKLIST §6.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import (
    LATEST_LEGACY_VERSION,
    SERVER,
    Connection,
    Era,
    ErrorReceived,
    InvalidResponse,
    LocalProtocolError,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore.client import (
    MAX_PROBES,
    ClientCallbacks,
    ClientSession,
    IncompatibleServerError,
    InvalidServerResponseError,
    McpError,
    _era,
)
from mcpcore.client._era import ProbeAction, judge_handshake_error, judge_probe
from mcpcore.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcpcore.versions import era_of as real_era_of
from tests.core.client_harness import (
    CLIENT_INFO,
    MODERN,
    SERVER_INFO,
    ErrorReply,
    MemoryRequester,
    RawResult,
    Timeout,
    every_message_checked,
    make_session,
    scripted,
    server_capabilities,
)


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def unsupported(*supported: str, requested: str = MODERN) -> ErrorReply:
    return ErrorReply(
        jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )


def legacy_only_server() -> Connection:
    return Connection(
        SERVER,
        supported_versions=(LATEST_LEGACY_VERSION,),
        capabilities=server_capabilities(),
        implementation=SERVER_INFO,
    )


# ---------------------------------------------------------------- auto mode


def test_a_dual_era_server_answers_the_probe_and_the_session_is_modern() -> None:
    session, requester = make_session()
    assert run(session.connect()) is Era.MODERN
    assert requester.methods == ["server/discover"]
    assert session.era is Era.MODERN
    assert session.protocol_version == MODERN
    assert session.server_capabilities == server_capabilities()
    assert session.instructions == "modern instructions"
    # "servers SHOULD include serverInfo in every result's _meta": the server
    # Connection stamps it, and the session reads it.
    assert session.server_info == SERVER_INFO
    assert session.discover_result is not None
    [probe] = requester.requests
    meta = probe["params"]["_meta"]
    assert meta[PROTOCOL_VERSION_META_KEY] == MODERN
    assert meta[CLIENT_CAPABILITIES_META_KEY] == {}
    assert requester.notifications == []  # no handshake, no initialized


def test_b_a_legacy_only_server_refuses_the_probe_and_the_handshake_runs() -> None:
    # A legacy-only server Connection answers the probe as a legacy server would:
    # "initialize first" (-32600), never a -32022 that would claim modern.
    session, requester = make_session(server=legacy_only_server())
    assert run(session.connect()) is Era.LEGACY
    assert requester.methods == ["server/discover", "initialize"]
    first = requester.server_events[0]
    assert first.code == jsonrpc.INVALID_REQUEST  # type: ignore[attr-defined]
    assert [n["method"] for n in requester.notifications] == ["notifications/initialized"]
    assert session.protocol_version == LATEST_LEGACY_VERSION
    assert session.server_info == SERVER_INFO
    assert session.instructions == "legacy instructions"
    assert session.server_capabilities == server_capabilities()
    assert requester.server.phase.value == "operating"  # the handshake completed


@pytest.mark.parametrize(
    "answer",
    [
        ErrorReply(jsonrpc.METHOD_NOT_FOUND, "Method not found"),
        ErrorReply(jsonrpc.INVALID_REQUEST, "Not initialized"),
        ErrorReply(-32000, "Bad Request: No valid session ID provided"),
        ErrorReply(jsonrpc.UNSUPPORTED_PROTOCOL_VERSION, "no data"),
        ErrorReply(jsonrpc.UNSUPPORTED_PROTOCOL_VERSION, "bad data", {"supported": "2026"}),
        unsupported(LATEST_LEGACY_VERSION),  # names a handshake version we speak
        RawResult({"tools": []}),  # not a DiscoverResult: an unusable answer
        RawResult({"supportedVersions": ["2025-06-18"], "capabilities": {}}),  # no modern one
    ],
    ids=[
        "-32601",
        "-32600",
        "-32000",
        "-32022-no-data",
        "-32022-bad-data",
        "-32022-legacy",
        "invalid",
        "discover-legacy-only",
    ],
)
def test_anything_but_modern_evidence_falls_back_to_initialize(answer: Any) -> None:
    # "The fallback MUST NOT be keyed to one specific error code."
    session, requester = make_session(
        server=legacy_only_server(), intercepts={"server/discover": lambda _: answer}
    )
    assert run(session.connect()) is Era.LEGACY
    assert requester.methods == ["server/discover", "initialize"]


def test_c_minus_32022_naming_a_modern_version_we_speak_is_re_probed_once() -> None:
    probes: list[str] = []

    def discover(message: dict[str, Any]) -> Any:
        probes.append(message["params"]["_meta"][PROTOCOL_VERSION_META_KEY])
        if len(probes) == 1:
            return unsupported("2027-01-01", MODERN)
        return RawResult(
            {
                "resultType": "complete",
                "supportedVersions": ["2027-01-01", MODERN],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "private",
            }
        )

    session, requester = make_session(intercepts={"server/discover": discover})
    assert run(session.connect()) is Era.MODERN
    assert probes == [MODERN, MODERN]
    ids = [request["id"] for request in requester.requests]
    assert len(set(ids)) == 2  # each probe is a request of its own
    assert session.server_capabilities == types.ServerCapabilities(
        tools=types.ServerToolsCapability()
    )


def test_the_re_probe_uses_the_best_mutual_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only one modern revision exists; pretend a second one does, to see the choice.
    future = "2027-01-01"
    monkeypatch.setattr(_era, "era_of", lambda v: Era.MODERN if v == future else real_era_of(v))
    monkeypatch.setitem(_era._ORDER, future, len(_era._ORDER))
    ours = (LATEST_LEGACY_VERSION, MODERN, future)
    error = types.Error(
        code=-32022, message="no", data={"supported": [MODERN, "2028-01-01"], "requested": future}
    )
    verdict = judge_probe(
        ErrorReceived(request_id=1, method="server/discover", error=error), ours, may_reprobe=True
    )
    assert (verdict.action, verdict.version) == (ProbeAction.REPROBE, MODERN)
    both = types.Error(code=-32022, message="no", data={"supported": [future, MODERN]})
    verdict = judge_probe(
        ErrorReceived(request_id=1, method="x", error=both), ours, may_reprobe=True
    )
    assert verdict.version == future  # the newest, by the versions table


def test_d_minus_32022_naming_only_unknown_versions_is_incompatible() -> None:
    session, requester = make_session(
        intercepts={"server/discover": lambda _: unsupported("2030-01-01", "2031-01-01")}
    )
    with pytest.raises(IncompatibleServerError) as caught:
        run(session.connect())
    assert caught.value.supported == ("2030-01-01", "2031-01-01")
    assert requester.methods == ["server/discover"]  # no fallback: the server said it all
    assert not isinstance(caught.value, McpError)


def test_e_a_probe_timeout_falls_back_to_legacy() -> None:
    session, requester = make_session(
        server=legacy_only_server(), intercepts={"server/discover": lambda _: Timeout()}
    )
    assert run(session.connect(probe_timeout=0.5)) is Era.LEGACY
    assert requester.methods == ["server/discover", "initialize"]
    assert requester.timeouts[0] == 0.5
    cancelled, initialized = requester.notifications
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == requester.requests[0]["id"]
    assert initialized["method"] == "notifications/initialized"


def test_f_minus_32022_answering_initialize_is_re_probed() -> None:
    # G4: the probe timed out on the client, but the slow dual-era server served it and
    # locked itself into 2026-07-28; its Connection then answers initialize with -32022.
    answers = iter([Timeout(late=None), None])

    def discover(event: RequestReceived) -> Any:
        answer = next(answers)
        return answer if answer is not None else scripted()(event)

    session, requester = make_session(scripted({"server/discover": discover}))
    assert run(session.connect()) is Era.MODERN
    assert requester.methods == ["server/discover", "initialize", "server/discover"]
    initialize_error = requester.server_events[2]
    assert initialize_error.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION  # type: ignore[attr-defined]
    assert session.server_info == SERVER_INFO


def test_a_late_answer_to_a_timed_out_probe_is_dropped_quietly() -> None:
    late = types.DiscoverResult(
        supported_versions=[MODERN], capabilities=types.ServerCapabilities(), ttl_ms=0
    )
    answers = iter([Timeout(late=late), None])

    def discover(event: RequestReceived) -> Any:
        answer = next(answers)
        return answer if answer is not None else scripted()(event)

    session, _ = make_session(scripted({"server/discover": discover}))
    assert run(session.connect()) is Era.MODERN  # the harness asserted the drop


def test_a_re_probe_that_fails_after_initialize_said_modern_raises() -> None:
    calls = iter([Timeout(), ErrorReply(jsonrpc.INTERNAL_ERROR, "boom")])
    session, requester = make_session(
        intercepts={
            "server/discover": lambda _: next(calls),
            "initialize": lambda _: unsupported(MODERN, requested=LATEST_LEGACY_VERSION),
        }
    )
    with pytest.raises(McpError) as caught:
        run(session.connect())
    assert caught.value.code == jsonrpc.INTERNAL_ERROR
    assert requester.methods == ["server/discover", "initialize", "server/discover"]


def test_probes_are_bounded() -> None:
    session, requester = make_session(
        intercepts={
            "server/discover": lambda _: unsupported(MODERN),
            "initialize": lambda _: unsupported(MODERN, requested=LATEST_LEGACY_VERSION),
        }
    )
    with pytest.raises(IncompatibleServerError):
        run(session.connect())
    assert requester.methods.count("server/discover") == MAX_PROBES


def test_initialize_refused_with_no_version_we_speak_is_incompatible() -> None:
    session, _requester = make_session(
        intercepts={
            "server/discover": lambda _: ErrorReply(jsonrpc.METHOD_NOT_FOUND, "nope"),
            "initialize": lambda _: unsupported("1999-01-01", requested=LATEST_LEGACY_VERSION),
        }
    )
    with pytest.raises(IncompatibleServerError) as caught:
        run(session.connect())
    assert caught.value.supported == ("1999-01-01",)


def test_a_failed_handshake_raises_the_servers_error() -> None:
    session, _ = make_session(
        server=legacy_only_server(),
        handler=scripted({"initialize": ErrorReply(jsonrpc.INTERNAL_ERROR, "down")}),
    )
    with pytest.raises(McpError) as caught:
        run(session.connect())
    assert (caught.value.code, caught.value.method) == (jsonrpc.INTERNAL_ERROR, "initialize")
    assert session.era is None  # a failed initialize leaves the era open


def test_an_unusable_initialize_result_is_a_local_judgement() -> None:
    session, _ = make_session(
        intercepts={
            "server/discover": lambda _: Timeout(),
            "initialize": lambda _: RawResult({"protocolVersion": 7}),
        }
    )
    with pytest.raises(InvalidServerResponseError):
        run(session.connect())


def test_a_modern_only_client_cannot_fall_back() -> None:
    session, requester = make_session(server=legacy_only_server(), supported_versions=(MODERN,))
    with pytest.raises(IncompatibleServerError):
        run(session.connect())
    assert requester.methods == ["server/discover"]


def test_a_legacy_only_client_does_not_probe() -> None:
    session, requester = make_session(supported_versions=("2025-06-18",))
    assert run(session.connect()) is Era.LEGACY
    assert requester.methods == ["initialize"]
    assert session.protocol_version == "2025-06-18"


def test_the_handshake_offers_our_latest_version_and_accepts_an_older_answer() -> None:
    server = Connection(
        SERVER,
        supported_versions=("2025-03-26",),
        capabilities=server_capabilities(),
        implementation=SERVER_INFO,
    )
    session, requester = make_session(server=server)
    run(session.connect("legacy"))
    [initialize] = requester.requests
    assert initialize["params"]["protocolVersion"] == LATEST_LEGACY_VERSION
    assert session.protocol_version == "2025-03-26"


# --------------------------------------------------------- legacy and modern modes


def test_legacy_mode_only_shakes_hands() -> None:
    session, requester = make_session()
    assert run(session.connect("legacy")) is Era.LEGACY
    assert requester.methods == ["initialize"]


def test_legacy_mode_against_a_modern_only_server_is_incompatible() -> None:
    session, _ = make_session(
        intercepts={"initialize": lambda _: unsupported(MODERN, requested=LATEST_LEGACY_VERSION)}
    )
    with pytest.raises(IncompatibleServerError, match="without a handshake"):
        run(session.connect("legacy"))


def test_modern_mode_discovers_and_never_falls_back() -> None:
    session, requester = make_session()
    assert run(session.connect("modern")) is Era.MODERN
    assert requester.methods == ["server/discover"]
    session, requester = make_session(server=legacy_only_server())
    with pytest.raises(McpError):
        run(session.connect("modern"))
    assert requester.methods == ["server/discover"]


def test_modern_mode_without_discovery_sends_nothing() -> None:
    session, requester = make_session()
    assert run(session.connect("modern", discover=False)) is Era.MODERN
    assert requester.sent == []
    assert session.server_capabilities is None


def test_modern_mode_timeout_raises() -> None:
    session, _ = make_session(intercepts={"server/discover": lambda _: Timeout()})
    with pytest.raises(TimeoutError):
        run(session.connect("modern"))


def test_connect_twice_or_in_a_bad_mode_is_refused() -> None:
    session, _ = make_session()
    with pytest.raises(ValueError, match="mode"):
        run(session.connect("sideways"))  # type: ignore[arg-type]
    run(session.connect())
    with pytest.raises(LocalProtocolError):
        run(session.connect())


# ---------------------------------------------------------- the table, pure


OURS = (LATEST_LEGACY_VERSION, MODERN)


def error_event(code: int, data: Any = types.UNSET) -> ErrorReceived:
    return ErrorReceived(
        request_id=1, method="server/discover", error=types.Error(code=code, message="m", data=data)
    )


@pytest.mark.parametrize(
    ("outcome", "action"),
    [
        (
            ResponseReceived(
                request_id=1,
                method="server/discover",
                result=types.DiscoverResult(
                    supported_versions=[MODERN], capabilities=types.ServerCapabilities()
                ),
            ),
            ProbeAction.MODERN,
        ),
        (
            ResponseReceived(
                request_id=1,
                method="server/discover",
                result=types.DiscoverResult(
                    supported_versions=["2025-11-25"], capabilities=types.ServerCapabilities()
                ),
            ),
            ProbeAction.LEGACY,
        ),
        (error_event(-32022, {"supported": [MODERN]}), ProbeAction.REPROBE),
        (error_event(-32022, {"supported": ["2025-11-25", "2030-01-01"]}), ProbeAction.LEGACY),
        (error_event(-32022, {"supported": ["2030-01-01"]}), ProbeAction.INCOMPATIBLE),
        (error_event(-32022, {"supported": []}), ProbeAction.LEGACY),
        (error_event(-32022), ProbeAction.LEGACY),
        (error_event(-32601), ProbeAction.LEGACY),
        (error_event(-32020), ProbeAction.LEGACY),
        (
            InvalidResponse(request_id=1, method="server/discover", message="bad"),
            ProbeAction.LEGACY,
        ),
        (TimeoutError(), ProbeAction.LEGACY),
    ],
)
def test_judge_probe(outcome: Any, action: ProbeAction) -> None:
    assert judge_probe(outcome, OURS, may_reprobe=True).action is action


def test_judge_probe_without_reprobes_left() -> None:
    only_modern = error_event(-32022, {"supported": [MODERN]})
    assert judge_probe(only_modern, OURS, may_reprobe=False).action is ProbeAction.INCOMPATIBLE
    with_legacy = error_event(-32022, {"supported": [MODERN, "2025-11-25"]})
    assert judge_probe(with_legacy, OURS, may_reprobe=False).action is ProbeAction.LEGACY


def test_judge_handshake_error() -> None:
    def error(code: int, data: Any = types.UNSET) -> types.Error:
        return types.Error(code=code, message="m", data=data)

    reprobe = judge_handshake_error(error(-32022, {"supported": [MODERN]}), OURS, may_reprobe=True)
    assert reprobe is not None
    assert (reprobe.action, reprobe.version) == (ProbeAction.REPROBE, MODERN)
    stuck = judge_handshake_error(error(-32022, {"supported": [MODERN]}), OURS, may_reprobe=False)
    assert stuck is not None
    assert stuck.action is ProbeAction.INCOMPATIBLE
    unknown = judge_handshake_error(error(-32022, {"supported": ["x"]}), OURS, may_reprobe=True)
    assert unknown is not None
    assert unknown.action is ProbeAction.INCOMPATIBLE
    assert judge_handshake_error(error(-32603), OURS, may_reprobe=True) is None
    assert (
        judge_handshake_error(error(-32022, {"supported": ["2025-11-25"]}), OURS, may_reprobe=True)
        is None
    )


# ------------------------------------------------------- the Connection it uses


def test_the_session_builds_its_connection_from_the_callbacks() -> None:
    async def roots() -> types.ListRootsResult:
        return types.ListRootsResult(roots=[])

    callbacks = ClientCallbacks(roots=roots)
    session, _ = make_session(callbacks=callbacks)
    assert session.connection.capabilities == types.ClientCapabilities(
        roots=types.RootsCapability()
    )
    assert session.connection.implementation == CLIENT_INFO


def test_a_given_connection_must_declare_what_the_callbacks_answer() -> None:
    from mcpcore import CLIENT

    requester = MemoryRequester()
    callbacks = ClientCallbacks()
    good = Connection(CLIENT, capabilities=callbacks.capabilities(), implementation=CLIENT_INFO)
    session = ClientSession(requester, client_info=CLIENT_INFO, connection=good)
    assert session.connection is good
    for bad in (
        Connection(CLIENT, implementation=CLIENT_INFO),
        Connection(CLIENT, capabilities=types.ClientCapabilities(), implementation=None),
        Connection(SERVER, capabilities=types.ClientCapabilities(), implementation=CLIENT_INFO),
    ):
        with pytest.raises(ValueError, match="Connection"):
            ClientSession(requester, client_info=CLIENT_INFO, connection=bad)
    with pytest.raises(ValueError, match="supported_versions"):
        ClientSession(
            requester, client_info=CLIENT_INFO, connection=good, supported_versions=(MODERN,)
        )
