"""The legacy era (2024-11-05 … 2025-11-25) with two Connections back to back, no IO."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from mcpcore import (
    LEGACY_VERSIONS,
    CancelRequested,
    Era,
    ErrorReceived,
    Event,
    InvalidMessage,
    LocalProtocolError,
    NotificationReceived,
    Phase,
    ProgressReceived,
    RemoteProtocolError,
    RequestReceived,
    ResponseReceived,
    types,
)
from tests.core.pair import INFO, Pair, server_capabilities


def reply_of(events: Sequence[Event]) -> dict[str, Any]:
    [event] = events
    assert isinstance(event, InvalidMessage), event
    assert event.reply is not None
    decoded: dict[str, Any] = json.loads(event.reply)
    return decoded


def raw_initialize(version: str, request_id: int = 1) -> bytes:
    """An initialize request as another client may send it (ours refuses bad versions)."""
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    return json.dumps(message).encode()


def init_params(version: str = "2025-11-25") -> types.InitializeRequestParams:
    return types.InitializeRequestParams(
        protocol_version=version, capabilities=types.ClientCapabilities(), client_info=INFO
    )


# ---------------------------------------------------------------- the handshake


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_handshake_echoes_a_supported_version(version: str) -> None:
    pair = Pair()
    result = pair.handshake(version)
    assert result.protocol_version == version
    for side in (pair.client, pair.server):
        assert side.phase is Phase.OPERATING
        assert side.era is Era.LEGACY
        assert side.protocol_version == version
    assert pair.server.their_info == INFO
    assert pair.client.their_capabilities == server_capabilities()
    assert pair.check_schema(version) == 3


def test_an_unknown_requested_version_is_answered_with_our_latest() -> None:
    pair = Pair()
    [request] = pair.server.receive(raw_initialize("1999-01-01"))
    assert isinstance(request, RequestReceived)
    # "Otherwise, the server MUST respond with another protocol version it supports.
    # This SHOULD be the latest version supported by the server."
    assert request.protocol_version == "2025-11-25"
    assert pair.server.protocol_version == "2025-11-25"


def test_the_server_negotiates_within_its_own_versions() -> None:
    pair = Pair()
    server = type(pair.server)(pair.server.our_role, supported_versions=("2025-03-26",))
    [event] = server.receive(pair.client.send_request("initialize", init_params())[1])
    assert isinstance(event, RequestReceived)
    assert event.protocol_version == "2025-03-26"


def test_the_initialize_result_must_carry_the_negotiated_version() -> None:
    pair = Pair()
    request = pair.request("initialize", init_params("2025-06-18"))
    wrong = types.InitializeResult(
        protocol_version="2025-11-25", capabilities=server_capabilities(), server_info=INFO
    )
    with pytest.raises(LocalProtocolError):
        pair.server.send_result(request.request_id, wrong)
    # nothing changed: the right answer still goes through
    right = types.InitializeResult(
        protocol_version="2025-06-18", capabilities=server_capabilities(), server_info=INFO
    )
    assert isinstance(pair.answer(request, right).result, types.InitializeResult)


def test_a_client_refuses_a_version_it_does_not_speak() -> None:
    pair = Pair()
    _, data = pair.client.send_request("initialize", init_params())
    pair.server.receive(data)
    reply = (
        b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2099-01-01",'
        b'"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}'
    )
    with pytest.raises(RemoteProtocolError):
        pair.client.receive(reply)
    assert pair.client.phase is Phase.CLOSED
    with pytest.raises(RemoteProtocolError):
        pair.client.receive(b"{}")
    with pytest.raises(LocalProtocolError):
        pair.client.send_request("ping")


def test_a_client_must_offer_a_version_it_supports() -> None:
    pair = Pair()
    with pytest.raises(LocalProtocolError):
        pair.client.send_request("initialize", init_params("2099-01-01"))
    assert pair.client.phase is Phase.IDLE


def test_a_failed_initialize_leaves_the_era_open() -> None:
    pair = Pair()
    request = pair.request("initialize", init_params())
    [event] = pair.to_client(pair.server.send_error(request.request_id, -32603, "boom"))
    assert isinstance(event, ErrorReceived)
    assert event.method == "initialize"
    assert (pair.client.phase, pair.server.phase) == (Phase.IDLE, Phase.IDLE)
    pair.handshake()
    assert (pair.client.phase, pair.server.phase) == (Phase.OPERATING, Phase.OPERATING)


# ------------------------------------------------- what may happen before initialized


def test_the_client_may_only_ping_before_the_handshake_completes() -> None:
    pair = Pair()
    with pytest.raises(LocalProtocolError, match="idle"):
        pair.client.send_request("tools/list")
    pair.request("initialize", init_params())
    with pytest.raises(LocalProtocolError, match="initializing"):
        pair.client.send_request("tools/list")
    pair.request("ping")  # allowed


def test_the_client_sends_initialized_before_anything_else() -> None:
    pair = Pair()
    request = pair.request("initialize", init_params())
    pair.answer(
        request,
        types.InitializeResult(
            protocol_version="2025-11-25", capabilities=server_capabilities(), server_info=INFO
        ),
    )
    assert pair.client.phase is Phase.INITIALIZED
    with pytest.raises(LocalProtocolError):
        pair.client.send_request("tools/list")
    [event] = pair.to_server(pair.client.send_notification("notifications/initialized"))
    assert isinstance(event, NotificationReceived)
    assert pair.server.phase is Phase.OPERATING
    pair.request("tools/list")


def test_the_server_may_only_ping_before_initialized() -> None:
    pair = Pair()
    request = pair.request("initialize", init_params())
    with pytest.raises(LocalProtocolError):
        pair.server.send_request("roots/list")
    with pytest.raises(LocalProtocolError):
        pair.server.send_notification("notifications/tools/list_changed")
    _, ping = pair.server.send_request("ping")
    [event] = pair.to_client(ping)
    assert isinstance(event, RequestReceived)
    assert event.method == "ping"
    pair.answer(
        request,
        types.InitializeResult(
            protocol_version="2025-11-25", capabilities=server_capabilities(), server_info=INFO
        ),
    )
    with pytest.raises(LocalProtocolError):
        pair.server.send_request("roots/list")


def test_a_server_refuses_requests_before_initialize_except_ping() -> None:
    pair = Pair()
    raw = b'{"jsonrpc":"2.0","id":"a","method":"tools/list"}'
    reply = reply_of(pair.server.receive(raw))
    assert reply["id"] == "a"
    assert reply["error"]["code"] == -32600
    [ping] = pair.server.receive(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    assert isinstance(ping, RequestReceived)
    assert (
        pair.server.send_result(2, types.EmptyResult()) == b'{"jsonrpc":"2.0","id":2,"result":{}}'
    )
    assert pair.server.phase is Phase.IDLE


def test_a_second_initialize_is_refused() -> None:
    pair = Pair()
    pair.handshake()
    raw = pair.client.send_request  # the client refuses to send it...
    with pytest.raises(LocalProtocolError):
        raw("initialize", init_params())
    reply = reply_of(pair.server.receive(raw_initialize("2025-11-25", request_id=9)))
    assert reply["error"]["code"] == -32600


def test_a_2026_request_on_a_legacy_connection_is_refused() -> None:
    pair = Pair()
    pair.handshake()
    data = (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    reply = reply_of(pair.server.receive(data))
    assert reply["error"]["code"] == -32600
    assert pair.server.era is Era.LEGACY


# ------------------------------------------------------- methods and capabilities


def test_requests_are_decoded_into_their_params_type() -> None:
    pair = Pair()
    pair.handshake()
    params = types.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2})
    event = pair.request("tools/call", params)
    assert event.params == params
    assert event.protocol_version == "2025-11-25"
    assert event.client_capabilities == pair.client_caps
    response = pair.answer(
        event, types.CallToolResult(content=[types.TextContent(text="3")], is_error=False)
    )
    assert response.method == "tools/call"
    assert isinstance(response.result, types.CallToolResult)
    assert response.result.result_type is types.UNSET  # legacy results carry no resultType
    pair.check_schema("2025-11-25")


def test_an_unadvertised_capability_is_method_not_found() -> None:
    pair = Pair(server_caps=types.ServerCapabilities(tools=types.ServerToolsCapability()))
    pair.handshake()
    # Our client believes the server (handshake() advertised everything), so talk raw.
    reply = reply_of(pair.server.receive(b'{"jsonrpc":"2.0","id":3,"method":"prompts/list"}'))
    assert reply["error"]["code"] == -32601


def test_the_client_refuses_methods_the_server_did_not_advertise() -> None:
    pair = Pair()
    request = pair.request("initialize", init_params())
    only_tools = types.ServerCapabilities(tools=types.ServerToolsCapability())
    pair.answer(
        request,
        types.InitializeResult(
            protocol_version="2025-11-25", capabilities=only_tools, server_info=INFO
        ),
    )
    pair.to_server(pair.client.send_notification("notifications/initialized"))
    pair.request("tools/list")
    with pytest.raises(LocalProtocolError, match="prompts"):
        pair.client.send_request("prompts/list")
    with pytest.raises(LocalProtocolError, match="subscribe"):
        pair.client.send_request("resources/subscribe", types.SubscribeRequestParams(uri="x://y"))


def test_completion_is_not_gated_before_2025_03_26() -> None:
    # The completions capability appeared in 2025-03-26; older servers answer anyway.
    pair = Pair()
    request = pair.request("initialize", init_params("2024-11-05"))
    pair.answer(
        request,
        types.InitializeResult(
            protocol_version="2024-11-05", capabilities=types.ServerCapabilities(), server_info=INFO
        ),
    )
    pair.to_server(pair.client.send_notification("notifications/initialized"))
    params = types.CompleteRequestParams(
        ref=types.PromptReference(name="p"),
        argument=types.CompletionArgument(name="a", value="x"),
    )
    pair.request("completion/complete", params)


def test_methods_exist_only_in_their_revisions() -> None:
    pair = Pair()
    pair.handshake("2025-03-26")
    params = types.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    with pytest.raises(LocalProtocolError, match="does not exist"):
        pair.server.send_request("elicitation/create", params)
    with pytest.raises(LocalProtocolError, match="does not exist"):
        pair.client.send_request("server/discover")


def test_methods_flow_one_way() -> None:
    pair = Pair()
    pair.handshake()
    with pytest.raises(LocalProtocolError, match="can't send"):
        pair.client.send_request("roots/list")
    with pytest.raises(LocalProtocolError, match="can't send"):
        pair.server.send_request("tools/list")
    # and a server→client method sent to a server does not exist there
    reply = reply_of(pair.server.receive(b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}'))
    assert reply["error"]["code"] == -32601


# ------------------------------------------------- server-to-client requests


def test_sampling_round_trip_when_the_client_declared_it() -> None:
    pair = Pair()
    pair.handshake()
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
        max_tokens=100,
    )
    request_id, data = pair.server.send_request("sampling/createMessage", params)
    [event] = pair.to_client(data)
    assert isinstance(event, RequestReceived)
    assert event.params == params
    answer = types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="hello"), model="m"
    )
    [response] = pair.to_server(pair.client.send_result(event.request_id, answer))
    assert isinstance(response, ResponseReceived)
    assert response.request_id == request_id
    assert response.result == answer
    pair.check_schema("2025-11-25")


def test_server_requests_need_the_client_capability() -> None:
    pair = Pair(client_caps=types.ClientCapabilities(elicitation=types.ElicitationCapability()))
    pair.handshake()
    with pytest.raises(LocalProtocolError, match="capability"):
        pair.server.send_request("roots/list")
    sampling = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
        max_tokens=1,
    )
    with pytest.raises(LocalProtocolError, match="capability"):
        pair.server.send_request("sampling/createMessage", sampling)
    # elicitation: {} means form mode only (2025-11-25)
    form = types.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    pair.server.send_request("elicitation/create", form)
    url = types.ElicitRequestURLParams(message="?", url="https://x.example", elicitation_id="e1")
    with pytest.raises(LocalProtocolError, match="capability"):
        pair.server.send_request("elicitation/create", url)


def test_sampling_with_tools_needs_sampling_tools() -> None:
    pair = Pair(client_caps=types.ClientCapabilities(sampling=types.SamplingCapability()))
    pair.handshake()
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
        max_tokens=1,
        tools=[types.Tool(name="t", input_schema={"type": "object"})],
    )
    with pytest.raises(LocalProtocolError):
        pair.server.send_request("sampling/createMessage", params)


def test_a_client_without_roots_answers_method_not_found() -> None:
    pair = Pair(client_caps=types.ClientCapabilities())
    pair.handshake()
    reply = reply_of(pair.client.receive(b'{"jsonrpc":"2.0","id":"r","method":"roots/list"}'))
    assert reply == {
        "jsonrpc": "2.0",
        "id": "r",
        "error": {"code": -32601, "message": "Method not found: roots/list"},
    }


# ----------------------------------------------------------------- cancellation


def test_the_client_cancels_and_the_server_sends_nothing() -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/call", types.CallToolRequestParams(name="slow"))
    [event] = pair.to_server(pair.client.cancel(request.request_id, "user stopped"))
    assert event == CancelRequested(request_id=request.request_id, reason="user stopped")
    assert pair.server.send_result(request.request_id, types.CallToolResult(content=[])) is None
    assert pair.server.requests_in_flight == 0
    pair.check_schema("2025-11-25")


def test_a_late_answer_after_a_cancel_is_dropped_quietly() -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/call", types.CallToolRequestParams(name="slow"))
    late = pair.server.send_result(request.request_id, types.CallToolResult(content=[]))
    pair.client.cancel(request.request_id)  # crosses the answer on the wire
    assert pair.to_client(late) == []
    assert pair.client.pending_requests == ()
    # ... and so is a late error
    request = pair.request("tools/call", types.CallToolRequestParams(name="slow"))
    late = pair.server.send_error(request.request_id, -32603, "late")
    pair.client.cancel(request.request_id)
    assert pair.to_client(late) == []


def test_cancel_after_the_answer_is_a_no_op_and_unknown_ids_are_refused() -> None:
    pair = Pair()
    pair.handshake()
    request_id, data = pair.client.send_request("ping")
    [request] = pair.to_server(data)
    assert isinstance(request, RequestReceived)
    assert pair.client.cancel(request_id) is not None
    assert pair.client.cancel(request_id) is None  # already given up on
    with pytest.raises(LocalProtocolError):
        pair.client.cancel(12345)


def test_initialize_can_not_be_cancelled() -> None:
    pair = Pair()
    request_id, data = pair.client.send_request("initialize", init_params())
    [_] = pair.to_server(data)
    with pytest.raises(LocalProtocolError, match="initialize"):
        pair.client.cancel(request_id)
    # a peer that tries anyway is ignored
    cancel = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    ).encode()
    assert pair.server.receive(cancel) == []
    assert pair.server.requests_in_flight == 1


def test_the_server_cancels_its_own_request() -> None:
    pair = Pair()
    pair.handshake()
    request_id, data = pair.server.send_request("roots/list")
    pair.to_client(data)
    [event] = pair.to_client(pair.server.cancel(request_id))
    assert event == CancelRequested(request_id=request_id)
    assert pair.client.send_result(request_id, types.ListRootsResult(roots=[])) is None


def test_cancelling_an_unknown_or_finished_request_is_ignored() -> None:
    pair = Pair()
    pair.handshake()
    raw = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}'
    assert pair.server.receive(raw) == []
    # the optional-requestId form of 2025-11-25 (task cancellation) changes nothing
    raw = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}'
    assert pair.server.receive(raw) == []


# ----------------------------------------------------------------------- progress


def call_with_progress(pair: Pair, token: int | str = "p1") -> RequestReceived:
    params = types.CallToolRequestParams(name="work", meta={"progressToken": token})
    return pair.request("tools/call", params)


def test_progress_flows_back_to_the_requester() -> None:
    pair = Pair()
    pair.handshake()
    request = call_with_progress(pair)
    assert request.progress_token == "p1"
    seen = []
    for value in (0, 50, 100):
        [event] = pair.to_client(pair.server.send_progress(request.request_id, value, 100, "ok"))
        assert isinstance(event, ProgressReceived)
        seen.append((event.request_id, event.progress, event.total, event.message))
    assert seen == [(request.request_id, v, 100, "ok") for v in (0, 50, 100)]
    pair.answer(request, types.CallToolResult(content=[]))
    pair.check_schema("2025-11-25")


def test_progress_must_increase() -> None:
    pair = Pair()
    pair.handshake()
    request = call_with_progress(pair)
    pair.to_client(pair.server.send_progress(request.request_id, 5))
    with pytest.raises(LocalProtocolError, match="increase"):
        pair.server.send_progress(request.request_id, 5)
    # a peer that breaks the rule is not believed
    raw = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"p1","progress":1}}'
    )
    [event] = pair.client.receive(raw)
    assert isinstance(event, InvalidMessage)
    assert event.reply is None


def test_no_progress_without_a_token_or_after_cancel_or_completion() -> None:
    pair = Pair()
    pair.handshake()
    plain = pair.request("tools/call", types.CallToolRequestParams(name="x"))
    assert pair.server.send_progress(plain.request_id, 1) is None
    request = call_with_progress(pair)
    pair.to_server(pair.client.cancel(request.request_id))
    assert pair.server.send_progress(request.request_id, 1) is None
    done = call_with_progress(pair, "p2")
    progress = pair.server.send_progress(done.request_id, 1)
    pair.answer(done, types.CallToolResult(content=[]))
    with pytest.raises(LocalProtocolError):
        pair.server.send_progress(done.request_id, 2)
    # progress that arrives after the result is dropped: "MUST stop after completion"
    assert pair.to_client(progress) == []


def test_progress_tokens_are_unique_among_active_requests_and_exact() -> None:
    pair = Pair()
    pair.handshake()
    call_with_progress(pair, 7)
    with pytest.raises(LocalProtocolError, match="progress token"):
        pair.client.send_request(
            "tools/call", types.CallToolRequestParams(name="w", meta={"progressToken": 7})
        )
    other = call_with_progress(pair, "7")  # "7" is not 7
    [event] = pair.to_client(pair.server.send_progress(other.request_id, 1))
    assert isinstance(event, ProgressReceived)
    assert event.progress_token == "7"
    assert event.request_id == other.request_id


def test_progress_is_bidirectional_in_the_legacy_era() -> None:
    pair = Pair()
    pair.handshake()
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
        max_tokens=10,
        meta={"progressToken": 1},
    )
    request_id, data = pair.server.send_request("sampling/createMessage", params)
    [request] = pair.to_client(data)
    assert isinstance(request, RequestReceived)
    [event] = pair.to_server(pair.client.send_progress(request.request_id, 0.5))
    assert isinstance(event, ProgressReceived)
    assert event.request_id == request_id
    pair.check_schema("2025-11-25")


def test_a_malformed_progress_token_is_invalid_params() -> None:
    pair = Pair()
    pair.handshake()
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1.5}}}'
    assert reply_of(pair.server.receive(raw))["error"]["code"] == -32602


# ------------------------------------------------------------------------ logging


def test_no_log_message_until_the_client_sets_a_level() -> None:
    pair = Pair()
    pair.handshake()
    assert pair.server.send_log_message("error", "boom") is None
    request = pair.request("logging/setLevel", types.SetLevelRequestParams(level="warning"))
    reply = pair.server.send_result(request.request_id, types.EmptyResult())
    assert reply == b'{"jsonrpc":"2.0","id":2,"result":{}}'  # exactly {}
    assert pair.server.log_level == "warning"
    assert pair.server.send_log_message("info", "quiet") is None
    [event] = pair.to_client(pair.server.send_log_message("error", {"x": 1}, logger="db"))
    assert isinstance(event, NotificationReceived)
    assert event.params == types.LoggingMessageNotificationParams(
        level="error", data={"x": 1}, logger="db"
    )
    pair.check_schema("2025-11-25")


def test_an_invalid_log_level_is_invalid_params() -> None:
    pair = Pair()
    pair.handshake()
    raw = b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}'
    assert reply_of(pair.server.receive(raw))["error"]["code"] == -32602


def test_logging_needs_the_capability() -> None:
    pair = Pair(server_caps=types.ServerCapabilities(tools=types.ServerToolsCapability()))
    pair.handshake()
    with pytest.raises(LocalProtocolError, match="logging"):
        pair.server.send_log_message("error", "x")


# ------------------------------------------------------------------ notifications


def test_list_changed_needs_the_capability() -> None:
    pair = Pair()
    pair.handshake()
    [event] = pair.to_client(pair.server.send_notification("notifications/tools/list_changed"))
    assert isinstance(event, NotificationReceived)
    quiet = Pair(server_caps=types.ServerCapabilities(tools=types.ServerToolsCapability()))
    quiet.handshake()
    with pytest.raises(LocalProtocolError, match="list_changed"):
        quiet.server.send_notification("notifications/tools/list_changed")


def test_tracked_notifications_have_their_own_actions() -> None:
    pair = Pair()
    pair.handshake()
    for method in ("notifications/cancelled", "notifications/progress", "notifications/message"):
        with pytest.raises(LocalProtocolError, match="send"):
            pair.server.send_notification(method)


def test_resource_updated_reaches_the_client() -> None:
    pair = Pair()
    pair.handshake("2025-06-18")
    subscribe = pair.request("resources/subscribe", types.SubscribeRequestParams(uri="file:///a"))
    pair.answer(subscribe, types.EmptyResult())
    params = types.ResourceUpdatedNotificationParams(uri="file:///a")
    [event] = pair.to_client(
        pair.server.send_notification("notifications/resources/updated", params)
    )
    assert isinstance(event, NotificationReceived)
    assert event.params == params
    pair.check_schema("2025-06-18")


# ------------------------------------------------------------------------ batches


def test_batches_are_accepted_in_2025_03_26() -> None:
    pair = Pair()
    pair.handshake("2025-03-26")
    batch = (
        b'[{"jsonrpc":"2.0","id":10,"method":"tools/list"},'
        b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},'
        b'{"jsonrpc":"2.0","id":11,"method":"nope"}]'
    )
    first, second, third = pair.server.receive(batch)
    assert isinstance(first, RequestReceived)
    assert first.request_id == 10
    assert isinstance(second, NotificationReceived)
    assert isinstance(third, InvalidMessage)
    assert third.request_id == 11
    assert third.code == -32601


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_elsewhere(version: str) -> None:
    pair = Pair()
    pair.handshake(version)
    reply = reply_of(pair.server.receive(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'))
    assert reply["error"]["code"] == -32600
    assert "id" not in reply


def test_an_empty_or_broken_batch_is_answered() -> None:
    pair = Pair()
    pair.handshake("2025-03-26")
    assert reply_of(pair.server.receive(b"[]"))["error"]["code"] == -32600
    assert reply_of(pair.server.receive(b"[1, 2"))["error"]["code"] == -32700
    [event] = pair.server.receive(b"[5]")
    assert isinstance(event, InvalidMessage)
    assert event.code == -32600
