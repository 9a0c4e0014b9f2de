-- The HTTP server end to end: `steward run` of an app with http.service entries (the host, its
-- JSON log read through host_helper) and real requests from a second steward over TCP
-- (spec/apps/http_server/client: raw requests through `net`, so they can pipeline, be
-- malformed or drip bytes). Covers routing, params, query, headers, JSON, 404/405/400/413/431,
-- handler errors (500, the traceback logged, never sent), keep-alive and pipelining, a slow
-- client cut by header_timeout while others are served, 1,000 connections at once, a stop
-- that drains a request in flight, a handler killed mid-request, a server killed with
-- connections open (fds back to the baseline), guards and identities. Mistakes in the kinds
-- are spec/corpus/bad/79-http-kinds (check_corpus_spec).
local hh = require("spec.lua.host_helper")
local rt = require("spec.lua.runtime_helper")
local h = require("spec.lua.steward_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = hh.SLOW
local APP = SPEC .. "/apps/http_server/app"
local CLIENT = "../http_server/client" -- runtime_helper runs apps under spec/apps/runtime

local function lines(...) return table.concat({ ... }, "\n") .. "\n" end

local function client(case, addr, ...)
  return rt.ok(rt.run(CLIENT, "client:run", { case, addr, ... }, { limit = 60 * SLOW })).stdout
end

-- Runs a client case in the background; returns a function that waits for its output.
local function client_async(case, addr, ...)
  local out, done = os.tmpname(), os.tmpname()
  os.remove(done)
  local words = { "timeout", tostring(30 * SLOW), h.quote(h.steward), "run",
                  h.quote(rt.APPS .. "/" .. CLIENT), "-x", "client:run", h.quote(case), h.quote(addr) }
  for _, a in ipairs({ ... }) do words[#words + 1] = h.quote(a) end
  os.execute("(" .. table.concat(words, " ") .. " >" .. out .. " 2>&1; touch " .. done .. ") </dev/null >/dev/null 2>&1 &")
  return function()
    local deadline = rt.now() + 40 * SLOW
    while not h.exists(done) and rt.now() < deadline do rt.sleep(0.01) end
    local text = h.read(out)
    os.remove(out)
    os.remove(done)
    return text
  end
end

local function with_server(fn) return hh.with_app("http_server", fn, APP) end

local function log_events(host, msg)
  local found = {}
  for _, e in ipairs(host:poll()) do
    if e.msg == msg then found[#found + 1] = e end
  end
  return found
end

describe("http server", function()
  after_each(hh.cleanup_all)

  it("routes by method and path; handlers get params, query, headers, body, json, remote", function()
    with_server(function(host)
      local out = client("basic", host:address("app:web"))
      assert.are.equal(lines(
        "get\t200\tapplication/json\tGET\tGET\t/api/items/42\t42\t1\ta b!\tyes\tspec\ttrue",
        "put\t201\ta b",
        "literal wins\ttrue",
        "rest\ta/b/c.txt",
        "post\t200\t{\"a\":[1,2]}\t2",
        "bad json\t200\ttrue\ttrue",
        "chunked\t[1,2,3]\t3",
        "continue\tHTTP/1.1 100 Continue\ttrue",
        "continued\t200",
        "headers\t200\t300\t8\tkeep-alive\theaders\n",
        "health\t200\ttext/plain; charset=utf-8\tsteward\tok\n",
        "head\t200\t3\t"), out)
      host:stop()
    end)
  end)

  it("answers 404, 405 with Allow, 400, 413, 431; a handler error is a 500 whose traceback is logged, never sent", function()
    with_server(function(host)
      local out = client("errors", host:address("app:web"))
      assert.are.equal(lines(
        "404\t404\ttext/plain; charset=utf-8\tNot Found\n",
        "405\t405\tGET, PUT",
        "raise\t500\ttext/plain; charset=utf-8\tinternal server error\n",
        "fail\t500\ttext/plain; charset=utf-8\tinternal server error\n",
        "shape\t500\ttext/plain; charset=utf-8\tinternal server error\n",
        "number body\t202\ttext/plain; charset=utf-8\t42",
        "413\t413\ttext/plain; charset=utf-8\tPayload Too Large\n",
        "431\t431\ttext/plain; charset=utf-8\tRequest Header Fields Too Large\n",
        "400\t400\ttext/plain; charset=utf-8\tBad Request\n",
        "400 closes\tnil\tclosed"), out)
      assert.is_nil(out:find("secret detail", 1, true))
      local failed = host:wait("three handler failures", function()
        local f = log_events(host, "handler failed")
        return #f == 3 and f
      end)
      local by_endpoint = {}
      for _, e in ipairs(failed) do by_endpoint[e.endpoint] = e end
      local raised, returned = by_endpoint["app:raise_ep"], by_endpoint["app:fail_ep"]
      assert.are.equal("the handler returned a string, expected {status, headers, body}",
                       by_endpoint["app:shape_ep"].error)
      assert.are.equal("error", raised.level)
      assert.are.equal("app:raise_ep", raised.endpoint)
      assert.matches("secret detail in the handler\nstack traceback:", raised.error, 1, true)
      assert.matches("raise.lua:1: in function 'deeper'", raised.error, 1, true)
      assert.are.equal("the database is down", returned.error)
      host:stop()
    end)
  end)

  it("keeps connections alive and answers pipelined requests in order", function()
    with_server(function(host)
      assert.are.equal(lines(
        "pipelined\t200 1, 200 ok, 200 3",
        "keep-alive\tk1,k2,k3,k4,k5",
        "200 pipelined\t200",
        "close asked\t200\tclose\tnil\tclosed"), client("pipeline", host:address("app:web")))
      host:stop()
    end)
  end)

  it("cuts a client sending a byte a second after header_timeout (408) while others are served", function()
    with_server(function(host)
      assert.are.equal(lines(
        "slow\tHTTP/1.1 408 Request Timeout\ttrue",
        "others served\ttrue"), client("slow", host:address("app:web"), tostring(SLOW)))
      host:stop()
    end)
  end)

  it("serves 1,000 connections open at once", function()
    with_server(function(host)
      assert.are.equal("many\t1000\t1000\n", client("many", host:address("app:web"), "1000"))
      host:stop()
    end)
  end)

  it("a stop drains: no new connections, the request in flight is answered, then the service stops", function()
    with_server(function(host)
      local addr = host:address("app:web")
      local wait = client_async("slow_request", addr, "1.5")
      host:wait("the slow request", function() return #log_events(host, "slow request begins") > 0 end)
      host:signal("TERM")
      host:wait("app:web stopping", function(ev) return hh.find_state(ev, "web", "stopping") end)
      assert.are.equal("refused\tnil\tconnection refused\n", client("refused", addr))
      assert.are.equal("slow request\t200\tclose\tslow done\n\n", wait())
      assert.are.equal(0, host:wait_exit(), host:log_text()) -- the one SIGTERM: a second exits at once
      local events = host:poll()
      assert.are.equal("stopped", events[#events].msg, host:log_text())
      hh.before(hh.find_state(events, "web", "stopping"), hh.find_state(events, "web", "stopped"))
      assert.are.equal("stopped", hh.find_state(events, "web", "stopped").state)
    end)
  end)

  it("a handler killed mid-request gets its request a 500; a server killed mid-request closes its sockets", function()
    with_server(function(host)
      local addr = host:address("app:web")
      local short = host:address("app:short")
      client("pipeline", addr) -- warm up: workers, buffers
      local baseline = h.proc_sample(host.pid).fds
      assert.are.equal(lines(
        "killed\ttrue",
        "hung request\t500\tinternal server error\n",
        "after\t200"), client("kill", addr))
      local killed = host:wait("the killed handler's log", function()
        for _, e in ipairs(log_events(host, "handler failed")) do
          if e.endpoint == "app:hang_ep" then return e end
        end
      end)
      assert.are.equal("killed", killed.error)
      local deadline = rt.now() + 10 * SLOW
      while h.proc_sample(host.pid).fds ~= baseline and rt.now() < deadline do rt.sleep(0.02) end
      assert.are.equal(baseline, h.proc_sample(host.pid).fds) -- the client's connections closed
      -- the short server is stopped with a request hanging: after its stop_timeout its
      -- process is killed, and its listener and connection close with it
      local wait = client_async("hang", short)
      host:wait("the hanging request", function()
        for _, e in ipairs(log_events(host, "hanging")) do
          if e.service == "app:short" then return true end
        end
      end)
      local r = h.run("stop", "app:short", APP)
      assert.are.equal(0, r.code, r.stderr)
      assert.are.equal("hang\tnil\tclosed\n", wait())
      host:wait("app:short stopped", function(ev) return hh.find_state(ev, "short", "stopped") end)
      deadline = rt.now() + 10 * SLOW
      while h.proc_sample(host.pid).fds ~= baseline - 1 and rt.now() < deadline do rt.sleep(0.02) end
      assert.are.equal(baseline - 1, h.proc_sample(host.pid).fds) -- its listener is gone too
      host:stop()
    end)
  end)

  it("handlers are processes of the http.service's tree: its process limit bounds them (503)", function()
    with_server(function(host)
      assert.are.equal("limit\t200\t503\n", client("limit", host:address("app:tiny")))
      local refused = host:wait("cannot start handler", function()
        for _, e in ipairs(log_events(host, "cannot start handler")) do return e end
      end)
      assert.are.equal("app:tiny", refused.service)
      assert.are.equal("process limit reached", refused.error)
      host:stop()
    end)
  end)

  it("a reload that changes an endpoint's function restarts the http.service, which serves the new code", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local function write(greeting, extra)
      local f = assert(io.open(dir .. "/app.yaml", "w"))
      f:write(([[
namespace: app
entries:
  - { name: web, kind: http.service, listen: "127.0.0.1:0", lifecycle: { auto_start: true } }
  - { name: other, kind: http.service, listen: "127.0.0.1:0", lifecycle: { auto_start: true } }
  - { name: root, kind: http.router, server: web }
  - { name: hi, kind: function.lua, source: "return function() return { body = '%s' } end" }
  - { name: hi_ep, kind: http.endpoint, router: root, method: GET, path: /hi, func: hi }
%s]]):format(greeting, extra or ""))
      f:close()
    end
    write("hello")
    local ok, err = pcall(hh.with_app, "http reload", function(host)
      local addr = host:address("app:web")
      assert.are.equal("get\t200\thello\n", client("get", addr, "/hi"))
      write("bonjour", "  - { name: bye_ep, kind: http.endpoint, router: root, method: GET, path: /bye, func: hi }\n")
      host:signal("HUP")
      host:wait("app:web restarted", function(ev) return hh.count(ev, "app:web", "running") == 2 end)
      addr = host:wait("the new listener", function(events)
        local last
        for _, e in ipairs(events) do
          if e.msg == "listening" and e.service == "app:web" then last = e.address end
        end
        return last ~= addr and last
      end)
      assert.are.equal("get\t200\tbonjour\n", client("get", addr, "/hi"))
      assert.are.equal("get\t200\tbonjour\n", client("get", addr, "/bye"))
      local ev = host:stop()
      assert.are.equal(1, hh.count(ev, "app:other", "running")) -- untouched by the reload
    end, dir)
    os.execute("rm -rf " .. h.quote(dir))
    if not ok then error(err, 0) end
  end)

  it("guards listen (net.listen on tcp:HOST:PORT); handlers run with their router's identity", function()
    hh.with_app("denied", function(host)
      local failed = host:wait("app:closed failed", function(ev) return hh.find_state(ev, "closed", "failed") end)
      assert.are.equal("permission denied: net.listen on tcp:127.0.0.1:0", failed.reason)
      local addr = host:address("app:web")
      assert.are.equal(lines(
        "who\thandler-bot\ttrue\tfalse",
        "who\tweb-bot\tfalse\ttrue"), client("who", addr))
      host:stop()
    end, SPEC .. "/apps/http_server/denied")
  end)
end)
