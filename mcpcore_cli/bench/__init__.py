"""``mcpcore bench``'s installed commands: load-test any MCP server, time any message.

* ``mcpcore bench run``: a load generator for MCP itself (any server, either era,
  Streamable HTTP, WebSocket or stdio), with latency percentiles from an HDR histogram.
* ``mcpcore bench codec``: the user's own messages through mcpcore's typed codec,
  beside bare msgspec, json, orjson and the official SDK.

One concept per module. ``run``:

- `run`: the options (standard library only: ``--help`` works without the extra);
- `loadtest`: runs each level and reports it;
- `targets`: the TARGET on the command line, and the clients that reach it;
- `operations`: the request each worker sends, and how its answer is judged;
- `engine`: the closed loop (C workers, one request in flight each) and the open loop
  (a fixed rate, latency measured from each request's intended start);
- `latencies`: the HDR histogram latencies go into;
- `report`: the table, the JSON records and the chart; `progress`: the live bar.

``codec``:

- `codec`: the command; `user_messages`: the files it reads;
- `messages`: a wire message and how to type it; `codecs`, `sdk_codecs`: the variants;
- `verify`: the output check; `timing`: calibrated, interleaved, median timings.

The project's side-by-side suite (``python -m bench``, in a source checkout) uses the
same pieces: `timing`, the codecs, and `engine` for its in-flight sweeps.
"""
