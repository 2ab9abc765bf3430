"""The 2026-07-28 era with two Connections back to back, no IO."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpcore import (
    CLIENT,
    MODERN_VERSIONS,
    SERVER,
    CancelRequested,
    Connection,
    Era,
    ErrorReceived,
    InvalidMessage,
    InvalidResponse,
    LocalProtocolError,
    NotificationReceived,
    Phase,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionEnded,
    types,
)
from mcpcore.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
)
from tests.core.pair import INFO, Pair

REVISION = "2026-07-28"


def modern_pair(**kwargs: Any) -> Pair:
    pair = Pair(**kwargs)
    pair.go_modern()
    return pair


def raw_request(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def envelope(version: str = REVISION, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {PROTOCOL_VERSION_META_KEY: version, CLIENT_CAPABILITIES_META_KEY: {}, **(extra or {})}


def error_of(events: list[Any]) -> dict[str, Any]:
    [event] = events
    assert isinstance(event, InvalidMessage), event
    assert event.reply is not None
    reply: dict[str, Any] = json.loads(event.reply)
    error: dict[str, Any] = reply["error"]
    return error


# ------------------------------------------------------------ the request envelope


def test_the_client_stamps_every_request_with_the_envelope() -> None:
    pair = modern_pair()
    event = pair.request("tools/list")
    meta = event.params.meta
    assert meta[PROTOCOL_VERSION_META_KEY] == REVISION
    assert meta[CLIENT_INFO_META_KEY] == {"name": "test", "version": "1.0"}
    assert event.protocol_version == REVISION
    assert event.client_capabilities == pair.client_caps
    assert pair.server.era is Era.MODERN
    assert pair.client.era is Era.MODERN
    pair.check_schema(REVISION)


def test_the_envelope_carries_the_capabilities_declared_last() -> None:
    # A client that fell back to initialize (declaring roots) and failed there, then
    # speaks 2026-07-28 again, stamps the capabilities it declared last, not the ones
    # of its first envelope.
    client = Connection(CLIENT, implementation=INFO)
    client.start_modern()
    _, first = client.send_request("tools/list", request_id=1)
    assert json.loads(first)["params"]["_meta"][CLIENT_CAPABILITIES_META_KEY] == {}
    client.receive(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete"}}')
    client.abandon_modern()
    roots = types.ClientCapabilities(roots=types.RootsCapability())
    hello = types.InitializeRequestParams(
        protocol_version="2025-11-25", capabilities=roots, client_info=INFO
    )
    client.send_request("initialize", hello, request_id=2)
    client.receive(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no"}}')
    client.start_modern()
    _, again = client.send_request("tools/list", request_id=3)
    assert json.loads(again)["params"]["_meta"][CLIENT_CAPABILITIES_META_KEY] == {"roots": {}}


def test_stamping_keeps_the_callers_meta_and_never_mutates_params() -> None:
    pair = modern_pair()
    params = types.CallToolRequestParams(name="t", meta={"traceparent": "00-abc-def-01"})
    event = pair.request("tools/call", params)
    assert event.params.meta["traceparent"] == "00-abc-def-01"
    assert params.meta == {"traceparent": "00-abc-def-01"}


def test_the_server_answers_a_missing_envelope_with_invalid_params() -> None:
    server = Connection(SERVER)
    server.receive(raw_request("tools/list", {"_meta": envelope()}))
    assert server.phase is Phase.MODERN
    assert error_of(server.receive(raw_request("tools/list", request_id=2)))["code"] == -32602
    no_caps = {"_meta": {PROTOCOL_VERSION_META_KEY: REVISION}}
    error = error_of(server.receive(raw_request("tools/list", no_caps, request_id=3)))
    assert error["code"] == -32602
    assert CLIENT_CAPABILITIES_META_KEY in error["message"]


def test_an_unsupported_version_names_what_we_support() -> None:
    server = Connection(SERVER)
    error = error_of(server.receive(raw_request("tools/list", {"_meta": envelope("v999.0.0")})))
    assert error == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": list(MODERN_VERSIONS), "requested": "v999.0.0"},
    }


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({PROTOCOL_VERSION_META_KEY: 2026}, -32602),
        (envelope(extra={CLIENT_CAPABILITIES_META_KEY: "all"}), -32602),
        (envelope(extra={"io.modelcontextprotocol/logLevel": "loud"}), -32602),
        (envelope(extra={CLIENT_INFO_META_KEY: {"name": 1}}), -32602),
    ],
)
def test_a_malformed_envelope_is_invalid_params(meta: dict[str, Any], code: int) -> None:
    server = Connection(SERVER)
    assert error_of(server.receive(raw_request("tools/list", {"_meta": meta})))["code"] == code


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
)
def test_removed_methods_are_method_not_found(method: str) -> None:
    server = Connection(SERVER)
    params = {"_meta": envelope(), "level": "info", "uri": "x://y"}
    error = error_of(server.receive(raw_request(method, params)))
    assert error["code"] == -32601


def test_unknown_methods_check_the_envelope_first() -> None:
    server = Connection(SERVER)
    assert error_of(server.receive(raw_request("nope", {"_meta": envelope()})))["code"] == -32601
    assert server.phase is Phase.IDLE  # a refused request decides nothing
    server.receive(raw_request("tools/list", {"_meta": envelope()}, request_id=1))
    # once 2026-07-28, a bad envelope is reported before the unknown method
    assert error_of(server.receive(raw_request("nope", {}, request_id=2)))["code"] == -32602
    bad_version = {"_meta": envelope("1900-01-01")}
    assert error_of(server.receive(raw_request("nope", bad_version, 3)))["code"] == -32022


def test_initialize_after_a_2026_request_is_answered_with_our_versions() -> None:
    pair = modern_pair()
    pair.request("tools/list")
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    error = error_of(pair.server.receive(raw_request("initialize", init, request_id="i")))
    assert error["code"] == -32022
    assert error["data"] == {"supported": list(MODERN_VERSIONS), "requested": "2025-11-25"}


def test_initialize_carrying_the_envelope_on_a_2026_connection_is_a_removed_method() -> None:
    server = Connection(SERVER)
    server.receive(raw_request("tools/list", {"_meta": envelope()}))
    init = {
        "_meta": envelope(),
        "protocolVersion": "2026-07-28",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    assert error_of(server.receive(raw_request("initialize", init, request_id=2)))["code"] == -32601


def test_a_modern_only_server_names_its_versions_to_a_legacy_client() -> None:
    server = Connection(SERVER, supported_versions=MODERN_VERSIONS)
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    error = error_of(server.receive(raw_request("initialize", init)))
    assert error["code"] == -32022
    assert error["data"]["supported"] == list(MODERN_VERSIONS)
    assert server.phase is Phase.IDLE


def test_capability_gating_is_method_not_found() -> None:
    pair = modern_pair(server_caps=types.ServerCapabilities(tools=types.ServerToolsCapability()))
    _, data = pair.client.send_request("prompts/list")
    assert error_of(pair.to_server(data))["code"] == -32601


# ------------------------------------------------------------------------- results


def test_results_carry_result_type_cache_hints_and_server_info() -> None:
    pair = modern_pair()
    request = pair.request("tools/list")
    result = types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])
    response = pair.answer(request, result)
    got = response.result
    assert isinstance(got, types.ListToolsResult)
    assert got.result_type == "complete"
    assert got.ttl_ms == 0
    assert got.cache_scope == "private"
    assert isinstance(got.meta, dict)
    assert got.meta[SERVER_INFO_META_KEY] == {"name": "test", "version": "1.0"}
    assert result.result_type is types.UNSET  # the caller's object is untouched
    pair.check_schema(REVISION)


def test_explicit_cache_hints_are_kept() -> None:
    pair = modern_pair()
    request = pair.request("resources/read", types.ReadResourceRequestParams(uri="file:///a"))
    contents: list[types.TextResourceContents | types.BlobResourceContents] = [
        types.TextResourceContents(uri="file:///a", text="hi", mime_type="text/plain")
    ]
    result = types.ReadResourceResult(contents=contents, ttl_ms=60_000, cache_scope="public")
    got = pair.answer(request, result).result
    assert (got.ttl_ms, got.cache_scope) == (60_000, "public")
    assert got.contents == contents
    pair.check_schema(REVISION)


def test_discover_round_trip_teaches_the_client_the_capabilities() -> None:
    pair = modern_pair()
    request = pair.request("server/discover")
    capabilities = types.ServerCapabilities(tools=types.ServerToolsCapability())
    result = types.DiscoverResult(
        supported_versions=list(MODERN_VERSIONS),
        capabilities=capabilities,
        ttl_ms=0,
        cache_scope="public",
    )
    response = pair.answer(request, result)
    assert response.result.capabilities == capabilities
    assert pair.client.their_capabilities == capabilities
    with pytest.raises(LocalProtocolError, match="prompts"):
        pair.client.send_request("prompts/list")
    pair.check_schema(REVISION)


def test_a_result_without_result_type_is_complete_and_an_unknown_one_is_invalid() -> None:
    client = Connection(CLIENT)
    client.start_modern()
    request_id, _ = client.send_request("tools/call", types.CallToolRequestParams(name="t"))
    reply = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": []}}).encode()
    [event] = client.receive(reply)
    assert isinstance(event, ResponseReceived)
    request_id, _ = client.send_request("tools/call", types.CallToolRequestParams(name="t"))
    reply = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "task", "taskId": "x"}}
    ).encode()
    [event] = client.receive(reply)
    # "MUST treat an unrecognized resultType as invalid": the request is over, and
    # nothing is sent back (nobody answers a response).
    assert event == InvalidResponse(
        request_id=request_id,
        method="tools/call",
        message="Invalid result for tools/call: Object missing required field `content`",
    )
    assert client.pending_requests == ()


# ------------------------------------------------- missing client capabilities


def test_a_request_that_needs_an_undeclared_capability_gets_32021() -> None:
    pair = modern_pair(client_caps=types.ClientCapabilities(roots=types.RootsCapability()))
    request = pair.request("tools/call", types.CallToolRequestParams(name="needs_sampling"))
    assert pair.server.missing_capabilities(request.request_id, "roots/list") is None
    required = pair.server.missing_capabilities(request.request_id, "sampling/createMessage")
    assert required == types.ClientCapabilities(sampling=types.SamplingCapability())
    [event] = pair.to_client(pair.server.send_missing_capabilities(request.request_id, required))
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32021
    assert event.error.data == {"requiredCapabilities": {"sampling": {}}}
    url = types.ElicitRequestURLParams(message="Log in", url="https://x.example/login")
    other = pair.request("tools/call", types.CallToolRequestParams(name="needs_url"))
    assert pair.server.missing_capabilities(other.request_id, "elicitation/create", url) == (
        types.ClientCapabilities(elicitation=types.ElicitationCapability(url={}))
    )


# ------------------------------------------------------------- multi round-trip


def elicit_request() -> types.ElicitRequest:
    params = types.ElicitRequestFormParams(
        message="Your name?",
        requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    )
    return types.ElicitRequest(params=params)


def test_input_required_round_trip_and_retry() -> None:
    pair = modern_pair()
    first = pair.request("tools/call", types.CallToolRequestParams(name="greet"))
    asking = types.InputRequiredResult(
        input_requests={"who": elicit_request()}, request_state="c2lnbmVk.state+/=="
    )
    response = pair.answer(first, asking)
    result = response.result
    assert isinstance(result, types.InputRequiredResult)
    assert result.result_type == "input_required"
    assert result.input_requests is not types.UNSET
    assert isinstance(result.input_requests["who"], types.ElicitRequest)
    # The retry repeats the params, adds the answers and echoes the state byte for
    # byte, under a new id (2026-07-28 basic/patterns/mrtr).
    retry = types.CallToolRequestParams(
        name="greet",
        input_responses={"who": {"action": "accept", "content": {"name": "Ada"}}},
        request_state=result.request_state,
    )
    second = pair.request("tools/call", retry)
    assert second.request_id != first.request_id
    assert second.params.request_state == "c2lnbmVk.state+/=="
    answer = types.decode_input_response("elicitation/create", second.params.input_responses["who"])
    assert answer == types.ElicitResult(action="accept", content={"name": "Ada"})
    pair.answer(second, types.CallToolResult(content=[types.TextContent(text="Hi Ada")]))
    pair.check_schema(REVISION)


def test_input_required_results_carry_no_cache_hints() -> None:
    pair = modern_pair()
    request = pair.request("resources/read", types.ReadResourceRequestParams(uri="x://y"))
    response = pair.answer(request, types.InputRequiredResult(request_state="s"))
    result = response.result
    assert isinstance(result, types.InputRequiredResult)
    assert not hasattr(result, "ttl_ms")
    pair.check_schema(REVISION)


@pytest.mark.parametrize(
    ("method", "params", "result", "match"),
    [
        ("tools/list", None, types.InputRequiredResult(request_state="s"), "can't answer"),
        ("tools/call", types.CallToolRequestParams(name="t"), types.InputRequiredResult(), "needs"),
        (
            "tools/call",
            types.CallToolRequestParams(name="t"),
            types.InputRequiredResult(
                input_requests={"r": types.ListRootsRequest(id=1)}, request_state="s"
            ),
            "must not carry",
        ),
    ],
)
def test_input_required_results_are_checked(
    method: str, params: Any, result: types.InputRequiredResult, match: str
) -> None:
    pair = modern_pair()
    request = pair.request(method, params)
    with pytest.raises(LocalProtocolError, match=match):
        pair.server.send_result(request.request_id, result)
    assert pair.server.requests_in_flight == 1  # still answerable


@pytest.mark.parametrize(
    "input_request",
    [
        elicit_request(),
        types.ElicitRequest(
            params=types.ElicitRequestURLParams(message="Log in", url="https://x.example/login")
        ),
        types.ListRootsRequest(),
        types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="?"))],
                max_tokens=5,
            )
        ),
    ],
)
def test_never_ask_for_input_the_client_did_not_declare(input_request: Any) -> None:
    pair = modern_pair(client_caps=types.ClientCapabilities())
    request = pair.request("prompts/get", types.GetPromptRequestParams(name="p"))
    asking = types.InputRequiredResult(input_requests={"x": input_request})
    with pytest.raises(LocalProtocolError, match="capability"):
        pair.server.send_result(request.request_id, asking)
    # ... but the same request is fine once the client declares everything
    everything = modern_pair()
    request = everything.request("prompts/get", types.GetPromptRequestParams(name="p"))
    everything.answer(request, asking)
    everything.check_schema(REVISION)


def test_input_required_does_not_exist_in_the_legacy_era() -> None:
    pair = Pair()
    pair.handshake()
    request = pair.request("tools/call", types.CallToolRequestParams(name="t"))
    with pytest.raises(LocalProtocolError, match="2026-07-28"):
        pair.server.send_result(request.request_id, types.InputRequiredResult(request_state="s"))


def test_a_result_of_the_wrong_type_is_refused() -> None:
    pair = modern_pair()
    request = pair.request("tools/call", types.CallToolRequestParams(name="t"))
    with pytest.raises(LocalProtocolError, match="CallToolResult"):
        pair.server.send_result(request.request_id, types.ListToolsResult(tools=[]))


# -------------------------------------------------------------- the server never asks


def test_a_2026_server_sends_no_requests_and_a_client_answers_none() -> None:
    pair = modern_pair()
    pair.request("tools/list")
    with pytest.raises(LocalProtocolError):
        pair.server.send_request("roots/list")
    [event] = pair.client.receive(b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}')
    assert isinstance(event, InvalidMessage)
    assert event.reply is None


def test_progress_flows_server_to_client_only() -> None:
    pair = modern_pair()
    request = pair.request(
        "tools/call", types.CallToolRequestParams(name="t", meta={"progressToken": "a"})
    )
    [event] = pair.to_client(pair.server.send_progress(request.request_id, 1, message="one"))
    assert isinstance(event, ProgressReceived)
    raw = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"a","progress":2}}'
    )
    [ignored] = pair.server.receive(raw)
    assert isinstance(ignored, InvalidMessage)
    assert ignored.reply is None
    pair.check_schema(REVISION)


def test_cancellation_on_a_shared_channel() -> None:
    pair = modern_pair()
    request = pair.request("tools/call", types.CallToolRequestParams(name="t"))
    [event] = pair.to_server(pair.client.cancel(request.request_id))
    assert event == CancelRequested(request_id=request.request_id)
    assert pair.server.send_result(request.request_id, types.CallToolResult(content=[])) is None
    pair.check_schema(REVISION)


# ------------------------------------------------------------------------ logging


def test_log_messages_follow_each_requests_log_level() -> None:
    pair = modern_pair()
    quiet = pair.request("tools/call", types.CallToolRequestParams(name="t"))
    assert pair.server.send_log_message("emergency", "x", request_id=quiet.request_id) is None
    loud_params = types.CallToolRequestParams(
        name="t", meta={"io.modelcontextprotocol/logLevel": "warning"}
    )
    loud = pair.request("tools/call", loud_params)
    assert loud.log_level == "warning"
    assert pair.server.send_log_message("info", "x", request_id=loud.request_id) is None
    [event] = pair.to_client(pair.server.send_log_message("error", "y", request_id=loud.request_id))
    assert isinstance(event, NotificationReceived)
    assert event.method == "notifications/message"
    with pytest.raises(LocalProtocolError, match="name its request"):
        pair.server.send_log_message("error", "z")
    pair.check_schema(REVISION)


# --------------------------------------------------------- subscriptions/listen


def listen(pair: Pair, **flags: Any) -> tuple[Any, RequestReceived]:
    params = types.SubscriptionsListenRequestParams(
        notifications=types.SubscriptionFilter(**flags), meta={}
    )
    request_id, data = pair.client.send_request("subscriptions/listen", params)
    [event] = pair.to_server(data)
    assert isinstance(event, RequestReceived)
    return request_id, event


def test_a_listen_stream_end_to_end() -> None:
    pair = modern_pair()
    listen_id, request = listen(
        pair,
        tools_list_changed=True,
        prompts_list_changed=True,
        resource_subscriptions=["file:///a"],
    )
    honoured = types.SubscriptionFilter(
        tools_list_changed=True, resource_subscriptions=["file:///a"]
    )
    [ack] = pair.to_client(pair.server.acknowledge_subscription(request.request_id, honoured))
    assert isinstance(ack, NotificationReceived)
    assert ack.subscription_id == listen_id
    assert ack.params.notifications == honoured
    [changed] = pair.to_client(
        pair.server.send_subscription_notification(
            request.request_id, "notifications/tools/list_changed"
        )
    )
    assert isinstance(changed, NotificationReceived)
    assert changed.subscription_id == listen_id
    assert changed.params.meta == {SUBSCRIPTION_ID_META_KEY: listen_id}
    updated = types.ResourceUpdatedNotificationParams(uri="file:///a")
    [event] = pair.to_client(
        pair.server.send_subscription_notification(
            request.request_id, "notifications/resources/updated", updated
        )
    )
    assert isinstance(event, NotificationReceived)
    assert event.params.uri == "file:///a"
    # prompts were asked for but not honoured: never sent
    with pytest.raises(LocalProtocolError, match="did not ask"):
        pair.server.send_subscription_notification(
            request.request_id, "notifications/prompts/list_changed"
        )
    [closed] = pair.to_client(pair.server.close_subscription(request.request_id))
    assert isinstance(closed, ResponseReceived)
    assert closed.result.meta[SUBSCRIPTION_ID_META_KEY] == listen_id
    assert closed.result.result_type == "complete"
    pair.check_schema(REVISION)


def test_the_acknowledgement_comes_first_and_honours_a_subset() -> None:
    pair = modern_pair()
    _, request = listen(pair, tools_list_changed=True)
    with pytest.raises(LocalProtocolError, match="acknowledge"):
        pair.server.send_subscription_notification(
            request.request_id, "notifications/tools/list_changed"
        )
    with pytest.raises(LocalProtocolError, match="subset"):
        pair.server.acknowledge_subscription(
            request.request_id, types.SubscriptionFilter(prompts_list_changed=True)
        )
    pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter())
    with pytest.raises(LocalProtocolError, match="already"):
        pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter())


def test_no_progress_or_log_on_a_listen_stream() -> None:
    pair = modern_pair()
    _, request = listen(pair, tools_list_changed=True)
    pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter())
    with pytest.raises(LocalProtocolError):
        pair.server.send_progress(request.request_id, 1)
    with pytest.raises(LocalProtocolError):
        pair.server.send_log_message("error", "x", request_id=request.request_id)
    with pytest.raises(LocalProtocolError):
        pair.server.send_subscription_notification(request.request_id, "notifications/message")


def test_the_server_tears_a_stream_down_with_cancelled() -> None:
    pair = modern_pair()
    listen_id, request = listen(pair, tools_list_changed=True)
    pair.to_client(
        pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter())
    )
    [ended] = pair.to_client(pair.server.cancel_subscription(request.request_id, "shutting down"))
    assert ended == SubscriptionEnded(subscription_id=listen_id, reason="shutting down")
    assert pair.client.pending_requests == ()
    pair.check_schema(REVISION)


def test_the_client_ends_a_stream_by_cancelling_it() -> None:
    pair = modern_pair()
    listen_id, request = listen(pair, tools_list_changed=True)
    [event] = pair.to_server(pair.client.cancel(listen_id))
    assert isinstance(event, CancelRequested)
    assert (
        pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter()) is None
    )
    assert pair.server.close_subscription(request.request_id) is None
    assert pair.server.requests_in_flight == 0


def test_the_client_checks_what_arrives_on_its_streams() -> None:
    pair = modern_pair()
    listen_id, request = listen(pair, tools_list_changed=True)
    before_ack = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: listen_id}},
        }
    ).encode()
    [event] = pair.client.receive(before_ack)
    assert isinstance(event, InvalidMessage)
    pair.to_client(
        pair.server.acknowledge_subscription(request.request_id, types.SubscriptionFilter())
    )
    [event] = pair.client.receive(before_ack)  # now acknowledged, but not asked for
    assert isinstance(event, InvalidMessage)
    unknown = before_ack.replace(json.dumps(listen_id).encode(), b'"nope"')
    [event] = pair.client.receive(unknown)
    assert isinstance(event, InvalidMessage)


def test_too_many_subscriptions_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mcpcore._inflight.MAX_SUBSCRIPTIONS", 2)
    pair = modern_pair()
    listen(pair)
    _, second = listen(pair)
    params = types.SubscriptionsListenRequestParams(
        notifications=types.SubscriptionFilter(), meta={}
    )
    _, data = pair.client.send_request("subscriptions/listen", params)
    assert error_of(pair.to_server(data))["code"] == -32600
    pair.server.close_subscription(second.request_id)
    listen(pair)  # a closed stream frees its place


# ------------------------------------------------------------ choosing the era


def test_a_failed_probe_falls_back_to_the_handshake() -> None:
    legacy_only = Connection(SERVER, supported_versions=("2025-11-25",))
    client = Connection(CLIENT)
    client.start_modern()
    request_id, data = client.send_request("server/discover")
    [refusal] = legacy_only.receive(data)
    assert isinstance(refusal, InvalidMessage)
    assert refusal.reply is not None
    [error] = client.receive(refusal.reply)
    assert isinstance(error, ErrorReceived)
    assert error.request_id == request_id
    client.abandon_modern()
    assert client.phase is Phase.IDLE
    params = types.InitializeRequestParams(
        protocol_version="2025-11-25", capabilities=types.ClientCapabilities(), client_info=INFO
    )
    [init] = legacy_only.receive(client.send_request("initialize", params)[1])
    assert isinstance(init, RequestReceived)


def test_start_and_abandon_modern_are_checked() -> None:
    client = Connection(CLIENT)
    with pytest.raises(LocalProtocolError):
        client.start_modern("2025-11-25")
    client.start_modern()
    client.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="in flight"):
        client.abandon_modern()
    server = Connection(SERVER)
    with pytest.raises(LocalProtocolError, match="client"):
        server.start_modern()


def test_the_first_request_locks_a_stdio_connection_modern() -> None:
    server = Connection(SERVER)
    [event] = server.receive(raw_request("tools/list", {"_meta": envelope()}))
    assert isinstance(event, RequestReceived)
    assert server.era is Era.MODERN
    assert server.protocol_version is None  # modern versions belong to each request


def test_a_legacy_only_server_answers_a_probe_like_a_legacy_server() -> None:
    # -32022 would mean "modern: use these versions, do not fall back"; a server that
    # speaks no 2026-07-28 version must not say it.
    server = Connection(SERVER, supported_versions=("2025-11-25",))
    for method in ("server/discover", "nope"):
        error = error_of(server.receive(raw_request(method, {"_meta": envelope()})))
        assert error["code"] in (-32600, -32601)
