"""``mcpcore bench``'s installed commands: load-test any MCP server, time any message.

* ``mcpcore bench run``: a load generator for MCP itself (any server, either era,
  Streamable HTTP, WebSocket or stdio), with latency percentiles from an HDR histogram.
* ``mcpcore bench codec``: the user's own messages through mcpcore's typed codec,
  beside bare msgspec, json, orjson and the official SDK.

The project's side-by-side suite (``python -m bench``, in a source checkout) times its
layers with the same pieces (`mcpcore_cli.bench.timing`).
"""
