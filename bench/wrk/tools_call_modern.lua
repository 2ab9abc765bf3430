-- wrk script: every request is a 2026-07-28 stateless tools/call of `get_weather` (the
-- tool of bench/_http_servers.py's `mcpcore` server), with the headers and _meta the
-- modern era requires. `python -m bench.fairness` runs it; by hand:
--
--   python bench/_http_servers.py mcpcore 8000 &
--   wrk -t2 -c256 -d10s --timeout 10s --latency -s bench/wrk/tools_call_modern.lua \
--       http://127.0.0.1:8000/mcp
--
-- done() prints one line starting "tail:": the percentiles, the largest latency, the
-- share of requests over 1 s and over 2 s, and wrk's error counts. Mind that wrk 4
-- corrects its latency histogram for coordinated omission: a request that took T adds
-- samples at T - i, T - 2i, ... (i: a connection's mean time per request), so one slow
-- request weighs on the percentiles like the requests it held up. The "max" is real.

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_weather"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather",'
  .. '"arguments":{"location":"Paris"},"_meta":{'
  .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}}}'

-- The share of the histogram above `us` microseconds (wrk exposes percentiles, not
-- counts: found by bisection on the percentile).
local function share_over(latency, us)
  if latency.max <= us then
    return 0
  end
  local below, above = 0, 100
  for _ = 1, 24 do
    local middle = (below + above) / 2
    if latency:percentile(middle) > us then
      above = middle
    else
      below = middle
    end
  end
  return (100 - above) / 100
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write("tail:")
  for _, p in ipairs({50, 75, 90, 99, 99.9}) do
    io.write(string.format(" p%s=%.2fms", p, latency:percentile(p) / 1000))
  end
  io.write(string.format(" max=%.2fms requests=%d rps=%.1f over1s=%.5f over2s=%.5f",
    latency.max / 1000, summary.requests, summary.requests / summary.duration * 1e6,
    share_over(latency, 1e6), share_over(latency, 2e6)))
  io.write(string.format(" errors=%d,%d,%d,%d,%d\n",
    e.connect, e.read, e.write, e.timeout, e.status))
end
