-- Soak: one Lua process spawns and terminates 100,000 processes (400 waves of 250, each
-- blocked on its inbox, every EXIT event awaited); the host's RSS, open descriptors and
-- threads, read from /proc of the steward process, stay near where they were after 20
-- warm-up waves. spec/apps/runtime/soak/src/waves.lua prints "baseline", holds still for a
-- moment while this spec samples, then runs the waves, prints "done ..." and blocks.
-- Waves of 250, not 1,000: with two workers, whether freed states sit in one malloc arena or
-- two moves RSS by a whole wave's worth (measured: ~40 MB or ~58 MB at 1,000 per wave, stable
-- over 400,000 processes either way), which would drown a leak; at 250 the noise is ~2 MB and
-- a leak of 100 bytes per process (10 MB) still fails. A second case runs waves of 1,000.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")

-- Under sanitizers (STEWARD_SLOW > 1) everything is several times slower and ASan's quarantine
-- keeps freed memory resident: fewer waves, wider deadlines, and RSS is not judged there.
local SLOW = tonumber(os.getenv("STEWARD_SLOW")) or 1
local WAVES, PER, WARMUP, HOLD = SLOW > 1 and 40 or 400, 250, SLOW > 1 and 4 or 20, "1s"
local RSS_SLACK_KB = 10 * 1024

local read = h.read_if

local sample = h.proc_sample

local function alive(pid) return read("/proc/" .. pid .. "/status") ~= nil end

-- Waits until the file holds `word` (or the process died, or the deadline passed), sampling
-- the process every 10 ms meanwhile; returns the file's text and the highest RSS seen.
local function wait_for(file, word, pid, seconds)
  local deadline, peak = rt.now() + seconds, 0
  while rt.now() < deadline do
    local s = read(file) or ""
    if s:find(word, 1, true) then return s, peak end
    if not alive(pid) then return nil, "steward exited: " .. s end
    local status = read("/proc/" .. pid .. "/status")
    local rss = status and tonumber(status:match("VmRSS:%s*(%d+) kB"))
    if rss and rss > peak then peak = rss end
    rt.sleep(0.01)
  end
  return nil, "no \"" .. word .. "\" within " .. seconds .. " s"
end

local function stop(pid)
  os.execute("kill -TERM " .. pid .. " 2>/dev/null")
  local deadline = rt.now() + 5
  while alive(pid) and rt.now() < deadline do rt.sleep(0.02) end
  if alive(pid) then os.execute("kill -KILL " .. pid .. " 2>/dev/null") end
end

describe("soak", function()
  it("100,000 processes spawned and terminated in waves leave RSS, fds and threads near baseline", function()
    local out, err, pidfile = os.tmpname(), os.tmpname(), os.tmpname()
    local cmd = table.concat({ h.quote(h.steward), "run", h.quote(rt.APPS .. "/soak"), "-x", "soak:waves",
                               WAVES, PER, WARMUP, HOLD }, " ")
    os.execute(cmd .. " >" .. out .. " 2>" .. err .. " </dev/null & echo $! >" .. pidfile)
    local pid = assert(tonumber(read(pidfile)), "no pid")
    finally(function()
      stop(pid)
      os.remove(out)
      os.remove(err)
      os.remove(pidfile)
    end)

    -- the warm-up waves bring the allocator to its working size: their peak (1,000 live
    -- processes) is the reference, since freed memory need not go back to the system
    local s, warm_peak = wait_for(out, "baseline\n", pid, 30 * SLOW)
    assert(s, warm_peak)
    local before = sample(pid)
    assert.is_nil((read(out) or ""):find("start", 1, true), "sampled the baseline too late")
    local reference = math.max(warm_peak, before.rss)

    local t0 = rt.now()
    local peak
    s, peak = wait_for(out, "done", pid, 120 * SLOW)
    assert(s, tostring(peak) .. "\n" .. (read(err) or ""))
    local elapsed = rt.now() - t0
    local after = sample(pid)

    assert.matches("\ndone " .. WAVES * PER .. " killed " .. WAVES * PER .. " in [%d.]+ s\n", s)
    assert.are.equal("", read(err))
    local figures = string.format("RSS: %d kB after the warm-up (its peak %d kB), peak %d kB during the waves, " ..
                                  "%d kB after them", before.rss, warm_peak, peak, after.rss)
    if SLOW == 1 then
      assert.is_true(after.rss - reference < RSS_SLACK_KB, figures)
      assert.is_true(peak - reference < RSS_SLACK_KB, figures)
    end
    assert.is_true(after.fds <= before.fds, string.format("fds: %d before, %d after", before.fds, after.fds))
    assert.are.equal(before.threads, after.threads)
    assert.is_true(elapsed < 60 * SLOW, string.format("the waves took %.1f s", elapsed))
    print("# " .. figures .. string.format("; %d processes in %.1f s", WAVES * PER, elapsed))
  end)

  it("waves of 1,000 live processes (the pid table grows over dead pids) run to the end", function()
    local r = rt.ok(rt.run("soak", "soak:waves", { 10, 1000, 0, 0, "exit" }, { limit = 30 * SLOW }))
    assert.matches("\ndone 10000 killed 10000 in [%d.]+ s\n$", r.stdout)
  end)
end)
