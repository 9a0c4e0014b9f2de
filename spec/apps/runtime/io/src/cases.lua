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

-- Writes 1 KB lines while nobody reads stdout: once the stream's buffer is full the writing
-- task waits (other tasks keep running) and gives up after its patience. Reports on stderr.
function cases.flood()
  local line = ("x"):rep(1023) .. "\n"
  local ticks = 0
  coroutine.spawn(function()
    while true do time.sleep("10ms"); ticks = ticks + 1 end
  end)
  local accepted, ok, err, t, ticks_before = 0, nil, nil, nil, nil
  repeat
    t, ticks_before = time.now(), ticks
    ok, err = io.write(line)
    if ok then accepted = accepted + 1 end
  until not ok or accepted > 8192
  io.stderr:write(("flood accepted_kb=%d waited=%.2f ticks_while_waiting=%d\n"):format(
    accepted, time.now() - t, ticks - ticks_before))
  io.stderr:write("error: ", tostring(err), "\n")
end

-- Writes `n` 1 KB lines to a reader that starts late and is slow: every one arrives.
function cases.slow(n)
  local line = ("y"):rep(1023) .. "\n"
  local ok_count = 0
  for _ = 1, tonumber(n) do
    if io.write(line) then ok_count = ok_count + 1 end
  end
  io.stderr:write("slow ok=", ok_count, "\n")
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
