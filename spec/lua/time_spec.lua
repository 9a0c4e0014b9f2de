-- The time module, end to end (docs/lua-api.md): each case runs `steward run -x tm:run CASE` on
-- spec/apps/runtime/time and compares what the process printed.
local rt = require("spec.lua.runtime_helper")

local function run(case, ...)
  return rt.ok(rt.run("time", "tm:run", { case, ... }))
end

local BAD_DURATION = "bad argument #1 to '?' (expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds))"

describe("time", function()
  it("time.now is a monotonic number of seconds", function()
    assert.are.equal("type\tnumber\nwent back\t0\nadvances over a sleep\ttrue\n", run("now").stdout)
  end)

  it("time.sleep takes \"20ms\", 0.02 or \"0.02s\", sleeps at least that long; a bad duration raises", function()
    local lines = {
      "20ms\ttrue\ttrue\t0",
      "0.02\ttrue\ttrue\t0",
      "0.02s\ttrue\ttrue\t0",
      "zero\ttrue",
    }
    for _, bad in ipairs { "soon", "-1", "-5ms", "10 parsecs", "nil", "table" } do
      lines[#lines + 1] = "bad " .. bad .. "\tfalse\t" .. BAD_DURATION
    end
    assert.are.equal(table.concat(lines, "\n") .. "\n", run("sleep").stdout)
  end)

  it("time.after gives its channel one value (the time) after the duration", function()
    assert.are.equal("value\tnumber\ttrue\ttrue\ttrue\nonce\ttrue\nbad\tfalse\t" .. BAD_DURATION .. "\n",
                     run("after").stdout)
  end)

  it("time.ticker ticks until stopped; a slow reader loses ticks, not the ticker", function()
    assert.are.equal(table.concat({
      "same channel\ttrue",
      "five ticks\ttrue\ttrue\ttrue",
      "stopped\ttrue",
      "zero period\tfalse\tbad argument #1 to '?' (a ticker needs a period above zero)",
      "bad period\tfalse\t" .. BAD_DURATION,
      "buffered ticks\t1",
      "still ticking\tnumber",
    }, "\n") .. "\n", run("ticker").stdout)
  end)

  it("time.sleep inside a user coroutine passes through to the scheduler", function()
    assert.are.equal("first\ttrue\nsecond\tdone\n", run("sleep_in_coroutine").stdout)
  end)

  it("1,000 tasks sleep at once and wake in order of their durations", function()
    local slow = tonumber(os.getenv("STEWARD_SLOW")) or 1
    local r = run("many_sleepers", 1000, 5 * slow, slow)
    assert.are.equal("woke\t1000\tin order\ttrue\tconcurrently\ttrue\ttrue\n", r.stdout)
    assert.is_true(r.elapsed < 5 * slow, "took " .. r.elapsed .. " s")
  end)

  it("processes that end (return, fail, killed) with timers pending do not disturb the host", function()
    local r = run("ends_with_timers")
    assert.are.equal("return\tarmed\texit\ttrue\tfalse\nfail\tarmed\texit\ttrue\ttrue\n" ..
                     "block\tarmed\texit\ttrue\ttrue\nafter\ttrue\n", r.stdout)
    -- it returned with a 10 s sleeper, a ticker and a 10 s after still armed: no wait for them
    assert.is_true(r.elapsed < 5, "took " .. r.elapsed .. " s")
  end)
end)
