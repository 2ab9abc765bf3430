"""Any bytes, whole or split, give events or RemoteProtocolError, never another exception.

The h11 fuzz invariant, checked with hypothesis over arbitrary bytes, over JSON shaped
like JSON-RPC, through the stdio framer in any chunking, and over state and input with
a rule-based state machine driving a client and a server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcpcore import (
    CLIENT,
    SERVER,
    Connection,
    ErrorReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    LocalProtocolError,
    RemoteProtocolError,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore._memo import Memo
from mcpcore.framing import LineFramer, OversizedMessage
from mcpcore.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from tests.core.pair import Pair
from tests.oracle import oracle

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fresh_connections() -> list[Connection]:
    """A connection in every interesting state, on both sides."""
    legacy = Pair()
    legacy.handshake()
    batches = Pair()
    batches.handshake("2025-03-26")
    modern = Pair()
    modern.go_modern()
    modern.request("tools/list")
    return [
        Connection(SERVER),
        Connection(CLIENT),
        legacy.server,
        legacy.client,
        batches.server,
        modern.server,
        modern.client,
    ]


def feed(connection: Connection, data: bytes) -> list[Event]:
    try:
        events = connection.receive(data)
    except RemoteProtocolError:
        return []
    for event in events:
        if isinstance(event, InvalidMessage) and event.reply is not None:
            # whatever we answer garbage with is itself a valid JSON-RPC message
            oracle("2026-07-28").check(event.reply)
    return events


# JSON values and JSON-RPC-shaped objects, to get past the parser into the logic.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/read",
        "subscriptions/listen",
        "server/discover",
        "sampling/createMessage",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/initialized",
        "notifications/subscriptions/acknowledged",
        "nope",
    ]
)
meta = st.fixed_dictionaries(
    {},
    optional={
        PROTOCOL_VERSION_META_KEY: st.sampled_from(["2026-07-28", "2025-11-25", "x"]) | json_values,
        CLIENT_CAPABILITIES_META_KEY: st.just({}) | json_values,
        "progressToken": st.integers() | st.text(max_size=3) | json_values,
        "io.modelcontextprotocol/subscriptionId": st.integers(0, 3),
    },
)
params = st.fixed_dictionaries(
    {},
    optional={
        "_meta": meta,
        "name": st.text(max_size=4) | json_values,
        "uri": st.text(max_size=4),
        "requestId": st.integers(0, 3) | json_values,
        "progressToken": st.integers(0, 3),
        "progress": st.integers() | json_values,
        "protocolVersion": st.sampled_from(["2025-11-25", "2024-11-05", "2026-07-28"]),
        "capabilities": st.just({}) | json_values,
        "clientInfo": st.just({"name": "c", "version": "1"}) | json_values,
        "notifications": st.just({"toolsListChanged": True}) | json_values,
    },
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | json_values,
        "id": st.integers(0, 3) | st.sampled_from(["0", "1"]) | json_values,
        "method": methods | json_values,
        "params": params | json_values,
        "result": st.just({}) | json_values,
        "error": st.just({"code": -1, "message": "x"}) | json_values,
    },
)


@FUZZ
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    for connection in fresh_connections():
        feed(connection, data)


@FUZZ
@given(message=messages | st.lists(messages, max_size=3))
def test_json_rpc_shaped_input_never_raises(message: Any) -> None:
    data = json.dumps(message).encode()
    for connection in fresh_connections():
        feed(connection, data)


@FUZZ
@given(
    stream=st.lists(
        messages.map(lambda m: json.dumps(m).encode()) | st.binary(max_size=30), max_size=6
    ),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
)
def test_feeding_a_stream_whole_or_split_gives_the_same_events(
    stream: list[bytes], cuts: list[int]
) -> None:
    data = b"\n".join(stream) + b"\n"
    whole = _through_framer(Pair(), [data])
    positions = sorted({cut % (len(data) + 1) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *positions], [*positions, len(data)], strict=True)]
    assert _through_framer(Pair(), chunks) == whole


def _through_framer(pair: Pair, chunks: list[bytes]) -> list[Any]:
    pair.handshake()
    framer = LineFramer(max_message_size=120)
    seen: list[Any] = []
    for chunk in chunks:
        for line in framer.feed(chunk):
            if isinstance(line, OversizedMessage):
                seen.append("oversized")
            else:
                seen.extend(feed(pair.server, line))
    return seen


# ------------------------------------------------------------- state and input


class ConversationMachine(RuleBasedStateMachine):
    """A client and a server, driven by random legal and illegal moves.

    The model: every request the client starts is pending until exactly one event ends
    it (a response, an error, an unusable answer) or the client cancels it; every
    request the server received stays in flight until the server answers it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.pair = Pair()
        self.open_requests: list[RequestReceived] = []  # received by the server, unanswered
        self.pending: set[Any] = set()  # started by the client, not ended

    def to_server(self, data: bytes) -> None:
        for event in feed(self.pair.server, data):
            if isinstance(event, RequestReceived):
                self.open_requests.append(event)
            elif isinstance(event, InvalidMessage) and event.reply is not None:
                self.to_client(event.reply)

    def to_client(self, data: bytes) -> None:
        for event in feed(self.pair.client, data):
            if isinstance(event, (ResponseReceived, ErrorReceived, InvalidResponse)):
                # exactly one of these ends each of our requests
                assert event.request_id is None or event.request_id in self.pending
                self.pending.discard(event.request_id)

    @rule(modern=st.booleans())
    @precondition(lambda self: self.pair.client.era is None)
    def choose_era(self, modern: bool) -> None:
        if modern:
            self.pair.go_modern()
        else:
            self.pair.handshake()

    @rule(method=st.sampled_from(["tools/list", "tools/call", "prompts/get"]), token=st.booleans())
    @precondition(lambda self: self.pair.client.era is not None)
    def client_requests(self, method: str, token: bool) -> None:
        meta = {"progressToken": f"t{len(self.pending)}"} if token else {}
        params: Any = {
            "tools/list": types.PaginatedRequestParams(meta=meta),
            "tools/call": types.CallToolRequestParams(name="t", meta=meta),
            "prompts/get": types.GetPromptRequestParams(name="p", meta=meta),
        }[method]
        try:
            request_id, data = self.pair.client.send_request(method, params)
        except LocalProtocolError:
            return  # a progress token still in use
        self.pending.add(request_id)
        self.to_server(data)

    @rule(index=st.integers(0, 10))
    @precondition(lambda self: bool(self.open_requests))
    def server_answers(self, index: int) -> None:
        request = self.open_requests.pop(index % len(self.open_requests))
        result: Any = {
            "tools/list": types.ListToolsResult(tools=[]),
            "tools/call": types.CallToolResult(content=[]),
            "prompts/get": types.GetPromptResult(messages=[]),
            "resources/read": types.ReadResourceResult(contents=[]),
            "ping": types.EmptyResult(),
        }.get(request.method)
        if result is None:
            # Garbage that happened to be some other valid request: an error ends any.
            data = self.pair.server.send_error(request.request_id, -32603, "Internal error")
        else:
            data = self.pair.server.send_result(request.request_id, result)
        if data is not None:
            self.to_client(data)

    @rule(index=st.integers(0, 10), value=st.floats(0, 100))
    @precondition(lambda self: bool(self.open_requests))
    def server_reports_progress(self, index: int, value: float) -> None:
        request = self.open_requests[index % len(self.open_requests)]
        try:
            data = self.pair.server.send_progress(request.request_id, value)
        except LocalProtocolError:
            return  # not increasing, or a listen stream
        if data is not None:
            self.to_client(data)

    @rule(index=st.integers(0, 10), deliver=st.booleans())
    @precondition(lambda self: bool(self.pending))
    def client_cancels(self, index: int, deliver: bool) -> None:
        pending = sorted(self.pending, key=repr)
        request_id = pending[index % len(pending)]
        data = self.pair.client.cancel(request_id)
        self.pending.discard(request_id)
        if deliver and data is not None:
            self.to_server(data)

    @rule(data=st.binary(max_size=40) | messages.map(lambda m: json.dumps(m).encode()))
    def garbage_to_either_side(self, data: bytes) -> None:
        self.to_server(data)
        self.to_client(data)

    @invariant()
    def the_client_tracks_exactly_its_unfinished_requests(self) -> None:
        assert set(self.pair.client.pending_requests) == self.pending

    @invariant()
    def the_server_holds_exactly_its_unanswered_requests(self) -> None:
        assert self.pair.server.requests_in_flight == len(self.open_requests)


ConversationMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None
)
test_conversation_state_machine = ConversationMachine.TestCase


# ------------------------------------------------- the one-pass path changes nothing


def valid_calls() -> st.SearchStrategy[dict[str, Any]]:
    """Requests and notifications that mostly decode, to exercise the one-pass path."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0") | json_values,
            "method": methods,
            "params": st.fixed_dictionaries(
                {},
                optional={
                    "_meta": st.just(envelope) | meta,
                    "name": st.text(max_size=4),
                    "uri": st.text(max_size=4),
                    "requestId": st.integers(0, 3),
                    "progressToken": st.integers(0, 3),
                    "progress": st.integers(0, 9),
                    "notifications": st.just({"toolsListChanged": True}),
                },
            ),
        },
        optional={"id": st.integers(0, 3) | st.none(), "result": st.just({})},
    )


@FUZZ
@given(message=valid_calls() | messages)
def test_the_one_pass_path_gives_the_general_paths_events(message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    makers: list[Callable[[], Connection]] = [lambda: Connection(SERVER), _handshaken_server]
    for make in makers:
        fast, general = make(), make()
        general._one_pass = False
        assert _outcome(fast, data) == _outcome(general, data)


def _handshaken_server() -> Connection:
    pair = Pair()
    pair.handshake()
    return pair.server


def _outcome(connection: Connection, data: bytes) -> Any:
    try:
        return connection.receive(data)
    except RemoteProtocolError as exc:
        return repr(exc)


results = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0") | json_values,
        "id": st.integers(0, 4) | st.sampled_from(["1", "x"]) | json_values,
    },
    optional={
        "result": st.sampled_from(
            [{}, {"tools": []}, {"content": []}, {"resultType": "complete", "tools": []}]
        )
        | st.just({"resultType": "input_required", "requestState": "s"})
        | st.just({"resultType": "task"})
        | json_values,
        "error": st.just({"code": 1, "message": "m"}) | json_values,
    },
)


# Results in the key order encoders write, which the one-pass result path reads.
canonical_results = st.builds(
    lambda request_id, result, tail: (
        b'{"jsonrpc":"2.0","id":%b,"result":%b%b}'
        % (json.dumps(request_id).encode(), json.dumps(result).encode(), tail)
    ),
    st.sampled_from([1, "1", 2, 3, -1, 'a"b']),
    st.sampled_from(
        [
            {"tools": []},
            {"content": []},
            {"resultType": "complete", "tools": []},
            {"resultType": "input_required", "requestState": "s"},
            {"resultType": "task"},
            {"tools": [{"name": 1}]},
            # decode as the method's type, yet their resultType needs a closer look
            {"resultType": "task", "tools": []},
            {"resultType": "input_required", "content": [], "requestState": "s"},
        ]
    ),
    st.sampled_from([b"", b',"error":{"code":1,"message":"m"}', b',"x":1', b"x"]),
)


@FUZZ
@given(
    data=canonical_results | results.map(lambda m: json.dumps(m).encode()),
    modern=st.booleans(),
    mixed=st.booleans(),
)
def test_the_one_pass_result_path_gives_the_general_paths_events(
    data: bytes, modern: bool, mixed: bool
) -> None:
    outcomes = []
    for one_pass in (True, False):
        client = Connection(CLIENT)
        if modern:
            client.start_modern()
        else:
            Pair.handshake_client(client)
        client._one_pass = one_pass
        client.send_request("tools/list", request_id=1)
        if mixed:  # then the id, peeked, names the result type
            client.send_request("tools/call", types.CallToolRequestParams(name="t"), request_id="1")
        client.send_request("tools/list", request_id=2)
        outcomes.append((_outcome(client, data), client.pending_requests))
    assert outcomes[0] == outcomes[1]


# -------------------------------------------------------- the memos change nothing


class _Forgetful(Memo[Any, Any]):
    """A memo that never recalls: every check is worked out again."""

    def recall(self, state: tuple[Any, ...], key: Any) -> None:
        return None


def _forgetful(connection: Connection) -> Connection:
    if connection._cleared is not None:
        connection._cleared = _Forgetful()
    connection._admitted = _Forgetful()
    return connection


def _modern_server() -> Connection:
    pair = Pair()
    pair.go_modern()
    pair.request("tools/list")
    return pair.server


_ENVELOPE = {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: {}}
# Requests that differ only in what the memos key on: the method, and the envelope.
memo_requests = st.builds(
    lambda method, envelope, request_id: {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {
            **({"name": "x"} if method in ("tools/call", "prompts/get") else {}),
            **({} if envelope is None else {"_meta": envelope}),
        },
    },
    st.sampled_from(["tools/list", "tools/call", "prompts/get", "ping", "logging/setLevel"]),
    st.sampled_from(
        [
            None,
            _ENVELOPE,
            {**_ENVELOPE, PROTOCOL_VERSION_META_KEY: "2030-01-01"},
            {PROTOCOL_VERSION_META_KEY: "2026-07-28"},
            {**_ENVELOPE, "io.modelcontextprotocol/logLevel": "info"},
            {**_ENVELOPE, CLIENT_CAPABILITIES_META_KEY: {"roots": {}}},
            {**_ENVELOPE, "progressToken": 1},
            # Equal to Python (True == 1 == 1.0), not to JSON: a boolean is valid here,
            # a number is -32602, whichever came first.
            {**_ENVELOPE, CLIENT_CAPABILITIES_META_KEY: {"roots": {"listChanged": True}}},
            {**_ENVELOPE, CLIENT_CAPABILITIES_META_KEY: {"roots": {"listChanged": 1}}},
            {**_ENVELOPE, CLIENT_CAPABILITIES_META_KEY: {"roots": {"listChanged": 1.0}}},
        ]
    ),
    st.integers(0, 50),
)


def _tools_only_server() -> Connection:
    tools = types.ServerCapabilities(tools=types.ServerToolsCapability())
    return Connection(SERVER, capabilities=tools)


@FUZZ
@given(stream=st.lists(memo_requests | valid_calls() | messages, min_size=1, max_size=10))
def test_the_server_memo_changes_no_answer(stream: list[dict[str, Any]]) -> None:
    # A stream of requests, most of them admitted, in each state a server reaches: the
    # one whose checks are remembered answers exactly as the one that forgets.
    makers: list[Callable[[], Connection]] = [
        lambda: Connection(SERVER),
        _tools_only_server,
        _handshaken_server,
        _modern_server,
    ]
    for make in makers:
        remembering, forgetting = make(), _forgetful(make())
        for message in stream:
            data = json.dumps(message).encode()
            assert _outcome(remembering, data) == _outcome(forgetting, data)
            assert remembering.phase is forgetting.phase


@pytest.mark.parametrize("number", [1, 1.0])
def test_a_remembered_envelope_is_compared_as_json_not_as_python(number: float) -> None:
    # True == 1 == 1.0 in Python: a memo keyed on the decoded _meta took a number where
    # a boolean belongs for the boolean it had admitted, and skipped its -32602.
    def call(request_id: int, list_changed: object) -> bytes:
        capabilities = {"roots": {"listChanged": list_changed}}
        envelope = {**_ENVELOPE, CLIENT_CAPABILITIES_META_KEY: capabilities}
        params = {"name": "x", "_meta": envelope}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        return json.dumps(message).encode()

    server = _modern_server()
    assert isinstance(server.receive(call(10, True))[0], RequestReceived)
    (refused,) = server.receive(call(11, number))
    assert isinstance(refused, InvalidMessage)
    assert refused.code == jsonrpc.INVALID_PARAMS
    assert isinstance(server.receive(call(12, True))[0], RequestReceived)


_SERVER_CAPABILITIES = [
    {},
    {"tools": {}},
    {"prompts": {}, "resources": {"subscribe": True}},
    {"tools": {}, "prompts": {}, "resources": {}, "completions": {}, "logging": {}},
]
client_moves = st.one_of(
    st.tuples(
        st.just("send"),
        st.sampled_from(
            [
                "tools/list",
                "tools/call",
                "prompts/list",
                "resources/read",
                "resources/subscribe",
                "completion/complete",
                "ping",
                "server/discover",
            ]
        ),
    ),
    st.tuples(st.just("discovered"), st.sampled_from(range(len(_SERVER_CAPABILITIES)))),
    st.tuples(st.just("era"), st.sampled_from(["modern", "modern", "abandon", "handshake"])),
    st.tuples(st.just("cancel"), st.integers(0, 5)),
)
_PARAMS: dict[str, Any] = {
    "tools/call": types.CallToolRequestParams(name="t"),
    "resources/read": types.ReadResourceRequestParams(uri="file:///a"),
    "resources/subscribe": types.SubscribeRequestParams(uri="file:///a"),
    "completion/complete": types.CompleteRequestParams(
        ref=types.PromptReference(name="p"),
        argument=types.CompletionArgument(name="a", value="v"),
    ),
}


def _send(client: Connection, method: str) -> Any:
    return client.send_request(method, _PARAMS.get(method))


def _cancel(client: Connection, index: int) -> Any:
    pending = client.pending_requests
    return client.cancel(pending[index % len(pending)]) if pending else None


def _discovered(client: Connection, capabilities: int) -> Any:
    # A probe, answered at once: the server's capabilities change.
    request_id, _ = client.send_request("server/discover")
    result = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": _SERVER_CAPABILITIES[capabilities],
        "resultType": "complete",
    }
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return client.receive(json.dumps(answer).encode())


def _era(client: Connection, era: str) -> Any:
    if era == "modern":
        return client.start_modern()
    if era == "abandon":
        return client.abandon_modern()
    return Pair.handshake_client(client)


#: How each kind of `client_moves` is applied to a client.
_CLIENT_MOVES: dict[str, Callable[[Connection, Any], Any]] = {
    "send": _send,
    "cancel": _cancel,
    "discovered": _discovered,
    "era": _era,
}


def _client_move(client: Connection, move: tuple[str, Any]) -> Any:
    """Apply ``move``; what it returned or raised, comparable between two clients."""
    kind, value = move
    try:
        return _CLIENT_MOVES[kind](client, value)
    except (LocalProtocolError, RemoteProtocolError, AssertionError) as exc:
        return repr(exc)


@FUZZ
@given(moves=st.lists(client_moves, min_size=1, max_size=12))
def test_the_client_memo_changes_no_request(moves: list[tuple[str, Any]]) -> None:
    # The client remembers which requests passed its checks in one state; the
    # capabilities a discovery brings, a new era or a closed probe must all count.
    remembering, forgetting = Connection(CLIENT), _forgetful(Connection(CLIENT))
    for move in moves:
        assert _client_move(remembering, move) == _client_move(forgetting, move), move
        assert remembering.their_capabilities == forgetting.their_capabilities


def test_a_server_that_learns_its_capabilities_stops_serving_what_it_did_not_advertise() -> None:
    # Its capabilities come from its own initialize result: a request pipelined behind
    # initialize is served before they are known, the same request after is refused.
    server = Connection(SERVER)

    def request(request_id: int, method: str, params: Any) -> bytes:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return json.dumps(message).encode()

    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO_JSON}
    [initialize] = server.receive(request(1, "initialize", hello))
    assert isinstance(initialize, RequestReceived)
    [early] = server.receive(request(2, "tools/list", {}))
    assert isinstance(early, RequestReceived)
    prompts_only = types.ServerCapabilities(prompts=types.ServerPromptsCapability())
    result = types.InitializeResult(
        protocol_version="2025-11-25",
        capabilities=prompts_only,
        server_info=types.Implementation(name="s", version="1"),
    )
    server.send_result(1, result)
    [late] = server.receive(request(3, "tools/list", {}))
    assert isinstance(late, InvalidMessage)
    assert late.code == -32601


INFO_JSON = {"name": "c", "version": "1"}
