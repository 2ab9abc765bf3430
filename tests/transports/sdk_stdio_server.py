"""A stdio server built with the official SDK's `MCPServer` (``mcp`` 2.3.0), for interop tests.

    python tests/transports/sdk_stdio_server.py

The SDK's stdio runner serves both protocol eras on one connection (the client's first
request decides). Its fixtures:

* tools ``echo`` (text), ``add`` (two integers, structured output), ``image`` (an image
  content block) and ``count_with_progress`` (reports ``steps`` progress notifications
  through the SDK's `Context`, then answers);
* resources ``sdk://text`` (text/plain) and ``sdk://binary`` (a few bytes with every
  byte value that is not valid UTF-8, served as a base64 blob), and the template
  ``sdk://items/{item_id}``;
* the prompt ``greet`` with a required ``name`` and an optional ``tone``.
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

NAME = "sdk-interop-server"
VERSION = "2.3.0-test"
TEXT = "Plain text from the SDK server."
#: Not UTF-8 (0x80-0xff alone, a NUL, a PNG-like header), so it must travel as a blob.
BINARY = b"\x89PNG\r\n\x1a\n\x00" + bytes(range(0x80, 0x100))
#: A 1x1 transparent GIF.
GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


def build() -> MCPServer:
    """The fixture server (built on demand: the tests import the constants only)."""
    server = MCPServer(NAME, version=VERSION, instructions="The SDK interop fixture server.")

    @server.tool()
    def echo(text: str) -> str:
        """Echoes its text."""
        return f"echo: {text}"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    @server.tool()
    def image() -> Image:
        """Returns a 1x1 GIF."""
        return Image(data=GIF, format="gif")

    @server.tool()
    async def count_with_progress(steps: int, ctx: Context) -> str:
        """Reports progress 1..steps out of steps."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted to {steps}"

    @server.resource("sdk://text", name="text", mime_type="text/plain")
    def text_resource() -> str:
        """A text resource."""
        return TEXT

    @server.resource("sdk://binary", name="binary", mime_type="application/octet-stream")
    def binary_resource() -> bytes:
        """A binary resource."""
        return BINARY

    @server.resource("sdk://items/{item_id}", name="item", mime_type="text/plain")
    def item_resource(item_id: str) -> str:
        """One item, by id."""
        return f"item {item_id}"

    @server.prompt()
    def greet(name: str, tone: str = "friendly") -> str:
        """Greets someone."""
        return f"Write a {tone} greeting for {name}."

    return server


if __name__ == "__main__":
    build().run("stdio")
