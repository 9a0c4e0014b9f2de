-- The wall clock, time text, durations and uuids end to end (docs/lua-api.md "time", "uuid"):
-- each case runs `steward run -x clock:run CASE` on spec/apps/runtime/clock and compares what
-- the process printed.
local rt = require("spec.lua.runtime_helper")

local function run(case, ...)
  return rt.ok(rt.run("clock", "clock:run", { case, ... }))
end

local function tab(...) return table.concat({ ... }, "\t") end
local function lines(t) return table.concat(t, "\n") .. "\n" end

describe("time (wall clock)", function()
  it("time.unix is the wall clock in seconds with a fraction, as the spec runner's os.time", function()
    local before = os.time()
    local out = run("unix").stdout
    local after = os.time()
    local t = tonumber(out:match("^([%d%.]+)\n"))
    assert.is_number(t, out)
    assert.is_true(t >= before - 1 and t <= after + 1, ("%f not within [%d, %d]"):format(t, before, after))
    assert.truthy(out:match("^%d+%.%d%d%d%d%d%d\n"), out) -- not whole seconds
    assert.are.equal("type\tnumber\tadvances\ttrue\n", out:match("\n(.*)$"))
  end)

  it("time.format and time.parse round trip RFC 3339 to the microsecond, across the whole range", function()
    assert.are.equal(lines {
      tab("1970-01-01T00:00:00Z", "true"),
      tab("1969-12-31T23:59:59Z", "true"),
      tab("1970-01-01T00:00:00.5Z", "true"),
      tab("2000-02-29T00:00:00.25Z", "true"),
      tab("2026-11-24T06:10:43.123456Z", "true"),
      tab("0001-01-01T00:00:00Z", "true"),
      tab("9999-12-31T23:59:59Z", "true"),
      tab("now", "true"),
      tab("directives", "2000-02-29 12:04:05.500000 +0000", "951825845.5"),
    }, run("round_trip").stdout)
  end)

  it("time.parse applies offsets and takes t, z and a space; time.format writes UTC", function()
    assert.are.equal(lines {
      "1795496613.25",
      tab("2026-11-24T06:03:33.25+01:00", "true"),
      tab("2026-11-23T23:33:33.25-05:30", "true"),
      tab("2026-11-24t05:03:33.25z", "true"),
      tab("2026-11-24 05:03:33.250000Z", "true"),
      "Tue 24 Nov 2026 05:03:33 UTC",
    }, run("offsets").stdout)
  end)

  it("refuses bad text with nil, err naming the byte and why; a bad format or time raises", function()
    local function cannot(s, fmt, why) return tab("nil", ('time.parse: cannot parse "%s" as %s: %s'):format(s, fmt, why)) end
    assert.are.equal(lines {
      cannot("2026-13-01T00:00:00Z", "rfc3339", "month 13 is out of range"),
      cannot("2026-02-29T00:00:00Z", "rfc3339", "day 29 is out of range for 2026-02"),
      cannot("2026-01-01T00:00:00", "rfc3339", "expected a time zone (Z or +hh:mm) at byte 20"),
      cannot("2026-01-01T00:00:60Z", "rfc3339", "second 60 is out of range (no leap seconds)"),
      cannot("yesterday", "rfc3339", "expected 4 digits at byte 1"),
      cannot("2026/01/01", "%Y-%m-%d", 'expected "-" at byte 5'),
      tab("false", "bad argument #2 to '?' (unknown directive %Q in the format (time.parse reads %Y %m %d %H %M %S %f %b %z %F %T %%))"),
      tab("false", "bad argument #1 to '?' (time out of range: years 1 to 9999)"),
      tab("false", "bad argument #2 to '?' (unknown directive %Q in the format)"),
      tab("false", "bad argument #1 to '?' (number expected, got string)"),
      tab("false", "bad argument #1 to '?' (string expected, got no value)"),
    }, run("text_errors").stdout)
  end)

  it("time.parse_duration reads chained terms into seconds; anything else is nil, err", function()
    local function bad(s)
      return tab("nil", ('time.parse_duration: invalid duration "%s" (expected e.g. "1m30s", "250ms", "1.5h" or a number of seconds)'):format(s))
    end
    assert.are.equal(lines {
      tab("1m30s", "90"), tab("250ms", "0.25"), tab("1.5h", "5400"), tab("2", "2"),
      tab("1h2m3.5s", "3723.5"), tab("0s", "0"), tab("number", "3"),
      bad(""), bad("1m30"), bad("-1s"), bad("1d"), bad("soon"), bad("1m 30s"),
      tab("false", "bad argument #1 to '?' (string expected, got no value)"),
    }, run("durations").stdout)
  end)
end)

describe("uuid", function()
  it("v4 and v7 are lowercase RFC 9562 text with their version and variant; v7 sorts in the order made, all unique", function()
    assert.are.equal(lines {
      tab("v4 format", "true", "v7 format", "true"),
      tab("v7 ordered", "true", "unique", "true"),
      tab("v7 time", "true"),
    }, run("uuids", 1000).stdout)
  end)
end)
