"""Issue 18's acceptance: real worker processes behind a real nginx, sharing one Redis.

One cluster for the module (`tests.deploy.cluster`): ``redis-server``, three
``examples/everything.py --transport http --redis URL`` workers and nginx round-robin
with no stickiness in front (`tests.deploy.balancer`), so consecutive requests of one
client reach different workers. Against its URL, the same tests that pass against one
server:

- the three official conformance runs, exactly as `tests.conformance.test_server_suite`
  runs them (its test, imported here, takes this module's ``url``), and the ``tasks-*``
  scenarios as `tests.conformance.test_tasks_scenarios` runs them (issue 19: a task's
  ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` reach other workers than its own);
- the official Python SDK client's tour over HTTP, legacy and auto
  (`tests.transports.test_http_server_interop`'s tests, imported likewise); and a tour
  whose sampling and elicitation answers are seen (nginx's ``X-Upstream``) to reach
  workers other than the session's owner;
- our own client's tour (`transports.open_http_client`), in each mode;
- a worker killed mid-stream: a call's answer stream relayed by a worker that does not
  own the session loses that worker, and the client resumes it through nginx with
  ``Last-Event-ID``: every remaining event and the result arrive, none twice;
- a worker killed while it runs a task: ``tasks/get`` on another worker reads the task
  as working until the dead worker has stayed gone `transports.ORPHAN_GRACE`, then as
  failed.

The owner of a session is the worker whose name starts the session's id; the cluster
knows each worker's name. Every wait is bounded (the tests' own timeouts, and bounded
polling of nginx's access log).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

import httpx2
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpcore import NotificationReceived, types
from mcpcore.client import ConnectMode
from mcpcore.framing import SSEEvent
from mcpcore.versions import Era
from tests.conformance.test_server_suite import (  # noqa: F401 (collected here, on this url)
    suite,
    test_the_server_suite_passes,
)
from tests.conformance.test_tasks_scenarios import (  # noqa: F401 (collected here, on this url)
    test_the_tasks_scenario_passes,
)
from tests.deploy.balancer import nginx_missing
from tests.deploy.cluster import Cluster
from tests.deploy.test_shared_tasks import create, follow, modern
from tests.transports.anyio_helpers import anyio_runner
from tests.transports.http_raw import LEGACY, POST_HEADERS, RawConnection, message
from tests.transports.sdk_callbacks import Callbacks, text_of
from tests.transports.test_http_client_everything import CALLBACKS, MODES
from tests.transports.test_http_server_interop import (  # noqa: F401 (collected here)
    test_legacy_sampling_and_elicitation_travel_on_the_calls_stream,
    test_the_sdk_lists_and_calls_tools,
    test_the_sdk_reads_resources_and_gets_prompts,
    test_the_sdk_receives_progress,
)
from tests.transports.trio_helpers import trio_test
from transports import ORPHAN_GRACE, open_http_client

pytestmark = pytest.mark.skipif(
    nginx_missing(), reason="nginx is not installed (apt-get install nginx)"
)

#: Workers behind nginx: a client's consecutive requests reach them in turn, so most of
#: a session's requests (and the client's answers) land on workers that don't own it.
WORKERS: Final = 3
#: Seconds one of this module's own tests may take.
TEST_TIMEOUT: Final = 30.0
#: Seconds our client waits for one answer.
CALL_TIMEOUT: Final = 10.0
#: Sampling-and-elicitation rounds the SDK may take until each answer has reached a
#: worker other than the owner (round-robin over three workers gets there by the third).
ROUNDS: Final = 6
#: Reads of nginx's access log while it catches up (it logs a request once it ends).
LOG_POLLS: Final = 100


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(workers=WORKERS) as running:
        yield running


@pytest.fixture(scope="module")
def url(cluster: Cluster) -> str:
    """The deployment's endpoint through nginx (the imported tests' ``url``)."""
    return cluster.url


@pytest.fixture(autouse=True)
def show_the_cluster_on_failure(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[None]:
    """After a failed test, print what the cluster's processes printed (pytest shows it)."""
    failed = request.session.testsfailed
    yield
    if request.session.testsfailed > failed:
        print(f"the cluster's output after {request.node.name}:\n{cluster.output()}")


anyio_test = anyio_runner(TEST_TIMEOUT)


# -- the official SDK: its answers reach the owner from other workers ---------------------


def upstream_of(cluster: Cluster, index: int) -> str:
    """How nginx names worker ``index`` (``$upstream_addr``)."""
    return f"127.0.0.1:{cluster.workers[index].port}"


@anyio_test
async def test_sdk_answers_posted_to_other_workers_reach_the_waiting_tool(
    cluster: Cluster,
) -> None:
    # Each POST the SDK makes, with the worker nginx gave it to (X-Upstream).
    posted: list[tuple[dict[str, Any], str, str | None]] = []

    async def record(response: httpx2.Response) -> None:
        request = response.request
        if request.method == "POST":
            body = json.loads(request.content)
            posted.append(
                (body, response.headers["x-upstream"], request.headers.get("mcp-session-id"))
            )

    def answered_elsewhere(kind: str, owner: str) -> bool:
        """Whether an answer to a ``kind`` request reached a worker other than the owner."""
        return any(
            "result" in body and kind in body["result"] and upstream != owner
            for body, upstream, _ in posted
        )

    callbacks = Callbacks()
    async with (
        httpx2.AsyncClient(event_hooks={"response": [record]}, timeout=CALL_TIMEOUT) as http,
        Client(
            streamable_http_client(cluster.url, http_client=http),
            mode="legacy",
            read_timeout_seconds=CALL_TIMEOUT,
            **callbacks.as_kwargs(),
        ) as client,
    ):
        assert client.protocol_version == LEGACY
        owner = ""
        for _ in range(ROUNDS):
            sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
            assert text_of(sampled) == ["LLM response: Paris"]
            elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert text_of(elicited) == [
                'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
            ]
            [session_id] = {session_id for _, _, session_id in posted if session_id is not None}
            owner = upstream_of(cluster, cluster.owner_of(session_id))
            # (The session's owner is the worker that took its initialize.)
            initialized = [up for body, up, _ in posted if body.get("method") == "initialize"]
            assert initialized == [owner]
            # A sampling result names its model, an elicitation result its action.
            if answered_elsewhere("model", owner) and answered_elsewhere("action", owner):
                break
    assert answered_elsewhere("model", owner), posted
    assert answered_elsewhere("action", owner), posted
    # The SDK was asked once per call (each answer reached its tool, on the owner).
    assert len(callbacks.sampled) == len(callbacks.elicited) >= 1


# -- our own client ------------------------------------------------------------------------


async def upstreams_serving(cluster: Cluster, session_id: str) -> set[str]:
    """The workers nginx sent the session's requests to (once it has logged its DELETE)."""
    assert cluster.nginx is not None
    for _ in range(LOG_POLLS):
        lines = [line for line in cluster.nginx.access_log() if f'"{session_id}"' in line]
        if any(line.startswith("DELETE ") for line in lines):
            return {line.split(" ")[2] for line in lines}
        await trio.sleep(0.05)  # (polling a log file: there is no event to wait on)
    raise AssertionError(f"nginx logged no DELETE of {session_id}")


@pytest.mark.parametrize(("mode", "era"), MODES)
@trio_test(timeout=TEST_TIMEOUT)
async def test_our_client_completes_the_tour(cluster: Cluster, mode: ConnectMode, era: Era) -> None:
    changed = trio.Event()
    methods: list[str] = []

    def on_notification(event: NotificationReceived) -> None:
        methods.append(event.method)
        if event.method == "notifications/tools/list_changed":
            changed.set()

    async with open_http_client(
        cluster.url,
        mode=mode,
        timeout=CALL_TIMEOUT,
        callbacks=CALLBACKS,
        on_notification=on_notification,
    ) as client:
        assert client.era is era
        session_id = client.session_id
        assert (session_id is not None) == (era is Era.LEGACY)
        names = [tool.name async for tool in client.iter_tools()]
        assert names[0] == "test_simple_text"
        assert not client.invalid_tools
        simple = await client.call_tool("test_simple_text")
        assert text(simple) == "This is a simple text response for testing."
        assert (await client.call_tool("test_error_handling")).is_error is True
        [content] = (await client.read_resource("test://static-text")).contents
        assert isinstance(content, types.TextResourceContents)
        [blob] = (await client.read_resource("test://static-binary")).contents
        assert isinstance(blob, types.BlobResourceContents)
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt.messages

        seen: list[float] = []
        done = await client.call_tool(
            "test_tool_with_progress", progress=lambda value, total, message: seen.append(value)
        )
        assert text(done) == "Progress test completed"
        assert seen == [0, 50, 100]
        answer = await client.call_tool("test_elicitation", {"message": "Who?"})
        assert text(answer).startswith("User response: action=accept")
        sampled = await client.call_tool("test_sampling", {"prompt": "Hi"})
        assert text(sampled) == "LLM response: A canned answer."
        # Legacy: the server closes the answer stream early and the client resumes it
        # with GET and Last-Event-ID, on whichever worker nginx picks.
        resumed = await client.call_tool("test_reconnection")
        assert text(resumed) == "Reconnection test completed"
        regional = await client.call_tool("test_x_mcp_header", {"region": "eu west ✓"})
        assert text(regional) == "region=eu west ✓"

        # A list change made by a call reaches the client's listening stream, wherever
        # each of them landed.
        if era is Era.LEGACY:
            await client.call_tool("test_trigger_tool_change")
            await changed.wait()
            assert methods.count("notifications/tools/list_changed") == 1
        else:
            listened = types.SubscriptionFilter(tools_list_changed=True)
            async with client.listen(listened) as subscription:
                assert subscription.acknowledged.tools_list_changed is True
                await client.call_tool("test_trigger_tool_change")
                notification = await anext(subscription)
                assert notification.method == "notifications/tools/list_changed"

        answers: list[str] = []

        async def call() -> None:
            answers.append(text(await client.call_tool("test_simple_text")))

        async with trio.open_nursery() as nursery:
            for _ in range(30):
                nursery.start_soon(call)
        assert answers == ["This is a simple text response for testing."] * 30
    if session_id is not None:
        # The legacy session's requests were spread over the workers.
        assert len(await upstreams_serving(cluster, session_id)) >= 2


def text(result: Any) -> str:
    return str(result.content[0].text)


# -- a worker killed mid-stream -------------------------------------------------------------


def legacy_headers(session_id: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "MCP-Protocol-Version": LEGACY, **extra}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


async def open_session(port: int) -> str:
    """Open a legacy session through ``port`` (the handshake's two messages); its id."""
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "killer", "version": "1"},
    }
    async with await RawConnection.open(port) as http:
        opened = await http.request(
            "POST", headers=legacy_headers(), body=message("initialize", params, request_id=0)
        )
        assert opened.status == 200, opened
        session_id = opened.headers["mcp-session-id"]
        done = await http.request(
            "POST", headers=legacy_headers(session_id), body=message("notifications/initialized")
        )
        assert done.status == 202, done
    return session_id


def messages_of(events: list[SSEEvent]) -> list[dict[str, Any]]:
    """The JSON-RPC messages events carried (a priming event carries none)."""
    return [json.loads(event.data) for event in events if event.data]


async def read_until(
    http: RawConnection, done: Callable[[list[dict[str, Any]]], bool]
) -> list[SSEEvent]:
    """Read events of the stream whose head was read until ``done(messages so far)``."""
    events: list[SSEEvent] = []
    while not done(messages_of(events)):
        events += await http.read_events(1)  # (each read bounded by the raw client)
    return events


async def resume(port: int, session_id: str, last_event_id: str) -> RawConnection:
    """``GET`` with ``Last-Event-ID`` through ``port``; the connection, its head read."""
    http = await RawConnection.open(port)
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": LEGACY,
        "Last-Event-ID": last_event_id,
    }
    await http.send(http.encode("GET", headers=headers))
    head = await http.read_head()
    assert head.status == 200, head
    assert head.headers["content-type"] == "text/event-stream"
    return http


def a_relay(cluster: Cluster, session_id: str) -> int:
    """A live worker that does not own the session: it relays the owner's answers."""
    owner = cluster.owner_of(session_id)
    return next(index for index in cluster.alive() if index != owner)


def answered(request_id: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda messages: any(m.get("id") == request_id and "method" not in m for m in messages)


@trio_test(timeout=TEST_TIMEOUT)
async def test_a_relay_killed_mid_stream_costs_the_client_nothing(cluster: Cluster) -> None:
    assert cluster.nginx is not None
    session_id = await open_session(cluster.nginx.port)
    relay = a_relay(cluster, session_id)
    params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}}
    try:
        # The call goes straight to a worker that does not own the session; it is
        # forwarded to the owner, whose answer stream this worker relays.
        async with await RawConnection.open(cluster.workers[relay].port) as direct:
            await direct.send(
                direct.encode(
                    "POST",
                    headers=legacy_headers(session_id),
                    body=message("tools/call", params, request_id=9),
                )
            )
            head = await direct.read_head()
            assert head.status == 200, head
            before = await read_until(direct, lambda messages: len(messages) >= 1)
            assert before[0].id is not None
            assert before[0].data == ""  # (the priming event)
            assert not answered(9)(messages_of(before)), "the call ended before the kill"
            await trio.to_thread.run_sync(cluster.kill, relay)
        last_seen = before[-1].id
        assert last_seen is not None
        async with await resume(cluster.nginx.port, session_id, last_seen) as http:
            after = await read_until(http, answered(9))
    finally:
        await trio.to_thread.run_sync(cluster.restart, relay)

    progress = [
        m["params"]["progress"]
        for m in messages_of(before + after)
        if m.get("method") == "notifications/progress"
    ]
    assert progress == [0, 50, 100]
    [result] = [m for m in messages_of(before + after) if m.get("id") == 9]
    assert result["result"]["content"][0]["text"] == "Progress test completed"
    event_ids = [event.id for event in before + after if event.data]
    assert len(set(event_ids)) == len(event_ids), event_ids


@trio_test(timeout=TEST_TIMEOUT)
async def test_a_call_waiting_on_the_client_outlives_its_relay(cluster: Cluster) -> None:
    assert cluster.nginx is not None
    session_id = await open_session(cluster.nginx.port)
    relay = a_relay(cluster, session_id)
    params = {"name": "test_elicitation", "arguments": {"message": "Who?"}}
    try:
        async with await RawConnection.open(cluster.workers[relay].port) as direct:
            await direct.send(
                direct.encode(
                    "POST",
                    headers=legacy_headers(session_id),
                    body=message("tools/call", params, request_id=11),
                )
            )
            head = await direct.read_head()
            assert head.status == 200, head
            before = await read_until(
                direct, lambda m: any(x.get("method") == "elicitation/create" for x in m)
            )
            # The tool waits for the user's answer while its relay dies.
            await trio.to_thread.run_sync(cluster.kill, relay)
        priming = before[0]
        assert priming.data == ""
        assert priming.id is not None
        [asked] = [event for event in before if event.data]
        # Resumed from the priming event, the question is replayed (once), the answer
        # goes to whichever worker nginx picks, and the result follows on this stream.
        async with await resume(cluster.nginx.port, session_id, priming.id) as http:
            replayed = await read_until(
                http, lambda m: any(x.get("method") == "elicitation/create" for x in m)
            )
            assert [(e.id, e.data) for e in replayed if e.data] == [(asked.id, asked.data)]
            question = json.loads(asked.data)
            answer = {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}
            reply = {"jsonrpc": "2.0", "id": question["id"], "result": answer}
            async with await RawConnection.open(cluster.nginx.port) as other:
                posted = await other.request(
                    "POST", headers=legacy_headers(session_id), body=json.dumps(reply).encode()
                )
                assert posted.status == 202, posted
            after = await read_until(http, answered(11))
    finally:
        await trio.to_thread.run_sync(cluster.restart, relay)
    [result] = messages_of(after)
    assert result["result"]["content"][0]["text"] == (
        'User response: action=accept, content={"username":"ada","email":"a@b.c"}'
    )


# -- a worker killed while it runs a task ---------------------------------------------------

#: Seconds between two ``tasks/get`` of a crashed worker's task, and polls at most: three
#: graces' worth (the task fails after one).
ORPHAN_POLL_INTERVAL: Final = 0.5
ORPHAN_POLLS: Final = int(3 * ORPHAN_GRACE / ORPHAN_POLL_INTERVAL)


@trio_test(timeout=4 * ORPHAN_GRACE)
async def test_a_task_whose_worker_crashed_fails_when_read_elsewhere(cluster: Cluster) -> None:
    running, polled, listening = cluster.workers
    task_id = await create(running, "slow_compute", {"seconds": 3600})
    statuses: list[str] = []
    try:
        async with await follow(listening.port, task_id) as listener:
            await trio.to_thread.run_sync(cluster.kill, 0)  # SIGKILL: it fails nothing itself
            for _ in range(ORPHAN_POLLS):
                got = (await modern(polled, "tasks/get", {"taskId": task_id}))["result"]
                statuses.append(got["status"])
                if got["status"] != "working":
                    break
                await trio.sleep(ORPHAN_POLL_INTERVAL)
            # A third worker's listen stream hears the failure (the poller announced it).
            [news] = await listener.read_events(1)
    finally:
        await trio.to_thread.run_sync(cluster.restart, 0)
    # Working while the grace runs (the first read only notes the worker gone), then failed.
    assert statuses[0] == "working", statuses
    assert statuses[-1] == "failed", statuses
    stopped = {"code": -32603, "message": "The server stopped while the task was running"}
    assert got["error"] == stopped, got
    notification = json.loads(news.data)
    assert notification["method"] == "notifications/tasks", notification
    assert notification["params"]["taskId"] == task_id
    assert notification["params"]["status"] == "failed"
    # Read again on the listening worker: failed for good, the same error.
    again = (await modern(listening, "tasks/get", {"taskId": task_id}))["result"]
    assert (again["status"], again["error"]) == ("failed", stopped), again
