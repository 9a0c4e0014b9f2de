-- Resource accounting per service (docs/supervision.md "Resources", docs/operating.md): what
-- `steward status` shows of a service's processes (count, memory, CPU, queued messages), the
-- "run ended" event, lifecycle.limits.memory over a whole tree, and the host's memory.high.
-- Real `steward run` hosts on the apps in spec/apps/accounting, read through the status JSON,
-- the text table and the JSON event log.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")

local APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/accounting"
local MB = 1024 * 1024

local function with_host(opts, fn)
  local host = C.launch(opts)
  finally(function() host:cleanup() end)
  return fn(host)
end

-- The events with this msg (and service, if given), in order.
local function events(host, msg, service)
  local out = {}
  for _, e in ipairs(host:poll()) do
    if e.msg == msg and (not service or e.service == service) then out[#out + 1] = e end
  end
  return out
end

local function count(host, msg, service) return #events(host, msg, service) end

describe("resource accounting", function()
  it("status counts a service's processes, memory, CPU and queued messages, and a restart starts them afresh", function()
    with_host({ dir = APPS .. "/pool" }, function(host)
      local bare = host:wait_status("pool running", function(by)
        return by["app:pool"] and by["app:pool"].state == "running" and by["app:pool"]
      end)
      assert.are.equal(1, bare.processes)
      assert.is_true(bare.memory > 0 and bare.memory < MB, tostring(bare.memory))
      assert.are.equal(0, bare.queued)
      assert.is_nil(bare.memory_max)

      -- load: 3 workers holding 1 MB each, burning CPU; 50 messages wait for worker 3
      local r = host:ctl("start", "app:load")
      assert.are.equal(0, r.code, r.stdout .. r.stderr)
      host:wait("3 workers ready", function() return count(host, "worker ready", "app:pool") == 3 end)
      local pool = host:wait_status("4 processes, 50 queued", function(by)
        local p = by["app:pool"]
        return p.processes == 4 and p.queued == 50 and p
      end)
      assert.is_true(pool.memory >= 3 * MB and pool.memory < 8 * MB, tostring(pool.memory))
      assert.is_true(pool.memory_peak >= pool.memory)
      assert.is_true(pool.cpu >= 0.1, tostring(pool.cpu)) -- 3 x 10M loop iterations
      assert.is_true(pool.cpu < pool.uptime * 2 + 0.05, ("cpu %g, uptime %g"):format(pool.cpu, pool.uptime))

      -- the text table shows the same columns
      r = host:ctl("status")
      assert.are.equal(0, r.code, r.stderr)
      assert.truthy(r.stdout:match("app:pool%s+running%s+host|0x%x+%s+[%d.ms]+%s+4%s+[%d.]+M%s+[%d.]+s%s+50%s"), r.stdout)
      r = host:ctl("status", "app:pool")
      assert.truthy(r.stdout:find("processes:  4", 1, true), r.stdout)
      assert.truthy(r.stdout:find("queued:     50", 1, true), r.stdout)
      assert.truthy(r.stdout:match("memory:%s+[%d.]+M %(peak [%d.]+M, max %-%)"), r.stdout)

      -- a restart ends the run's tree: the new run holds its own process only
      r = host:ctl("restart", "app:pool")
      assert.are.equal(0, r.code, r.stdout .. r.stderr)
      local fresh = host:wait_status("pool running again", function(by)
        local p = by["app:pool"]
        return p.state == "running" and p.restarts == 1 and p
      end)
      assert.are.equal(1, fresh.processes)
      assert.are.equal(0, fresh.queued)
      assert.is_true(fresh.memory < MB, tostring(fresh.memory))
      assert.is_true(fresh.cpu < pool.cpu, ("%g after, %g before"):format(fresh.cpu, pool.cpu))

      -- the run's end was logged with what it used
      local ended = events(host, "run ended", "app:pool")
      assert.are.equal(1, #ended, host:log_text())
      assert.are.equal(4, ended[1].processes_peak)
      assert.is_true(ended[1].memory_peak >= 3 * MB, tostring(ended[1].memory_peak))
      assert.is_true(ended[1].cpu >= 0.1, tostring(ended[1].cpu))
      assert.is_true(ended[1].uptime > 0)
      assert.are.equal(0, ended[1].restarts)
      host:stop()
    end)
  end)

  it("a tree over lifecycle.limits.memory fails its service, which restarts, while another keeps running", function()
    with_host({ dir = APPS .. "/pool" }, function(host)
      host:wait("hog given up", function()
        for _, e in ipairs(events(host, "service state", "app:hog")) do
          if e.reason and e.reason:find("gave up", 1, true) then return true end
        end
      end)
      local text = host:log_text()
      local failed = {}
      for _, e in ipairs(events(host, "service state", "app:hog")) do
        if e.state == "failed" then failed[#failed + 1] = e end
      end
      assert.are.equal(3, #failed, text)
      assert.are.equal("memory limit exceeded", failed[1].reason, text)
      assert.are.equal("memory limit exceeded", failed[2].reason, text)
      assert.are.equal("gave up after 3 attempts: memory limit exceeded", failed[3].reason, text)
      assert.are.equal(3, count(host, "hog up", "app:hog"), text)
      -- each run: its own process and the grower; the tree never passed its limit by more than
      -- one budget step per process
      for _, e in ipairs(events(host, "run ended", "app:hog")) do
        assert.are.equal(2, e.processes_peak, text)
        assert.is_true(e.memory_peak <= 8 * MB + 2 * 16384, text)
      end
      -- the heartbeat kept going through all three failures, and after them
      local beats = count(host, "beat", "app:heartbeat")
      assert.is_true(beats >= 5, text)
      host:wait("two more beats", function() return count(host, "beat", "app:heartbeat") >= beats + 2 end)
      local by = {}
      for _, s in ipairs(host:status().services) do by[s.id] = s end
      assert.are.equal("running", by["app:heartbeat"].state)
      assert.are.equal(0, by["app:heartbeat"].restarts)
      assert.are.equal("failed", by["app:hog"].state)
      assert.are.equal(8 * MB, by["app:hog"].memory_max)
      assert.are.equal(0, by["app:hog"].processes)
      host:stop()
    end)
  end)

  it("memory.high: past it the host names the largest services and shuts down gracefully", function()
    with_host({ dir = APPS .. "/high", control = "memory:\n  high: 32MB\nlimits:\n  memory: 512MB\n" }, function(host)
      assert.are.equal(1, host:wait_exit(), host:log_text())
      local text = host:log_text()
      local high = events(host, "memory high: shutting down")
      assert.are.equal(1, #high, text)
      assert.are.equal("error", high[1].level, text)
      assert.are.equal(32 * MB, high[1].high)
      assert.is_true(high[1].memory > 32 * MB, text)
      assert.are.equal("app:balloon", high[1].largest[1].service, text)
      assert.is_true(high[1].largest[1].memory > 16 * MB, text)
      assert.are.equal("app:small", high[1].largest[2].service, text)
      -- a graceful shutdown: small got its CANCEL, both stopped, the host's last line
      assert.are.equal(1, count(host, "small stopping", "app:small"), text)
      local e = host.events
      assert.are.equal("stopped", e[#e].msg, text)
      local stopped = 0
      for _, s in ipairs(events(host, "service state")) do
        if s.state == "stopped" then stopped = stopped + 1 end
      end
      assert.are.equal(2, stopped, text)
    end)
  end)

  it("memory.high must be a memory size below the hard cap", function()
    local cases = {
      { "memory:\n  high: 2GB\nlimits:\n  memory: 1GB\n",
        ":2:9: field memory.high: 2048.0 MB is not below the hard cap limits.memory (1024.0 MB)" },
      { "memory:\n  high: 0.9\nlimits:\n  memory: 0.5\n", "is not below the hard cap limits.memory" },
      { "memory:\n  high: lots\n", ":2:9: field memory.high: invalid memory limit \"lots\"" },
      { "memory:\n  high: -5\n", "field memory.high: invalid memory limit -5" },
      { "memory:\n  hihg: 1GB\n", "field memory.hihg: unknown field (did you mean \"high\"?)" },
    }
    for _, case in ipairs(cases) do
      local cfg = C.tmp(".yaml")
      local f = assert(io.open(cfg, "w"))
      f:write(case[1])
      f:close()
      local r = h.run("run", APPS .. "/high", "--config", cfg)
      os.remove(cfg)
      assert.are.equal(2, r.code, case[1] .. r.stderr)
      assert.truthy(r.stderr:find(case[2], 1, true), case[1] .. r.stderr)
    end
  end)
end)
