-- The metrics endpoint end to end (docs/operating.md "Metrics"): a real `steward run` with
-- `metrics.listen: "127.0.0.1:0"` in its host config (control_helper writes the config), the
-- port read from its "metrics listening" event, raw HTTP requests over TCP through spec_sock.
-- Covers every metric for an app with a running and a crashing service (restarts grow), HEAD,
-- 404/405/400/431/413, the connection bound and the deadline, a bad metrics.listen (file:line,
-- exit 2), a port taken (exit 1), and no listener without the setting.
local ch = require("spec.lua.control_helper")
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local APP = SPEC .. "/apps/metrics/app"
local SLOW = ch.SLOW
local LISTEN = 'metrics:\n  listen: "127.0.0.1:0"\n'

local function launch(config)
  return ch.launch({ dir = APP, config = config or LISTEN })
end

-- The port the host logged it listens on.
local function port_of(host)
  local i = host:wait_event({ msg = "metrics listening" })
  local e = host.events[i]
  assert.are.equal("127.0.0.1:" .. e.port, e.address)
  assert.is_true(e.port > 0)
  return e.port
end

-- Sends bytes on one connection; returns the response as {status, headers (lower-case
-- names), body, text}.
local function request(port, bytes)
  local _, text = ch.raw("tcp:127.0.0.1:" .. port, bytes)
  local status = tonumber(text:match("^HTTP/1%.1 (%d%d%d) "))
  local head, body = text:match("^(.-)\r\n\r\n(.*)$")
  local headers = {}
  for name, value in (head or ""):gmatch("\r\n([^:\r\n]+): ([^\r\n]*)") do headers[name:lower()] = value end
  return { status = status, headers = headers, body = body, text = text }
end

local function get(port, path, method)
  return request(port, ("%s %s HTTP/1.1\r\nHost: localhost\r\n\r\n"):format(method or "GET", path or "/metrics"))
end

-- The samples of a document: list of {name, labels (table), value}; every line must be a
-- comment or a well-formed sample.
local function samples(body)
  local out = {}
  for line in body:gmatch("([^\n]*)\n") do
    if line:sub(1, 1) ~= "#" then
      local name, labels, value = line:match("^([%a_][%w_]*)(%b{}) (%S+)$")
      if not name then
        name, value = line:match("^([%a_][%w_]*) (%S+)$")
        labels = "{}"
      end
      assert(name and tonumber(value), "not a sample line: " .. line)
      local l = {}
      for k, v in labels:gmatch('([%a_][%w_]*)="([^"]*)"') do l[k] = v end
      out[#out + 1] = { name = name, labels = l, value = tonumber(value) }
    end
  end
  return out
end

local function value(list, name, labels)
  for _, s in ipairs(list) do
    local hit = s.name == name
    for k, v in pairs(labels or {}) do hit = hit and s.labels[k] == v end
    if hit then return s.value end
  end
end

local SERVICE_FAMILIES = {
  steward_service_state = "gauge", steward_service_restarts_total = "counter",
  steward_service_uptime_seconds = "gauge", steward_service_processes = "gauge",
  steward_service_memory_bytes = "gauge", steward_service_memory_peak_bytes = "gauge",
  steward_service_queued_messages = "gauge", steward_service_cpu_seconds_total = "counter",
}
local HOST_FAMILIES = {
  steward_host_services = "gauge", steward_host_uptime_seconds = "gauge",
  steward_host_processes = "gauge", steward_host_processes_limit = "gauge",
  steward_host_memory_bytes = "gauge", steward_host_memory_limit_bytes = "gauge",
  steward_host_shutting_down = "gauge", steward_log_lines_dropped_total = "counter",
}

local function restarts(port)
  return value(samples(get(port).body), "steward_service_restarts_total", { service = "app:crasher" })
end

describe("metrics endpoint", function()
  it("answers GET /metrics with every metric of a running app with a crashing service", function()
    local host = launch()
    finally(function() host:cleanup() end)
    local port = port_of(host)
    host:wait_event({ msg = "service state", service = "app:db", state = "running" })
    host:wait("two restarts of app:crasher", function() return (restarts(port) or 0) >= 2 end)
    local r = get(port)
    assert.are.equal(200, r.status, r.text)
    assert.are.equal("text/plain; version=0.0.4; charset=utf-8", r.headers["content-type"])
    assert.are.equal(#r.body, tonumber(r.headers["content-length"]))
    for families in pairs({ [SERVICE_FAMILIES] = true, [HOST_FAMILIES] = true }) do
      for name, type in pairs(families) do
        assert.truthy(r.body:find("\n# HELP " .. name .. " [^\n]+\n# TYPE " .. name .. " " .. type .. "\n")
                      or r.body:find("^# HELP " .. name .. " [^\n]+\n# TYPE " .. name .. " " .. type .. "\n"), name)
      end
    end
    local s = samples(r.body)
    for name in pairs(SERVICE_FAMILIES) do
      for _, id in ipairs({ "app:db", "app:crasher" }) do
        assert.is_not_nil(value(s, name, { service = id }), name .. " " .. id)
      end
    end
    for name in pairs(HOST_FAMILIES) do assert.is_not_nil(value(s, name), name) end
    -- one state gauge per state, 1 for the current one
    local on = 0
    for _, st in ipairs({ "inactive", "starting", "running", "stopping", "stopped", "failed" }) do
      local v = value(s, "steward_service_state", { service = "app:db", state = st })
      assert.are.equal(st == "running" and 1 or 0, v, st)
      on = on + value(s, "steward_service_state", { service = "app:crasher", state = st })
    end
    assert.are.equal(1, on)
    assert.are.equal(1, value(s, "steward_service_processes", { service = "app:db" }))
    assert.is_true(value(s, "steward_service_uptime_seconds", { service = "app:db" }) > 0)
    assert.is_true(value(s, "steward_service_memory_bytes", { service = "app:db" }) > 0)
    assert.is_true(value(s, "steward_host_processes") >= 1)
    assert.is_true(value(s, "steward_host_memory_bytes") > 0)
    assert.is_true(value(s, "steward_host_memory_limit_bytes") > value(s, "steward_host_memory_bytes"))
    assert.are.equal(1, value(s, "steward_host_services", { state = "running" }))
    assert.are.equal(0, value(s, "steward_host_shutting_down"))
    -- the counter grows while the service keeps crashing, and agrees with `steward status`
    local first = value(s, "steward_service_restarts_total", { service = "app:crasher" })
    host:wait("more restarts", function() return restarts(port) > first + 1 end)
    local st = host:status()
    local crasher
    for _, v in ipairs(st.services) do if v.id == "app:crasher" then crasher = v end end
    assert.is_true(restarts(port) >= crasher.restarts)
    -- HEAD: the same head, no body
    local head = get(port, "/metrics", "HEAD")
    assert.are.equal(200, head.status)
    assert.are.equal("", head.body)
    assert.is_true(tonumber(head.headers["content-length"]) > 1000)
    -- a query string is still /metrics
    assert.are.equal(200, get(port, "/metrics?x=1").status)
    host:stop()
  end)

  it("answers 404 for another path, 405 for another method, 400 for garbage, 431 and 413 past 8 KB", function()
    local host = launch()
    finally(function() host:cleanup() end)
    local port = port_of(host)
    assert.are.equal(404, get(port, "/").status)
    assert.are.equal(404, get(port, "/metricsx").status)
    assert.are.equal(404, get(port, "/" .. ("a"):rep(500)).status)
    local post = get(port, "/metrics", "POST")
    assert.are.equal(405, post.status)
    assert.are.equal("GET, HEAD", post.headers["allow"])
    assert.are.equal(405, get(port, "/metrics", "DELETE").status)
    assert.are.equal(400, request(port, "this is not http\r\n\r\n").status)
    local big_head = "GET /metrics HTTP/1.1\r\nX-Big: " .. ("a"):rep(9000) .. "\r\n\r\n"
    assert.are.equal(431, request(port, big_head).status)
    local big_body = "POST /metrics HTTP/1.1\r\nContent-Length: 9000\r\n\r\n" .. ("a"):rep(9000)
    assert.are.equal(413, request(port, big_body).status)
    local chunked = "POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2328\r\n" .. ("a"):rep(9000) .. "\r\n0\r\n\r\n"
    assert.are.equal(413, request(port, chunked).status)
    -- just under the bound is served
    local near = "GET /metrics HTTP/1.1\r\nX-Big: " .. ("a"):rep(8000) .. "\r\n\r\n"
    assert.are.equal(200, request(port, near).status)
    assert.is_true(host:alive())
    host:stop()
  end)

  it("serves at most 16 connections at once and closes one idle for 5 s", function()
    local host = launch()
    finally(function() host:cleanup() end)
    local port = port_of(host)
    local addr = "tcp:127.0.0.1:" .. port
    -- 16 idle connections held for 2 s: a 17th waits until they close, then is answered
    local out = ch.tmp(".out")
    os.execute(("%s hold %s 16 2 >%s 2>&1 &"):format(h.quote(ch.spec_sock), addr, out))
    host:wait("16 connections", function() return (h.read_if(out) or ""):find("connected 16") end)
    local t0 = rt.now()
    local r = get(port)
    local took = rt.now() - t0
    assert.are.equal(200, r.status)
    assert.is_true(took > 1, ("answered after %.2f s, while 16 connections were held"):format(took))
    os.remove(out)
    -- a request never finished: 408, then closed after 5 s
    local drip = ch.tmp(".out")
    os.execute(("%s drip %s %s 0.5 %d >%s 2>&1"):format(h.quote(ch.spec_sock), addr, h.quote("GET /metr"),
                                                       math.floor(10 * SLOW), drip))
    local said = h.read(drip)
    os.remove(drip)
    assert.truthy(said:find("408 Request Timeout", 1, true), said)
    local after = tonumber(said:match("closed (%S+)"))
    assert.is_true(after and after >= 4.5 and after < 5 + 3 * SLOW, said)
    assert.is_true(host:alive())
    host:stop()
  end)

  it("refuses a bad metrics.listen with file:line and exit 2", function()
    local dir = ch.tmp()
    os.execute("mkdir -p " .. h.quote(dir))
    finally(function() os.execute("rm -rf " .. h.quote(dir)) end)
    local cases = {
      { 'metrics:\n  listen: "nonsense"\n', 'invalid address "nonsense"' },
      { 'metrics:\n  listen: "127.0.0.1:99999"\n', "PORT 0-65535" },
      { 'metrics:\n  listen: "tcp://127.0.0.1:9100"\n', "expected HOST:PORT" },
      { "metrics:\n  listen: 9100\n", "expected a string" },
      { "metrics:\n  port: 9100\n", "port" },
    }
    for i, case in ipairs(cases) do
      local cfg = dir .. "/host" .. i .. ".yaml"
      local f = assert(io.open(cfg, "w"))
      f:write("# a host config\n" .. case[1])
      f:close()
      local r = h.run("run", APP, "--config", cfg)
      assert.are.equal(2, r.code, r.stderr)
      assert.truthy(r.stderr:find(cfg .. ":3:", 1, true), r.stderr)
      assert.truthy(r.stderr:find(case[2], 1, true), r.stderr)
    end
  end)

  it("fails with exit 1 when the port is taken", function()
    local first = launch()
    finally(function() first:cleanup() end)
    local port = port_of(first)
    local second = launch(('metrics:\n  listen: "127.0.0.1:%d"\n'):format(port))
    finally(function() second:cleanup() end)
    assert.are.equal(1, second:wait_exit())
    assert.truthy(second:log_text():find("metrics.listen 127.0.0.1:" .. port .. ": address already in use", 1, true),
                  second:log_text())
    first:stop()
  end)

  it("is off by default: nothing listens", function()
    local host = ch.launch({ dir = APP })
    finally(function() host:cleanup() end)
    host:wait_event({ msg = "service state", service = "app:db", state = "running" })
    assert.is_nil(ch.find(host:poll(), { msg = "metrics listening" }))
    -- no socket of the host is a listening TCP socket
    local inodes = {}
    local p = assert(io.popen("ls -l /proc/" .. host.pid .. "/fd 2>/dev/null"))
    for inode in p:read("*a"):gmatch("socket:%[(%d+)%]") do inodes[inode] = true end
    p:close()
    for _, file in ipairs({ "/proc/net/tcp", "/proc/net/tcp6" }) do
      for line in (h.read_if(file) or ""):gmatch("[^\n]+") do
        local st, inode = line:match("^%s*%d+:%s+%S+%s+%S+%s+(%x%x)%s+%S+%s+%S+%s+%S+%s+%S+%s+%S+%s+(%d+)")
        assert.is_false(st == "0A" and inodes[inode] == true, "the host listens: " .. line)
      end
    end
    host:stop()
  end)
end)
