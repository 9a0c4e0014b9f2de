-- Each case writes with io only; the spec compares stdout and stderr whole.
local cases = {}

function cases.basic()
  io.write("a", 1, 2.5, "b")
  io.write("\n")
  io.stdout:write("x", "y\n")
  io.stderr:write("err ", 42, "\n")
  io.write() -- nothing
  io.write("no newline at the end")
end

local function say(...)
  local t = { ... }
  for i = 1, select("#", ...) do t[i] = tostring(t[i]) end
  io.write(table.concat(t, " "), "\n")
end

function cases.api()
  say("write returns stdout", io.write("") == io.stdout, io.stdout:write("") == io.stdout,
      io.stderr:write("") == io.stderr)
  say("flush returns the file", io.flush() == io.stdout, io.stderr:flush() == io.stderr)
  say(tostring(io.stdout), tostring(io.stderr), getmetatable(io.stdout))
  say("files are not tables", type(io.stdout))
  say("no files", io.open, io.read, io.lines, io.popen, io.input, io.output, io.close, io.tmpfile)
  say(pcall(io.write, "ok", {}))
  say(pcall(io.stdout.write, {}, "x"))
  say(pcall(io.stdout.write, io.stdout, nil))
  say(pcall(function() io.write = nil end))
end

function cases.long(n)
  n = tonumber(n)
  local piece = ("0123456789"):rep(100)
  for _ = 1, n / #piece do io.write(piece) end
  io.write("\nafter\n")
end

-- Children write lines in pieces at the same time: every line arrives whole.
function cases.interleave(children, lines)
  local events = process.events()
  for id = 1, tonumber(children) do process.spawn_monitored("io:writer", nil, id, lines) end
  local deadline = time.after("20s")
  for _ = 1, tonumber(children) do
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then error("children did not end") end
  end
end

-- Writes `mb` MB while nobody reads stdout: no write blocks the worker; what does not fit is
-- dropped and said so. Reports on stderr.
function cases.flood(mb)
  local chunk = ("x"):rep(1023) .. "\n"
  local ticks = 0
  coroutine.spawn(function()
    for _ = 1, 5 do time.sleep("10ms"); ticks = ticks + 1 end
  end)
  local t0, slowest, dropped, err = time.now(), 0, 0, nil
  for i = 1, tonumber(mb) * 1024 do
    local t = time.now()
    local ok, e = io.write(chunk)
    slowest = math.max(slowest, time.now() - t)
    if not ok then dropped, err = dropped + 1, e end
    if i % 256 == 0 then time.sleep(0) end
  end
  time.sleep("100ms")
  io.stderr:write(("flood wrote=%d dropped=%s slowest_ms=%.1f elapsed=%.2f ticks=%d\n"):format(
    tonumber(mb) * 1024, dropped > 0, slowest * 1000, time.now() - t0, ticks))
  io.stderr:write("error: ", tostring(err), "\n")
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
