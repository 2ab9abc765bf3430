-- wrk script of the `asgi` layer (bench/asgi.py): every request is the same POST of one
-- JSON-RPC body with the given headers; every answer is checked. Arguments after `--`:
--
--   BODY-FILE  EXPECTED-TEXT  [HEADER: VALUE ...]
--
-- By hand, against a server of bench/_asgi_apps.py (a 2026-07-28 tools/call):
--
--   uvicorn --factory bench._asgi_apps:mcpcore_modern --loop uvloop --http httptools \
--       --port 8000 --log-level warning &
--   python -c "from bench.stdio import exchanged_lines as e; \
--       open('/tmp/body.json', 'wb').write(e('modern')[0])"
--   wrk -t2 -c64 -d3s -s bench/wrk/asgi_call.lua http://127.0.0.1:8000/mcp -- \
--       /tmp/body.json "Current weather in New York" "MCP-Protocol-Version: 2026-07-28" \
--       "Mcp-Method: tools/call" "Mcp-Name: get_weather"
--
-- Every request gets an id of its own (the body's `"id":N` rewritten): two requests of one
-- 2025-11-25 session in flight with one id is a protocol error ("id already in flight"),
-- which mcpcore's server answers with 400. Each thread counts from a base of its own.
--
-- An answer is right when its status is 200, its body holds EXPECTED-TEXT and no
-- `"isError":true` (a JSON-RPC error has no such text). done() prints one line starting
-- "asgi:": requests, the duration (µs), the answers with another status and those with a
-- wrong body, wrk's socket errors (connect, read, write, timeout), and the latency
-- percentiles p50, p90, p99 and the largest (µs, wrk's histogram, corrected for
-- coordinated omission as wrk 4 does).

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("next_id", #threads * 1000000000)
end

function init(args)
  local file = assert(io.open(args[1], "rb"))
  wrk.body = file:read("*a")
  file:close()
  expected = args[2]
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  for i = 3, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    wrk.headers[name] = value
  end
  local first, last = wrk.body:find('"id":%d+')
  assert(first, "the body has no numeric id")
  body_head = wrk.body:sub(1, first + 4)
  body_tail = wrk.body:sub(last + 1)
  bad_status = 0
  bad_body = 0
end

function request()
  next_id = next_id + 1
  return wrk.format(nil, nil, nil, body_head .. next_id .. body_tail)
end

function response(status, headers, body)
  if status ~= 200 then
    bad_status = bad_status + 1
  elseif not body:find(expected, 1, true) or body:find('"isError":true', 1, true) then
    bad_body = bad_body + 1
  end
end

function done(summary, latency, requests)
  local wrong_status, wrong_body = 0, 0
  for _, thread in ipairs(threads) do
    wrong_status = wrong_status + thread:get("bad_status")
    wrong_body = wrong_body + thread:get("bad_body")
  end
  local e = summary.errors
  io.write(string.format(
    "asgi: requests=%d duration_us=%d bad_status=%d bad_body=%d socket_errors=%d,%d,%d,%d"
      .. " p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, wrong_status, wrong_body,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
