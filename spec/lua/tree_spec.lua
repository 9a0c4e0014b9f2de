-- A service owns its process tree (docs/supervision.md "A service owns its processes"): every
-- process its process spawned, at any depth, belongs to its run; when the run ends the ones
-- left get CANCEL, are killed after stop_timeout, and the service is stopped/failed (and
-- restarted) only once they are gone. Apps in spec/apps/tree; the JSON event log is read.
local hh = require("spec.lua.host_helper")
local SPEC = os.getenv("SPEC_DIR") or "spec"
local with_app, states, state_names, logs = hh.with_app, hh.states, hh.state_names, hh.logs

local function app(name) return SPEC .. "/apps/tree/" .. name end

local function index_of(events, e)
  for i, x in ipairs(events) do if x == e then return i end end
end

describe("a service's process tree", function()
  teardown(hh.cleanup_all)

  it("a crash: the workers get CANCEL and are gone before the restart", function()
    with_app("crash", function(host)
      host:wait("the second run's workers", function(ev)
        return #logs(ev, "boss", "worker up") >= 6
      end)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.same({ "starting", "running", "stopping", "failed", "starting", "running", "stopping", "stopped" },
                      state_names(ev, "boss"), text)
      local s = states(ev, "boss")
      assert.truthy(s[4].reason:find("boss crashed", 1, true), text)
      assert.are.equal("shutdown", s[7].reason, text)
      -- all three of the first run cancelled after its stopping and before its failed
      local cancelled = logs(ev, "boss", "cancelled")
      assert.are.equal(6, #cancelled, text)
      for k = 1, 3 do
        assert.truthy(index_of(ev, cancelled[k]) > index_of(ev, s[3]), text)
        assert.truthy(index_of(ev, cancelled[k]) < index_of(ev, s[4]), text)
      end
      -- host shutdown: the second run's workers are gone before the service is stopped
      for k = 4, 6 do assert.truthy(index_of(ev, cancelled[k]) < index_of(ev, s[8]), text) end
    end, app("crash"))
  end)

  it("a worker that ignores CANCEL is killed after stop_timeout", function()
    with_app("stubborn", function(host)
      host:wait("the service down", function(ev)
        local n = state_names(ev, "keeper")
        return n[#n] == "stopped"
      end)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "keeper"), text)
      assert.are.equal(1, #logs(ev, "keeper", "ignored cancel"), text)
      local s = states(ev, "keeper")
      assert.are.equal("returned", s[4].reason, text)
      assert.truthy(s[4].t - s[3].t >= 0.25, text) -- killed after stop_timeout (300ms)
    end, app("stubborn"))
  end)
end)
