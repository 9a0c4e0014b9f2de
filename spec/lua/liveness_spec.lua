-- Watchdogs and health checks end to end (docs/supervision.md "Watchdog", "Health checks"): the
-- apps of spec/apps/liveness run under `steward run --log-format json`; counts and order come
-- from the JSON event log, timings have generous bounds (STEWARD_SLOW widens them).
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")
local ok_cjson, cjson = pcall(require, "cjson")
local json = ok_cjson and cjson or require("dkjson")
local with_app, states, count, logs, before = hh.with_app, hh.states, hh.count, hh.logs, hh.before

local SPEC = os.getenv("SPEC_DIR") or "spec"
local APPS = SPEC .. "/apps/liveness/"

-- The state events of a service in this state.
local function in_state(ev, name, state)
  local out = {}
  for _, s in ipairs(states(ev, name)) do
    if s.state == state then out[#out + 1] = s end
  end
  return out
end

-- The verdicts the health app's verdict service gave a service's checks, between two events.
local function verdicts(ev, who, from, to)
  local out = {}
  for _, e in ipairs(logs(ev, "verdicts", "verdict")) do
    if e.who == "app:" .. who and (not from or e.i > from.i) and (not to or e.i < to.i) then
      out[#out + 1] = e.verdict
    end
  end
  return out
end

describe("watchdog", function()
  teardown(hh.cleanup_all)

  local ev, text, status
  setup(function()
    with_app("watchdog", function(host)
      host:wait("silent failed twice, pinger pinging", function(e)
        return #in_state(e, "silent", "failed") >= 2
      end)
      local r = h.run("status", "--json", APPS .. "watchdog")
      status = r.code == 0 and json.decode(r.stdout) or r.stderr
      ev = host:stop()
      text = host:log_text()
    end, APPS .. "watchdog")
  end)

  it("fails a run that stops pinging after its interval, with reason \"watchdog timeout\"", function()
    local failed = in_state(ev, "silent", "failed")
    local last = logs(ev, "silent", "last ping")
    assert.truthy(#failed >= 2, text)
    for k = 1, 2 do
      assert.are.equal("watchdog timeout", failed[k].reason, text)
      assert.are.equal(0.1 * 2 ^ (k - 1), failed[k].next_attempt, text) -- the policy applies
      before(last[k], failed[k], text)
      -- 300ms after the last ping (which came 50ms before "last ping" was logged)
      hh.near(0.25, failed[k].t - last[k].t, 0.1, 0.4, "timeout after the last ping")
    end
    local timeouts = logs(ev, "silent", "watchdog timeout")
    assert.are.equal(0.3, timeouts[1].watchdog, text)
    assert.truthy(timeouts[1].last_alive >= 0.3, text)
  end)

  it("leaves alone a service that pings from a process it spawned", function()
    assert.are.same({ "starting", "running", "stopping", "stopped" }, hh.state_names(ev, "pinger"), text)
    assert.are.equal(0, #logs(ev, "pinger", "watchdog timeout"), text)
  end)

  it("status shows the seconds since the last ping", function()
    assert.are.equal("table", type(status), tostring(status))
    local pinger
    for _, s in ipairs(status.services) do
      if s.id == "app:pinger" then pinger = s end
    end
    assert.are.equal(0.3, pinger.watchdog)
    assert.are.equal("number", type(pinger.last_alive))
    assert.truthy(pinger.last_alive < 0.3 * hh.SLOW + 0.2, tostring(pinger.last_alive))
  end)

  it("service.alive() outside a service returns nil, \"not a service\"", function()
    local r = h.run("run", APPS .. "watchdog", "-x", "app:plain_main")
    assert.are.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("alive=nil,not a service", 1, true), r.stdout)
  end)
end)

describe("health checks", function()
  teardown(hh.cleanup_all)

  local ev, text
  setup(function()
    with_app("health", function(host)
      host:wait("failing restarted twice, flapping checked 8 times, hung failed", function(e)
        return #in_state(e, "failing", "failed") >= 2 and #verdicts(e, "flapping") >= 8 and
               #in_state(e, "hung", "failed") >= 1 and count(e, "after_slow", "running") == 1
      end)
      ev = host:stop()
      text = host:log_text()
    end, APPS .. "health")
  end)

  it("restart a service after exactly `failures` failed checks in a row", function()
    local running, failed = in_state(ev, "failing", "running"), in_state(ev, "failing", "failed")
    for k = 1, 2 do
      assert.are.equal("health check failed: verdict fail", failed[k].reason, text)
      assert.are.same({ "fail", "fail", "fail" }, verdicts(ev, "failing", running[k], failed[k]), text)
    end
    assert.are.equal(0.3, failed[1].next_attempt, text) -- its restart policy
    local changes = logs(ev, "failing", "service health")
    assert.are.equal("unhealthy", changes[1].health, text)
  end)

  it("never restart a flapping service (fail, pass, fail: never `failures` in a row)", function()
    assert.truthy(#verdicts(ev, "flapping") >= 8, text)
    assert.are.same({ "starting", "running", "stopping", "stopped" }, hh.state_names(ev, "flapping"), text)
    -- each change of health is one event: unhealthy, healthy, unhealthy, ...
    local changes = logs(ev, "flapping", "service health")
    assert.truthy(#changes >= 6, text)
    for k, c in ipairs(changes) do
      assert.are.equal(k % 2 == 1 and "unhealthy" or "healthy", c.health, text)
    end
  end)

  it("ready: health holds the service (and its dependents) until the first passing check", function()
    local running = hh.find_state(ev, "slow", "running")
    assert.are.same({ "fail", "fail", "pass" }, verdicts(ev, "slow", nil, running), text)
    local healthy = logs(ev, "slow", "service health")
    assert.are.equal("healthy", healthy[#healthy].health, text)
    before(healthy[#healthy], running, text)
    before(running, hh.find_state(ev, "after_slow", "starting"), text)
    assert.are.equal(1, count(ev, "slow", "running"), text)
  end)

  it("a check that does not answer within its timeout fails", function()
    local failed = in_state(ev, "hung", "failed")[1]
    assert.are.equal("health check failed: timed out after 200ms", failed.reason, text)
    hh.near(0.2, failed.t - hh.find_state(ev, "hung", "running").t, 0.05, 0.5, "check timeout")
  end)
end)

describe("liveness in the registry", function()
  it("refuses watchdog and health on a group, and ready: health without a check", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. h.quote(dir))
    local f = assert(io.open(dir .. "/app.yaml", "w"))
    f:write([[
namespace: app
entries:
  - { name: main, kind: process.lua, source: "return function() end" }
  - { name: svc, kind: process.service, process: main, lifecycle: { ready: health } }
  - name: grp
    kind: service.group
    children: [ svc ]
    lifecycle: { watchdog: 1s, health: { check: main } }
]])
    f:close()
    local r = h.run("check", dir)
    os.execute("rm -rf " .. h.quote(dir))
    assert.are.equal(2, r.code, r.stderr)
    local out = r.stdout .. r.stderr
    assert.truthy(out:find("ready: health needs lifecycle.health with a check", 1, true), out)
    assert.truthy(out:find("a group has no process to watch: give watchdog to its services", 1, true), out)
    assert.truthy(out:find("field lifecycle.health.check: ", 1, true), out) -- a process.lua is not a function.lua
  end)
end)

describe("systemd's watchdog", function()
  local C = require("spec.lua.control_helper")
  local rt = require("spec.lua.runtime_helper")

  local function listen(path) return C.listen_notify(path, 30) end

  local function count_pings(out)
    local n = 0
    for line in (h.read_if(out) or ""):gmatch("([^\n]*)\n") do
      if line == "WATCHDOG=1" then n = n + 1 end
    end
    return n
  end

  it("is pinged (WATCHDOG=1) every half WATCHDOG_USEC from the supervisor's loop, unless WATCHDOG_PID names another process", function()
    for _, case in ipairs({ { pid = "", want = true }, { pid = "WATCHDOG_PID=1 ", want = false } }) do
      local path = C.tmp(".notify.sock")
      local out = listen(path)
      local host = C.launch({ dir = APPS .. "watchdog",
                              env = "NOTIFY_SOCKET=" .. h.quote(path) .. " WATCHDOG_USEC=200000 " .. case.pid })
      local ok, err = pcall(function()
        host:wait("running", function(ev) return C.find(ev, { msg = "service state", service = "app:pinger", state = "running" }) end)
        local t0 = rt.now()
        if case.want then
          host:wait("5 pings", function() return count_pings(out) >= 5 end)
          -- one every 100ms: 5 take at least 0.4s (the first comes at once)
          assert.truthy(rt.now() - t0 >= 0.3, ("5 pings in %.3f s"):format(rt.now() - t0))
        else
          rt.sleep(0.5)
          assert.is_true(host:alive())
          assert.are.equal(0, count_pings(out), h.read_if(out))
        end
        host:stop()
      end)
      host:cleanup()
      os.remove(out)
      os.remove(path)
      if not ok then error(err, 0) end
    end
  end)
end)
