"""Calls with a head `AsgiApp` answered before are answered at once, and exactly as before.

`transports._asgi.known` remembers the head of each 2026-07-28 call the endpoint answered
in one pass, and answers the next call with that head, of the same tool with the same
``_meta``, without reading the head again. Each test here sends a sequence of requests
through two apps, one as it is and one that remembers no head, and asserts that the
answers are the same byte for byte, and which way each request took.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from itertools import pairwise
from typing import Any

import anyio
import pytest

from mcpcore.server import Server, ToolError
from tests.transports.http_raw import META, modern_body
from tests.transports.test_asgi_app import BACKENDS, Exchange, run
from transports import AsgiApp, HttpLimits
from transports._asgi import known as known_module
from transports._asgi.known import MAX_KNOWN_HEAD_SIZE, KnownHeads
from transports._net.partial import PARTIAL_FLOOR
from transports._runtime.requestlog import LOGGER_NAME

Fields = list[tuple[bytes, bytes]]

_HEAD: Fields = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"shout"),
]


def _server() -> Server:
    server = Server("known-test", "1.0")

    @server.tool()
    def shout(text: str) -> str:
        """The text in capitals; "refuse" is a tool error, "boom" a failure."""
        if text == "refuse":
            raise ToolError("refused")
        if text == "boom":
            raise RuntimeError("boom")
        return text.upper()

    @server.tool()
    def whisper(text: str) -> str:
        """The text in small letters."""
        return text.lower()

    return server


def _twice(text: str) -> str:
    """The text twice."""
    return text * 2


def _call(text: Any = "hi", request_id: int = 1, name: str = "shout", **meta: Any) -> bytes:
    params = {"name": name, "arguments": {"text": text}, "_meta": {**META, **meta}}
    return modern_body("tools/call", params, request_id)


def _exchange(
    body: bytes, head: Fields = _HEAD, *, listed: bool = False, **options: Any
) -> Exchange:
    exchange = Exchange(body=body, **options)
    fields = [*head, (b"content-length", str(len(body)).encode())]
    exchange.scope["headers"] = [list(field) for field in fields] if listed else fields
    return exchange


def _answer(exchange: Exchange) -> tuple[int, Any, bytes]:
    start, *rest = exchange.messages
    return start["status"], start["headers"], b"".join(m.get("body", b"") for m in rest)


class _Pair:
    """An app as it is, one that remembers no head, and how often each endpoint posted."""

    def __init__(self, app: AsgiApp, general: AsgiApp) -> None:
        self.app = app
        self.general = general
        self.posts = {"app": 0, "general": 0}
        for which, each in (("app", app), ("general", general)):
            running = each._running
            assert running is not None
            modern = running.router.modern
            modern.post = self._counted(which, modern.post)  # type: ignore[method-assign]

    def _counted(self, which: str, post: Any) -> Any:
        async def counted(*args: Any) -> Any:
            self.posts[which] += 1
            return await post(*args)

        return counted

    async def learn(self) -> None:
        """Two calls under `_HEAD`: the first admits their ``_meta``, the second's head is known."""
        for number in range(2):
            await self.both(_call(request_id=number))
        assert self.posts == {"app": 2, "general": 2}
        self.posts = {"app": 0, "general": 0}

    async def both(self, body: bytes, head: Fields = _HEAD, **options: Any) -> bytes:
        """Send ``body`` under ``head`` through both apps; the answer's body, the same from each.

        ``options``: `Exchange`'s, and ``listed``: the fields handed as lists.
        """
        answers = [
            _answer(await _exchange(body, head, **options).through(app))
            for app in (self.app, self.general)
        ]
        assert answers[0] == answers[1]
        return answers[0][2]

    def known(self) -> KnownHeads:
        """The heads the app remembers."""
        assert self.app._running is not None
        return self.app._running.known


@asynccontextmanager
async def _pair(limits: HttpLimits | None = None) -> AsyncIterator[_Pair]:
    app, general = AsgiApp(_server(), limits=limits), AsgiApp(_server(), limits=limits)
    async with app.lifespan(), general.lifespan():
        running = general._running
        assert running is not None
        running.known = KnownHeads(None, general.limits)  # (remembers nothing)
        yield _Pair(app, general)


@pytest.mark.parametrize("backend", BACKENDS)
def test_calls_with_a_known_head_are_answered_at_once(backend: str) -> None:
    """Bodies of every length under one head: the first takes the whole way, not the rest."""

    async def test() -> None:
        async with _pair() as pair:
            for number, text in enumerate(["hi", "hello there", "x" * 300, "é", "refuse"]):
                answer = await pair.both(_call(text, number))
                assert json.loads(answer)["id"] == number
            assert b'"isError":true' in answer
            # (The first admits the _meta envelope; the second is a call in one pass.)
            assert pair.posts == {"app": 2, "general": 5}
            assert len(pair.known()._heads) == 1

    run(backend, test)


#: Bodies under a known head that it was not answered with, or that its call can't take.
_OTHERS = {
    "another tool than Mcp-Name's": _call(name="whisper"),
    "another _meta": _call(progressToken=7),
    "arguments the tool refuses": _call(3),
    "no such tool": _call(name="nothing"),
    "a notification": modern_body("tools/call", {"name": "shout", "arguments": {}}, None),
    "a cut body": _call()[:-1],
    "not JSON": b"\xff" * 20,
    "a batch": b"[" + _call() + b"]",
    "a member too many": _call()[:-1] + b',"extra":1}',
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", sorted(_OTHERS))
def test_other_bodies_under_a_known_head_take_the_whole_way(backend: str, kind: str) -> None:
    body = _OTHERS[kind]

    async def test() -> None:
        async with _pair() as pair:
            await pair.learn()
            await pair.both(body)
            assert pair.posts == {"app": 1, "general": 1}
            await pair.both(_call("again", 2))  # (still known)
            assert pair.posts == {"app": 1, "general": 2}

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_the_tool_did_unusually_is_answered_by_the_general_path(backend: str) -> None:
    """A failure of a call answered at once: the general path's error, as without the memo."""

    async def test() -> None:
        async with _pair() as pair:
            await pair.learn()
            answer = await pair.both(_call("boom", 2))
            assert json.loads(answer)["result"]["isError"] is True
            assert pair.posts == {"app": 0, "general": 1}

    run(backend, test)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_in_pieces_is_read_whole_and_a_large_one_takes_the_whole_way(backend: str) -> None:
    """Pieces as hypercorn sends every body (the data, then an empty last one)."""
    large = _call("y" * (PARTIAL_FLOOR + 10))

    async def test() -> None:
        async with _pair() as pair:
            await pair.learn()
            for request_id, pieces in enumerate([(10,), (0,), (5, 50, 100)], start=2):
                body = _call("in pieces", request_id)
                cuts = [0, *pieces, len(body)]
                parts = [body[start:end] for start, end in pairwise(cuts)]
                answer = await pair.both(body, pieces=[*parts, b""])
                assert b"IN PIECES" in answer
            assert pair.posts == {"app": 0, "general": 3}
            answer = await pair.both(large)
            assert b"YYYY" in answer
            # (A whole call in the first piece, then more: the body is not that call.)
            whole = _call("whole", 9)
            answer = await pair.both(whole, pieces=[whole, b"x"])
            assert json.loads(answer)["error"]["code"] == -32700
            assert pair.posts == {"app": 2, "general": 5}

    run(backend, test)


def test_a_tool_registered_again_or_removed_takes_the_whole_way() -> None:
    async def test() -> None:
        async with _pair() as pair:
            await pair.learn()
            for app in (pair.app, pair.general):
                app.server.tools.remove("shout")
                app.server.tool(name="shout")(_twice)
            assert b"hihi" in await pair.both(_call())
            assert pair.posts == {"app": 1, "general": 1}
            for app in (pair.app, pair.general):
                app.server.tools.remove("shout")
            assert b"Unknown tool" in await pair.both(_call())
            assert pair.posts == {"app": 2, "general": 2}

    run("asyncio", test)


def test_a_known_head_whose_body_stops_coming_is_refused_with_408() -> None:
    async def test() -> None:
        app = AsgiApp(_server(), limits=HttpLimits(body_timeout=5))
        async with app.lifespan():
            for number in range(2):
                assert (await _exchange(_call(request_id=number)).through(app)).status == 200
            assert app._running is not None
            assert app._running.known._heads
            stalled = _exchange(_call(), pieces=[b"{", b"never"], stall=True)
            await stalled.through(app)
            assert stalled.status == 408

    run("trio", test, autojump=True)


def _scope(fields: Fields, **changes: Any) -> dict[str, Any]:
    scope = {"method": "POST", "raw_path": b"/mcp", "root_path": "", "headers": fields}
    return {**scope, **changes}


_LENGTH = (b"content-length", b"10")
_NO_HEAD = {
    "a GET": _scope([*_HEAD, _LENGTH], method="GET"),
    "no raw path": _scope([*_HEAD, _LENGTH], raw_path=None),
    "no Content-Length": _scope(_HEAD),
    "two": _scope([*_HEAD, _LENGTH, _LENGTH]),
    "past the floor": _scope([*_HEAD, (b"content-length", str(PARTIAL_FLOOR + 1).encode())]),
    "not a number": _scope([*_HEAD, (b"content-length", b"1e3")]),
    "a long number": _scope([*_HEAD, (b"content-length", b"0" * 5000 + b"1")]),
    "fields as lists": _scope([], headers=[[*field] for field in [*_HEAD, _LENGTH]]),
}


@pytest.mark.parametrize("kind", sorted(_NO_HEAD))
def test_requests_that_have_no_head_to_remember(kind: str) -> None:
    known = KnownHeads(_server().fast_calls(), HttpLimits())
    assert known.look(_NO_HEAD[kind]) == (None, None)
    assert known.look(_scope([*_HEAD, _LENGTH]))[0] is not None


def test_calls_go_the_whole_way_while_answers_are_logged() -> None:
    async def test() -> None:
        async with _pair() as pair:
            await pair.learn()
            logger = logging.getLogger(LOGGER_NAME)
            level = logger.level
            logger.setLevel(logging.DEBUG)
            try:
                for number in range(3):
                    await pair.both(_call(request_id=number))
            finally:
                logger.setLevel(level)
            assert pair.posts == {"app": 3, "general": 3}

    run("asyncio", test)


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known_module, "MAX_KNOWN_HEADS", 4)

    async def test() -> None:
        async with _pair() as pair:
            for agent in range(10):
                head = [*_HEAD, (b"user-agent", str(agent).encode())]
                await pair.both(_call(), head)
                assert len(pair.known()._heads) <= 4
            assert pair.known()._heads

    run("asyncio", test)


def test_large_heads_are_not_remembered() -> None:
    long_head = [*_HEAD, (b"user-agent", b"a" * MAX_KNOWN_HEAD_SIZE)]
    # (A head whose size leaves no room for every Content-Length a known head may take.)
    length = str(len(_call(request_id=0)))  # (not 5 digits, as a Content-Length may be)
    assert len(length) < len(str(PARTIAL_FLOOR))
    fields = [*_HEAD, (b"content-length", length.encode())]
    size = sum(len(name) + len(value) + 4 for name, value in fields)
    tight = HttpLimits(max_header_size=size)

    async def test(limits: HttpLimits | None, head: Fields) -> None:
        async with _pair(limits) as pair:
            for number in range(3):
                await pair.both(_call(request_id=number), head)
            assert pair.posts == {"app": 3, "general": 3}
            assert not pair.known()._heads

    anyio.run(test, None, long_head)
    anyio.run(test, tight, _HEAD)


def test_fields_handed_as_lists_are_answered_and_not_remembered() -> None:
    async def test() -> None:
        async with _pair() as pair:
            for number in range(3):
                assert b"HI" in await pair.both(_call(request_id=number), listed=True)
            assert pair.posts == {"app": 3, "general": 3}
            assert not pair.known()._heads

    run("asyncio", test)
