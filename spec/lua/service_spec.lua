-- The `service` module end to end (docs/lua-api.md#service): apps of spec/apps/service run under
-- `steward run --log-format json`; what each process learns is logged and asserted from the JSON
-- event log. Restart delays have jitter 0, so each `next_attempt` is exact.
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")
local with_app, states, count, logs, before = hh.with_app, hh.states, hh.count, hh.logs, hh.before

local SPEC = os.getenv("SPEC_DIR") or "spec"
local APPS = SPEC .. "/apps/service/"

-- The failed events of a service.
local function failures(ev, name)
  local out = {}
  for _, s in ipairs(states(ev, name)) do
    if s.state == "failed" then out[#out + 1] = s end
  end
  return out
end

describe("service module", function()
  teardown(hh.cleanup_all)

  it("id and config in the service's process and in a process it spawned; a child's ready() makes it running", function()
    with_app("basics", function(host)
      host:wait("svc, own_ready and bare running", function(ev)
        return count(ev, "svc", "running") == 1 and count(ev, "own_ready", "running") == 1 and #logs(ev, "bare", "bare") == 1
      end)
      local ev = host:stop()
      local text = host:log_text()
      local own = logs(ev, "svc", "own")[1]
      assert.are.equal("app:svc", own.id, text)
      assert.are.same({ greeting = "hello", database = "app:bare", limits = { workers = 3 }, tags = { "a", "b" } },
                      own.config, text)
      assert.are.equal("hello", logs(ev, "svc", "again")[1].greeting, text) -- a copy each call
      local child = logs(ev, "svc", "child")[1]
      assert.are.equal("app:svc", child.id, text)
      assert.are.equal("hello", child.greeting, text)
      assert.are_not.equal(own.pid, child.pid, text)
      -- starting until the child said ready, running right after
      local ready = logs(ev, "svc", "child ready")[1]
      assert.is_true(ready.ok, text)
      local running = hh.find_state(ev, "svc", "running")
      before(child, running, text)
      assert.are.equal("starting", states(ev, "svc")[1].state, text)
      -- its own process: as process.ready(), true every time, the first counts
      local own_ready = logs(ev, "own_ready", "own ready")[1]
      assert.is_true(own_ready.ok, text)
      assert.is_true(own_ready.again, text)
      before(logs(ev, "own_ready", "asking")[1], hh.find_state(ev, "own_ready", "running"), text)
      assert.is_true(logs(ev, "bare", "bare")[1].config, text) -- no config: nil
    end, APPS .. "basics")
  end)

  it("outside a service (run -x, and a process it spawned) each function returns nil, \"not a service\"", function()
    local r = h.run("run", APPS .. "basics", "-x", "app:plain")
    assert.are.equal(0, r.code, r.stderr)
    for _, where in ipairs({ "main", "child" }) do
      local line = r.stdout:match(where .. " ([^\n]*)")
      assert.truthy(line, r.stdout)
      for _, name in ipairs({ "id", "config", "ready", "reset_backoff", "set_restart_policy" }) do
        assert.truthy(line:find(name .. "=nil,not a service", 1, true), where .. ": " .. line)
      end
    end
  end)

  describe("restart policy", function()
    local ev, text
    setup(function()
      with_app("policy", function(host)
        ev = host:wait("once failed for good, restore and grow gave up, reset past its max_attempts", function(e)
          local once = failures(e, "once")
          return #once == 3 and #failures(e, "restore") == 2 and #failures(e, "grow") == 4 and
                 #failures(e, "reset") >= 6 and count(e, "bad", "stopped") == 1 and
                 #logs(e, "guarded", "guarded") == 1 and e
        end)
        host:hold(0.6) -- longer than any delay: nothing more of once
        ev = host:stop()
        text = host:log_text()
      end, APPS .. "policy")
    end)

    it("set_restart_policy changes the delay and policy of this run's restart only", function()
      local f = failures(ev, "once")
      assert.are.equal(3, #f, text)
      assert.are.equal(0.05, f[1].next_attempt, text) -- run 1 set 50ms (registry: 400ms)
      assert.are.equal(0.4, f[2].next_attempt, text)  -- run 2 set nothing: the registry's
      assert.is_nil(f[3].next_attempt, text)          -- run 3 set policy never: failed for good
      assert.are.equal(3, #logs(ev, "once", "run"), text)
    end)

    it("set_restart_policy(nil) gives the registry's policy back", function()
      local f = failures(ev, "restore")
      assert.are.equal(0.15, f[1].next_attempt, text)
      assert.truthy(f[2].reason:find("gave up after 2 attempts", 1, true), text) -- not the 1 it set
    end)

    it("reset_backoff makes the next failure count as the first", function()
      local grow = failures(ev, "grow")
      assert.are.same({ 0.05, 0.1, 0.2 }, { grow[1].next_attempt, grow[2].next_attempt, grow[3].next_attempt }, text)
      assert.truthy(grow[4].reason:find("gave up after 4 attempts", 1, true), text)
      local reset = failures(ev, "reset")
      assert.truthy(#reset >= 6, text) -- past its max_attempts: 4
      for _, s in ipairs(reset) do
        assert.are.equal(1, s.attempt, text)
        assert.are.equal(0.05, s.next_attempt, text)
      end
    end)

    it("under lifecycle.security each change is checked on the service's id", function()
      local g = logs(ev, "guarded", "guarded")[1]
      assert.are.equal("nil", g.set, text)
      assert.are.equal("permission denied: service.set_restart_policy on app:guarded", g.set_err, text)
      assert.is_true(g.reset, text)
      assert.are.equal("app:guarded", g.id, text) -- not guarded
    end)

    it("a bad table raises, naming the field", function()
      local want = {
        "policy: expected on_failure, always or never",
        "initial_delay: expected a duration",
        "max_delay: expected a duration",
        "backoff_factor: expected a number from 1 to 1000",
        "jitter: expected a number from 0 to 1",
        "max_attempts: expected a whole number from 0 to 1000000000",
        "unknown field \"colour\" (policy, initial_delay, max_delay, backoff_factor, jitter or max_attempts)",
        "unknown field of type number",
        "jitter: expected a number from 0 to 1",
        "policy: expected on_failure, always or never",
        "table expected, got string",
      }
      local bad = logs(ev, "bad", "bad")
      assert.are.equal(#want, #bad, text)
      for i, w in ipairs(want) do
        assert.are.equal(i, bad[i].case)
        assert.is_false(bad[i].ok)
        assert.truthy(bad[i].err:find("bad argument #1", 1, true), bad[i].err)
        assert.truthy(bad[i].err:find(w, 1, true), bad[i].err)
      end
    end)
  end)
end)
