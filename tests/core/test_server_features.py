"""The `Server` features the everything fixtures leave out: cursors, access checks,
completion limits, typed templates, several contents, cancellation, Struct arguments,
resource links and error reporting, in both eras."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpcore import (
    CancelRequested,
    ErrorReceived,
    RequestReceived,
    ResponseReceived,
    jsonrpc,
    types,
)
from mcpcore.client import McpError
from mcpcore.server import MAX_COMPLETION_VALUES, Context, Server
from mcpcore.versions import Era
from tests.core.memory_link import MemoryLink
from tests.core.server_harness import Harness
from tests.core.test_server_tools import asynchronous

KEY = b"f" * 32


@pytest.fixture(params=["legacy", "modern"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def connected(server: Server, mode: str) -> MemoryLink:
    link = MemoryLink(server)
    await link.session.connect(mode)  # type: ignore[arg-type]
    return link


def server(**options: Any) -> Server:
    options.setdefault("secret", KEY)
    options.setdefault("clock", lambda: 0.0)
    return Server("features", "1.0", **options)


def numbered_tools(target: Server, count: int) -> None:
    for index in range(count):
        target.tools.add(lambda: "ok", name=f"tool_{index}")


# -- cursors -------------------------------------------------------------------------


@asynchronous
async def test_a_forged_or_altered_cursor_is_invalid_params(mode: str) -> None:
    target = server(page_size=2)
    numbered_tools(target, 5)
    link = await connected(target, mode)
    page = await link.session.list_tools()
    assert isinstance(page.next_cursor, str)
    altered = page.next_cursor[:-2] + ("AA" if not page.next_cursor.endswith("AA") else "BB")
    for cursor in ("", "2", "bm90IGEgY3Vyc29y", altered):
        with pytest.raises(McpError) as raised:
            await link.session.list_tools(cursor)
        assert raised.value.code == jsonrpc.INVALID_PARAMS
        assert raised.value.message == "Invalid cursor"


@asynchronous
async def test_a_cursor_sealed_by_another_key_is_refused() -> None:
    first, second = server(page_size=2), server(page_size=2, secret=b"g" * 32)
    numbered_tools(first, 3)
    numbered_tools(second, 3)
    page = await (await connected(first, "modern")).session.list_tools()
    assert isinstance(page.next_cursor, str)
    other = await connected(second, "modern")
    with pytest.raises(McpError) as raised:
        await other.session.list_tools(page.next_cursor)
    assert raised.value.code == jsonrpc.INVALID_PARAMS


@asynchronous
async def test_without_a_key_a_list_is_one_page() -> None:
    target = Server("keyless", "1.0", page_size=2)
    numbered_tools(target, 5)
    link = await connected(target, "legacy")
    page = await link.session.list_tools()
    assert [tool.name for tool in page.tools] == [f"tool_{i}" for i in range(5)]
    assert page.next_cursor is types.UNSET
    with pytest.raises(McpError) as raised:  # and no cursor can be honoured
        await link.session.list_tools("anything")
    assert raised.value.code == jsonrpc.INVALID_PARAMS


def test_a_page_size_out_of_bounds_is_refused() -> None:
    with pytest.raises(ValueError, match="page_size"):
        Server("x", "1", page_size=0)


# -- access checks -------------------------------------------------------------------


def guarded() -> Server:
    target = server()

    @target.resource("memo://public")
    def public() -> str:
        return "for everyone"

    @target.resource("memo://secret")
    def secret() -> str:
        return "for the admin"

    @target.resource_template("memo://users/{name}")
    def user(name: str) -> str:
        return f"user {name}"

    @target.access_check
    async def check(context: Context, uri: str) -> bool:
        return context.principal == "admin" or "secret" not in uri

    return target


@asynchronous
async def test_an_access_check_hides_what_it_refuses(mode: str) -> None:
    link = await connected(guarded(), mode)
    uris = [resource.uri async for resource in link.session.iter_resources()]
    assert uris == ["memo://public"]
    with pytest.raises(McpError) as raised:
        await link.session.read_resource("memo://secret")
    # Refused looks exactly like absent: its existence is not revealed.
    absent_code = jsonrpc.INVALID_PARAMS if mode == "modern" else jsonrpc.RESOURCE_NOT_FOUND
    assert raised.value.code == absent_code
    assert raised.value.message == "Resource not found"
    with pytest.raises(McpError) as absent:
        await link.session.read_resource("memo://nothing-here")
    assert (absent.value.code, absent.value.message) == (raised.value.code, raised.value.message)
    read = await link.session.read_resource("memo://users/ann")
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "user ann"


@asynchronous
async def test_the_access_check_sees_the_principal() -> None:
    target = guarded()
    harness = Harness(target)
    await harness.handshake()
    _, data = harness.client.send_request(
        "resources/read", types.ReadResourceRequestParams(uri="memo://secret")
    )
    [event] = harness.pair.to_server(data)
    assert isinstance(event, RequestReceived)
    reply = await target.handle_request(harness.connection, event, harness, principal="admin")
    [answer] = harness.pair.to_client(reply)
    assert isinstance(answer, ResponseReceived)
    [contents] = answer.result.contents
    assert contents.text == "for the admin"


# -- resources: URIs, typed variables, several contents --------------------------------


def library() -> Server:
    target = server()

    @target.resource_template("books://{isbn}/pages/{page}")
    def page(isbn: str, page: int) -> str:
        return f"{isbn} page {page + 1 - 1}"

    @target.resource("books://catalogue", mime_type="text/plain")
    def catalogue() -> list[Any]:
        return [
            "first part",
            b"\x00\x01binary",
            types.TextResourceContents(uri="books://catalogue#2", text="second part"),
        ]

    return target


@asynchronous
async def test_template_variables_convert_to_their_annotated_types(mode: str) -> None:
    link = await connected(library(), mode)
    read = await link.session.read_resource("books://978-3/pages/12")
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "978-3 page 12"
    # "abc" is no int: the template does not match, so there is no such resource.
    with pytest.raises(McpError) as raised:
        await link.session.read_resource("books://978-3/pages/abc")
    assert raised.value.message == "Resource not found"


@asynchronous
async def test_a_read_may_return_several_contents_of_either_kind(mode: str) -> None:
    link = await connected(library(), mode)
    read = await link.session.read_resource("books://catalogue")
    first, second, third = read.contents
    assert isinstance(first, types.TextResourceContents)
    assert (first.text, first.mime_type) == ("first part", "text/plain")
    assert isinstance(second, types.BlobResourceContents)
    assert second.blob == "AAFiaW5hcnk="
    assert isinstance(third, types.TextResourceContents)
    assert third.uri == "books://catalogue#2"


@pytest.mark.parametrize(
    "uri",
    ["books", "no scheme", "books://a b", "books://%zz", "books://\u00e9", "x:" + "a" * 9000],
)
@asynchronous
async def test_an_invalid_uri_is_refused_before_any_handler(uri: str) -> None:
    link = await connected(library(), "legacy")
    with pytest.raises(McpError) as raised:
        await link.session.read_resource(uri)
    assert raised.value.code == jsonrpc.INVALID_PARAMS
    assert raised.value.message.startswith("Invalid URI")


def test_a_template_handler_must_take_exactly_the_variables() -> None:
    target = server()
    with pytest.raises(TypeError, match="variables"):

        @target.resource_template("x://{a}/{b}")
        def wrong(a: str) -> str:
            return a


# -- completion ----------------------------------------------------------------------


@asynchronous
async def test_completion_sends_at_most_100_values_and_says_there_are_more(mode: str) -> None:
    target = server()

    @target.prompt()
    def pick(word: str) -> str:
        return word

    @target.completion(prompt="pick")
    def every_word(value: str) -> list[str]:
        return [f"{value}{index}" for index in range(250)]

    link = await connected(target, mode)
    result = await link.session.complete(types.PromptReference(name="pick"), "word", "w")
    completion = result.completion
    assert len(completion.values) == MAX_COMPLETION_VALUES == 100
    assert completion.values[0] == "w0"
    assert (completion.total, completion.has_more) == (250, True)
    with pytest.raises(McpError) as raised:
        await link.session.complete(types.PromptReference(name="nope"), "word", "w")
    assert raised.value.code == jsonrpc.INVALID_PARAMS


@asynchronous
async def test_template_completion_sees_the_variables_already_chosen() -> None:
    target = library()

    @target.completion(resource_template="books://{isbn}/pages/{page}")
    def pages(argument: str, context_arguments: dict[str, str]) -> types.Completion:
        isbn = context_arguments.get("isbn", "?")
        return types.Completion(values=[f"{isbn}:1", f"{isbn}:2"], total=40)

    link = await connected(target, "modern")
    ref = types.ResourceTemplateReference(uri="books://{isbn}/pages/{page}")
    result = await link.session.complete(ref, "page", "", context_arguments={"isbn": "978"})
    assert result.completion.values == ["978:1", "978:2"]
    assert (result.completion.total, result.completion.has_more) == (40, True)


# -- tools: Struct arguments, resource links, cancellation, errors ------------------------


class Address(msgspec.Struct):
    street: str
    city: str


class Person(msgspec.Struct):
    name: str
    address: Address
    tags: list[str] = []


def people() -> tuple[Server, list[BaseException]]:
    errors: list[BaseException] = []
    target = server(on_error=lambda error, context: errors.append(error))

    @target.tool()
    def register(person: Person) -> str:
        """Register a person."""
        return f"{person.name} of {person.address.city} {person.tags}"

    @target.tool()
    def find(name: str) -> types.ResourceLink:
        """Point at where a person's file lives."""
        return types.ResourceLink(uri=f"people://{name}", name=name, mime_type="text/plain")

    @target.resource("people://broken")
    def broken() -> str:
        raise OSError("/var/lib/people.db is locked")

    @target.resource("people://odd")
    def odd() -> Any:
        return 42

    return target, errors


@asynchronous
async def test_a_struct_parameter_is_published_with_defs_and_converted(mode: str) -> None:
    target, _ = people()
    link = await connected(target, mode)
    [tool] = [t async for t in link.session.iter_tools() if t.name == "register"]
    schema = tool.input_schema
    assert schema["required"] == ["person"]
    assert "$defs" in schema
    assert "Address" in schema["$defs"]
    person = {"name": "Ada", "address": {"street": "1 Way", "city": "London"}}
    result = await link.session.call_tool("register", {"person": person})
    assert result.is_error is not True
    [block] = result.content
    assert isinstance(block, types.TextContent)
    assert block.text == "Ada of London []"
    bad = {"name": "Ada", "address": {"street": "1 Way"}}
    refused = await link.session.call_tool("register", {"person": bad})
    assert refused.is_error is True
    [why] = refused.content
    assert isinstance(why, types.TextContent)
    assert "city" in why.text


@asynchronous
async def test_a_tool_may_return_a_resource_link(mode: str) -> None:
    target, _ = people()
    link = await connected(target, mode)
    result = await link.session.call_tool("find", {"name": "ada"})
    [block] = result.content
    assert isinstance(block, types.ResourceLink)
    assert (block.uri, block.name) == ("people://ada", "ada")


@asynchronous
async def test_a_failing_read_is_reported_to_the_server_and_generic_to_the_client(
    mode: str,
) -> None:
    target, errors = people()
    link = await connected(target, mode)
    for uri in ("people://broken", "people://odd"):
        with pytest.raises(McpError) as raised:
            await link.session.read_resource(uri)
        assert raised.value.code == jsonrpc.INTERNAL_ERROR
        assert raised.value.message == "Internal error"
        assert raised.value.data is None
    assert [type(error) for error in errors] == [OSError, TypeError]


@asynchronous
async def test_an_unknown_method_is_method_not_found(mode: str) -> None:
    target, _ = people()
    harness = Harness(target)
    if mode == "legacy":
        await harness.handshake()
    else:
        harness.go_modern()
    _, data = harness.client.send_request("tools/list")
    unknown = data.replace(b'"tools/list"', b'"people/enumerate"')
    answer = await harness.deliver(unknown)
    harness.pair.forget_last("client")
    assert isinstance(answer, ErrorReceived)
    assert answer.error.code == jsonrpc.METHOD_NOT_FOUND


@asynchronous
async def test_a_handler_sees_its_cancellation_and_nothing_is_sent_after_it() -> None:
    target = server()
    seen: dict[str, Any] = {}

    @target.tool()
    async def long_job(ctx: Context) -> str:
        await ctx.report_progress(1, 3)
        # The client cancels while the handler runs (a driver would deliver it now).
        [cancel] = harness.pair.to_server(harness.client.cancel(ctx.request_id, "enough"))
        assert isinstance(cancel, CancelRequested)
        target.request_cancelled(harness.connection, cancel.request_id)
        seen["cancelled"] = ctx.cancelled
        await ctx.report_progress(2, 3)  # dropped: the request is over for the client
        return "finished anyway"

    harness = Harness(target)
    await harness.handshake()
    params = types.CallToolRequestParams(name="long_job", meta={"progressToken": "job"})
    sent_before = len(harness.pair.emitted)
    event = await harness.call("tools/call", params)
    assert seen == {"cancelled": True}
    # No response to a cancelled request ("SHOULD NOT send a response"), no more progress.
    assert isinstance(event, RequestReceived)
    progress = [n for n in harness.notifications if getattr(n, "progress", None) is not None]
    assert [n.progress for n in progress] == [1]
    server_sent = [e for e in harness.pair.emitted[sent_before:] if e[0] == "server"]
    assert len(server_sent) == 1  # the one progress notification
    assert harness.connection.era is Era.LEGACY


# -- listings: every metadata field, checked where it is written ----------------------


def catalogued() -> Server:
    target = server()
    icon = types.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
    notes = types.Annotations(
        audience=["user", "assistant"], priority=0.8, last_modified="2025-01-12T15:00:58Z"
    )

    @target.resource(
        "notes://today",
        name="today",
        title="Today's notes",
        description="What happened today.",
        mime_type="text/markdown",
        size=12,
        annotations=notes,
        icons=[icon],
    )
    def today() -> str:
        return "# Today\nok\n"

    @target.resource_template(
        "notes://{day}",
        name="by-day",
        title="Notes by day",
        annotations=types.Annotations(priority=0.0, last_modified="2025-01-12"),
    )
    def by_day(day: str) -> str:
        return day

    return target


@asynchronous
async def test_resource_listings_carry_every_metadata_field(mode: str) -> None:
    link = await connected(catalogued(), mode)
    [resource] = [r async for r in link.session.iter_resources()]
    assert (resource.title, resource.description) == ("Today's notes", "What happened today.")
    assert (resource.mime_type, resource.size) == ("text/markdown", 12)
    assert resource.annotations == types.Annotations(
        audience=["user", "assistant"], priority=0.8, last_modified="2025-01-12T15:00:58Z"
    )
    assert isinstance(resource.icons, list)
    assert resource.icons[0].sizes == ["48x48"]
    [template] = [t async for t in link.session.iter_resource_templates()]
    assert template.title == "Notes by day"
    assert isinstance(template.annotations, types.Annotations)
    assert template.annotations.priority == 0.0


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"annotations": types.Annotations(priority=1.5)}, "priority"),
        ({"annotations": types.Annotations(priority=-0.1)}, "priority"),
        ({"annotations": types.Annotations(last_modified="yesterday")}, "last_modified"),
        ({"annotations": types.Annotations(last_modified="2025-02-30")}, "last_modified"),
        ({"annotations": types.Annotations(last_modified="2025-01-12T25:00:00Z")}, "modified"),
        ({"size": -1}, "size"),
    ],
)
def test_a_listing_the_schema_refuses_fails_at_registration(
    fields: dict[str, Any], problem: str
) -> None:
    target = server()
    with pytest.raises(ValueError, match=problem):
        target.resource("notes://x", **fields)(lambda: "x")
    if "size" not in fields:
        with pytest.raises(ValueError, match=problem):
            target.resource_template("notes://{x}", **fields)(lambda x: x)


@asynchronous
async def test_prompt_messages_carry_every_content_kind(mode: str) -> None:
    target = server()

    @target.prompt()
    def listen(track: str) -> list[types.PromptMessage]:
        """A prompt with audio and a link."""
        return [
            types.PromptMessage(
                role="user", content=types.AudioContent(data="UklGRg==", mime_type="audio/wav")
            ),
            types.PromptMessage(
                role="assistant",
                content=types.ResourceLink(uri=f"tracks://{track}", name=track),
            ),
        ]

    link = await connected(target, mode)
    result = await link.session.get_prompt("listen", {"track": "intro"})
    audio, linked = result.messages
    assert isinstance(audio.content, types.AudioContent)
    assert audio.content.mime_type == "audio/wav"
    assert isinstance(linked.content, types.ResourceLink)
    assert (linked.role, linked.content.uri) == ("assistant", "tracks://intro")
    with pytest.raises(McpError) as raised:
        await link.session.get_prompt("listen")
    assert raised.value.code == jsonrpc.INVALID_PARAMS


# -- a server without a key --------------------------------------------------------


def keyless_asker() -> tuple[Server, list[BaseException]]:
    errors: list[BaseException] = []
    target = Server("keyless", "1.0", on_error=lambda error, context: errors.append(error))

    @target.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return answer.action

    @target.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @target.completion(prompt="greet")
    async def names(ctx: Context) -> list[str]:
        await ctx.list_roots()
        return []

    return target, errors


@asynchronous
async def test_input_without_a_key_is_a_generic_error_and_the_embedder_is_told() -> None:
    target, errors = keyless_asker()
    harness = Harness(
        target, client_caps=types.ClientCapabilities(elicitation=types.ElicitationCapability())
    )
    harness.go_modern()
    answer = await harness.call("tools/call", types.CallToolRequestParams(name="ask"))
    assert isinstance(answer, ErrorReceived)
    assert (answer.error.code, answer.error.message) == (jsonrpc.INTERNAL_ERROR, "Internal error")
    [error] = errors
    assert "secret" in str(error)


@asynchronous
async def test_a_request_state_a_keyless_server_never_issued_is_refused() -> None:
    target, errors = keyless_asker()
    harness = Harness(
        target, client_caps=types.ClientCapabilities(elicitation=types.ElicitationCapability())
    )
    harness.go_modern()
    params = types.CallToolRequestParams(name="ask", request_state="forged")
    answer = await harness.call("tools/call", params)
    assert isinstance(answer, ErrorReceived)
    assert answer.error.code == jsonrpc.INVALID_PARAMS
    assert answer.error.message == "Invalid or expired requestState"
    assert errors == []


@asynchronous
async def test_only_the_input_methods_may_ask_for_input_in_2026() -> None:
    target, errors = keyless_asker()
    target.configure(secret=KEY, clock=lambda: 0.0)
    harness = Harness(target, client_caps=types.ClientCapabilities(roots=types.RootsCapability()))
    harness.go_modern()
    params = types.CompleteRequestParams(
        ref=types.PromptReference(name="greet"),
        argument=types.CompletionArgument(name="name", value="A"),
    )
    answer = await harness.call("completion/complete", params)
    assert isinstance(answer, ErrorReceived)
    assert answer.error.code == jsonrpc.INTERNAL_ERROR
    [error] = errors
    assert "completion/complete can't ask the client for input" in str(error)
