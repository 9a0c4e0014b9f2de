-- jit: true processes run on their own workers (docs/lua-api.md "Preemption and the JIT"): a
-- compiled loop, which preemption cannot interrupt, never stalls an interpreted process, even
-- on a host with a single default worker. Ticks are read from the JSON event log.
local hh = require("spec.lua.host_helper")
local SPEC = os.getenv("SPEC_DIR") or "spec"

describe("jit: true", function()
  teardown(hh.cleanup_all)

  it("a compiled spin on the JIT pool leaves the default worker's ticker on time", function()
    hh.with_app("jit", function(host)
      host:wait("the spin done", function(ev) return #hh.logs(ev, "app:spinner", "spin done") == 1 end)
      local ev = host:stop()
      local from = hh.logs(ev, "app:spinner", "spin started")[1].i
      local to = hh.logs(ev, "app:spinner", "spin done")[1].i
      local ticks = {}
      for _, e in ipairs(hh.logs(ev, "app:ticker", "tick")) do
        if e.i > from and e.i < to then ticks[#ticks + 1] = e.at end
      end
      -- a second of spinning: a 20 ms ticker on time gives ~50 ticks; a stalled one, none
      assert.is_true(#ticks >= 10, ("%d ticks during the spin\n%s"):format(#ticks, host:log_text()))
      local worst = 0
      for k = 2, #ticks do worst = math.max(worst, ticks[k] - ticks[k - 1]) end
      assert.is_true(worst < 0.25 * hh.SLOW, ("a %.3f s gap between ticks"):format(worst))
    end, SPEC .. "/apps/jit", "--config " .. SPEC .. "/apps/jit_one_worker.host.yaml")
  end)
end)
