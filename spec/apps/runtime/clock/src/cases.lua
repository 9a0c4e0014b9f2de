-- Each case prints what it observed; the spec compares the lines.
local cases = {}

function cases.unix()
  local t0 = time.unix()
  time.sleep("20ms")
  local t1 = time.unix()
  print(("%.6f"):format(t0))
  print("type", type(t0), "advances", t1 - t0 >= 0.015 and t1 - t0 < 5)
end

-- format then parse gives the time back (to the microsecond)
function cases.round_trip()
  for _, t in ipairs { 0, -1, 0.5, 951782400.25, 1795500643.123456, -62135596800, 253402300799 } do
    local s = time.format(t)
    local back = time.parse(s)
    print(s, math.abs(back - t) < 1e-6)
  end
  local now = time.unix()
  print("now", math.abs(time.parse(time.format(now)) - now) < 1e-6)
  local f = "%Y-%m-%d %H:%M:%S.%f %z"
  print("directives", time.format(951825845.5, f), time.parse(time.format(951825845.5, f), f))
end

function cases.offsets()
  local utc = time.parse("2026-11-24T05:03:33.25Z")
  print(("%.2f"):format(utc))
  for _, s in ipairs { "2026-11-24T06:03:33.25+01:00", "2026-11-23T23:33:33.25-05:30",
                       "2026-11-24t05:03:33.25z", "2026-11-24 05:03:33.250000Z" } do
    print(s, time.parse(s) == utc)
  end
  print(time.format(utc, "%a %d %b %Y %T %Z"))
end

function cases.text_errors()
  for _, s in ipairs { "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-01-01T00:00:00",
                       "2026-01-01T00:00:60Z", "yesterday" } do
    print(time.parse(s))
  end
  print(time.parse("2026/01/01", "%Y-%m-%d"))
  print(pcall(time.parse, "x", "%Q"))
  print(pcall(time.format, 1e12))
  print(pcall(time.format, 0, "%Q"))
  print(pcall(time.format, "soon"))
  print(pcall(time.parse))
end

function cases.durations()
  for _, s in ipairs { "1m30s", "250ms", "1.5h", "2", "1h2m3.5s", "0s" } do
    print(s, time.parse_duration(s))
  end
  print("number", time.parse_duration(3))
  for _, s in ipairs { "", "1m30", "-1s", "1d", "soon", "1m 30s" } do
    print(time.parse_duration(s))
  end
  print(pcall(time.parse_duration))
end

function cases.uuids(n)
  n = tonumber(n)
  local v4_ok, v7_ok, seen, ordered, unique = 0, 0, {}, true, true
  local prev = ""
  local before = math.floor(time.unix() * 1000)
  local first
  for _ = 1, n do
    local a, b = uuid.v4(), uuid.v7()
    if a:match("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-4%x%x%x%-[89ab]%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$")
      and not a:match("%u") then v4_ok = v4_ok + 1 end
    if b:match("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-7%x%x%x%-[89ab]%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$")
      and not b:match("%u") then v7_ok = v7_ok + 1 end
    if b <= prev then ordered = false end
    prev = b
    first = first or b
    if seen[a] or seen[b] then unique = false end
    seen[a], seen[b] = true, true
  end
  local after = math.ceil(time.unix() * 1000)
  local ms = tonumber(first:sub(1, 8) .. first:sub(10, 13), 16) -- the 48-bit Unix milliseconds
  print("v4 format", v4_ok == n, "v7 format", v7_ok == n)
  print("v7 ordered", ordered, "unique", unique)
  print("v7 time", ms >= before and ms <= after)
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
