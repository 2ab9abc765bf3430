"""Tools through a client Connection and a Server, in both eras."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

import msgspec
import pytest

from mcpcore import ErrorReceived, types
from mcpcore.server import Context, Server, ToolError
from tests.core.server_harness import Harness, run

KEY = b"k" * 32


def asynchronous(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        run(test(*args, **kwargs))

    return wrapper


class Point(msgspec.Struct):
    x: int
    y: int


def make_server(errors: list[BaseException] | None = None) -> Server:
    def report(error: BaseException, context: Context) -> None:
        if errors is not None:
            errors.append(error)

    server = Server("tools", "1.0", secret=KEY, clock=lambda: 0.0, on_error=report)

    @server.tool(title="Add", annotations=types.ToolAnnotations(read_only_hint=True))
    async def add(
        a: Annotated[int, msgspec.Meta(description="The first addend")], b: int = 0
    ) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    @server.tool()
    def point(x: int, y: int) -> Point:
        """Make a point."""
        return Point(x, y)

    @server.tool()
    def fails_politely() -> str:
        raise ToolError("the disk is full")

    @server.tool()
    def crashes() -> str:
        raise RuntimeError("secret path /etc/shadow")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
            "$defs": {"unused": {}},
        }
    )
    def explicit(arguments: dict[str, Any]) -> str:
        return f"n={arguments['n']}"

    return server


@pytest.fixture(params=["legacy", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def ready(server: Server, era: str) -> Harness:
    harness = Harness(server)
    if era == "legacy":
        await harness.handshake()
    else:
        harness.go_modern()
    return harness


@asynchronous
async def test_tools_list_publishes_schemas_in_registration_order(era: str) -> None:
    harness = await ready(make_server(), era)
    result = await harness.result("tools/list")
    names = [tool.name for tool in result.tools]
    assert names == ["add", "shout", "point", "fails_politely", "crashes", "explicit"]
    add = result.tools[0]
    assert add.title == "Add"
    assert add.description == "Add two numbers."
    assert add.annotations == types.ToolAnnotations(read_only_hint=True)
    assert add.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "The first addend"},
            "b": {"type": "integer", "default": 0},
        },
        "required": ["a"],
    }
    # an explicit schema is published verbatim
    assert result.tools[5].input_schema["$defs"] == {"unused": {}}
    # no-parameter tools: {"type": "object", "additionalProperties": false}
    assert result.tools[3].input_schema == {"type": "object", "additionalProperties": False}


@asynchronous
async def test_a_call_reaches_the_handler_with_typed_arguments(era: str) -> None:
    harness = await ready(make_server(), era)
    params = types.CallToolRequestParams(name="add", arguments={"a": 2, "b": 3})
    result = await harness.result("tools/call", params)
    assert result.content == [types.TextContent(text="5")]
    assert result.structured_content == ({"result": 5} if era == "legacy" else 5)
    assert result.is_error is types.UNSET


@asynchronous
async def test_structured_output_and_its_schema(era: str) -> None:
    harness = await ready(make_server(), era)
    tools = (await harness.result("tools/list")).tools
    point_schema = tools[2].output_schema
    assert point_schema["type"] == "object"
    add_schema = tools[0].output_schema
    if era == "legacy":  # an object at the root before 2026-07-28
        assert add_schema == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }
    else:
        assert add_schema == {"type": "integer"}
    params = types.CallToolRequestParams(name="point", arguments={"x": 1, "y": 2})
    result = await harness.result("tools/call", params)
    assert result.structured_content == {"x": 1, "y": 2}
    assert result.content == [types.TextContent(text='{"x":1,"y":2}')]


@asynchronous
async def test_invalid_arguments_are_a_tool_error_and_the_handler_does_not_run(era: str) -> None:
    harness = await ready(make_server(), era)
    for arguments in ({"a": "two"}, {}, {"b": 1}):
        params = types.CallToolRequestParams(name="add", arguments=arguments)
        result = await harness.result("tools/call", params)
        assert result.is_error is True
        assert result.content[0].text.startswith("Invalid arguments for tool add")
    params = types.CallToolRequestParams(name="explicit", arguments={"n": 0})
    result = await harness.result("tools/call", params)
    assert result.is_error is True
    assert "/n" in result.content[0].text
    params = types.CallToolRequestParams(name="explicit", arguments={"n": 3})
    assert (await harness.result("tools/call", params)).content[0].text == "n=3"


@asynchronous
async def test_failures_are_tool_results_that_leak_nothing(era: str) -> None:
    errors: list[BaseException] = []
    harness = await ready(make_server(errors), era)
    polite = await harness.result("tools/call", types.CallToolRequestParams(name="fails_politely"))
    assert polite.is_error is True
    assert polite.content == [types.TextContent(text="the disk is full")]
    crash = await harness.result("tools/call", types.CallToolRequestParams(name="crashes"))
    assert crash.is_error is True
    assert "shadow" not in crash.content[0].text
    assert crash.content == [types.TextContent(text="The tool crashes failed.")]
    assert [type(e) for e in errors] == [RuntimeError]  # reported to the embedder


@asynchronous
async def test_an_unknown_tool_is_invalid_params(era: str) -> None:
    harness = await ready(make_server(), era)
    event = await harness.call("tools/call", types.CallToolRequestParams(name="nope"))
    assert isinstance(event, ErrorReceived)
    assert event.error.code == -32602
    assert event.error.message == "Unknown tool: nope"


@asynchronous
async def test_modern_results_carry_result_type_and_server_info() -> None:
    harness = await ready(make_server(), "modern")
    result = await harness.result(
        "tools/call", types.CallToolRequestParams(name="shout", arguments={"text": "hi"})
    )
    assert result.result_type == "complete"
    assert result.meta[types.SERVER_INFO_META_KEY] == {"name": "tools", "version": "1.0"}
    tools = await harness.result("tools/list")
    assert (tools.ttl_ms, tools.cache_scope) == (0, "private")


def test_registration_refuses_what_it_can_not_publish() -> None:
    server = Server("x", "1")
    with pytest.raises(ValueError, match="1-128"):
        server.tools.add(lambda: "", name="has space")
    with pytest.raises(TypeError, match="annotation"):
        server.tools.add(lambda value: value, name="untyped")
    with pytest.raises(ValueError, match="root must be an object"):
        server.tools.add(lambda arguments: "", name="bad", input_schema={"type": "array"})
    server.tools.add(lambda: "", name="twice")
    with pytest.raises(ValueError, match="already"):
        server.tools.add(lambda: "", name="twice")


def test_capabilities_follow_what_is_registered() -> None:
    server = Server("x", "1")
    assert server.capabilities == types.ServerCapabilities(logging={})
    server.tools.add(lambda: "", name="t")
    assert server.capabilities.tools == types.ServerToolsCapability(list_changed=True)
    assert server.capabilities.prompts is types.UNSET


def test_one_definition_is_found_by_name_as_the_list_publishes_it() -> None:
    server = Server("t", "1")

    @server.tool()
    def first(a: int) -> str:
        """One."""
        return str(a)

    @server.tool()
    def second() -> str:
        """Two."""
        return ""

    for modern in (True, False):
        listed = {tool.name: tool for tool in server.tools.definitions(modern=modern)}
        assert server.tools.definition("second", modern=modern) is listed["second"]
        assert server.tools.definition("first", modern=modern) is listed["first"]
        assert server.tools.definition("third", modern=modern) is None
