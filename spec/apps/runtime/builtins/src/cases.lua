-- Cases checked by spec/lua/builtins_spec.lua; each prints what it observed. Errors are
-- printed without their "file:line: " prefix.
local cases = {}

local function try(f, ...)
  local r = { pcall(f, ...) }
  if not r[1] then r[2] = (tostring(r[2]):gsub("^[^:\n]*:%d+: ", "")) end
  return unpack(r, 1, math.max(2, select("#", unpack(r))))
end

-- Builtins whose loop the caller sizes: each ends at once, with LuaJIT's result or an error
-- (docs/sandbox-builtins.md has the whole audit). Run in a process without a memory limit.
function cases.bounds(within)
  local t0 = time.now()
  print("insert 2^40", try(table.insert, {}, 2 ^ 40, 1))
  print("insert -2^40", try(table.insert, {}, -2 ^ 40, 1))
  print("insert 0", try(table.insert, { 1, 2, 3 }, 0, "x"))
  print("insert #t+2", try(table.insert, { 1, 2, 3 }, 5, "x"))
  local t = { 1, 2, 3 }
  table.insert(t, 4, "x")
  table.insert(t, 1, "y")
  table.insert(t, 2.7, "z") -- truncated, as LuaJIT
  print("insert in bounds", table.concat(t, " "))
  print("remove -2^40", try(table.remove, {}, -2 ^ 40))
  print("remove #t+2", try(table.remove, { 1, 2, 3 }, 5))
  print("remove 0", try(table.remove, { 1, 2, 3 }, 0))
  print("remove #t+1", select("#", table.remove({ 1, 2, 3 }, 4)))
  print("remove empty", select("#", table.remove({})), select("#", table.remove({}, 0)))
  t = { 1, 2, 3, 4 }
  print("remove in bounds", table.remove(t, 1), table.remove(t), table.concat(t, " "))
  print("unpack 1e9", try(function() return unpack({}, 1, 1e9) end))
  print("char of 1e6", try(function() return string.char(unpack({}, 1, 1e6)) end))
  print("concat 2^31", try(table.concat, {}, "", 1, 2 ^ 31 - 1))
  print("format %99999d", try(string.format, "%99999d", 1))
  print("rep empty", #string.rep("", 2 ^ 31 - 1), #string.rep("", 1e9, ""))
  print("byte 1e9", try(string.byte, ("x"):rep(1e5), 1, 1e9))
  print("select # 1e4", select("#", unpack({}, 1, 7000)))
  -- a large replacement at each of 100k positions: 10 GB of output, stopped by the budget
  print("gsub output", try(string.gsub, ("x"):rep(1e5), "", ("y"):rep(1e5)))
  print("fast", time.now() - t0 < (tonumber(within) or 5)) -- seconds; more under sanitizers
end

-- With limits.memory, the builtins that build a result as large as asked fail on memory
-- first (the allocation comes before the loop): the process fails, the host lives.
function cases.memory()
  local events = process.events()
  for _, what in ipairs { "rep", "rep_sep", "gsub", "concat", "format" } do
    local pid = process.spawn_monitored("bi:limited", nil, what)
    local deadline = time.after("10s")
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then
      print(what, "no exit")
    else
      local e = r.value.result.error
      print(what, r.value.from == pid, (tostring(e):gsub("\n.*", "")))
    end
  end
end

-- Host modules are read-only, rawset and table.insert included.
function cases.readonly()
  local send = process.send
  print("rawset", try(rawset, process, "x", 1))
  print("rawset existing", try(rawset, process, "send", print))
  print("rawset nil", try(rawset, time, "now", nil))
  print("rawset nested", try(rawset, process.event, "EXIT", "x"))
  print("insert", try(table.insert, process, "x"))
  print("insert at", try(table.insert, json, 1, "x"))
  print("remove", try(table.remove, process))
  print("sort", try(table.sort, process))
  print("unchanged", process.send == send, rawget(process, "x"), process.x, process.event.EXIT)
  local n = 0
  for _ in pairs(process) do n = n + 1 end
  print("pairs", n, next(process), #process, rawget(process, "send"))
  -- other tables with a metatable are not affected
  local plain = setmetatable({}, { __newindex = function() error("refused") end })
  rawset(plain, "k", 1)
  table.insert(plain, "v")
  print("plain", plain.k, plain[1])
end

-- A coroutine blocked in a host call can only be resumed by the scheduler: another task
-- resuming it gets false and an error instead of forging the call's results.
function cases.blocked()
  local done = channel.new(3)
  local victim, inner, waiter
  coroutine.spawn(function()
    victim = coroutine.create(function()
      time.sleep("100ms")
      return "slept"
    end)
    done:send({ "sleep", coroutine.resume(victim) })
  end)
  coroutine.spawn(function()
    local outer = coroutine.create(function()
      inner = coroutine.create(function() return time.sleep("100ms") or "inner slept" end)
      return coroutine.resume(inner)
    end)
    done:send({ "nested", coroutine.resume(outer) })
    waiter = outer
  end)
  local w = coroutine.wrap(function()
    local m = process.inbox():receive()
    return m:topic(), m:data()
  end)
  coroutine.spawn(function() done:send({ "receive", w() }) end)
  time.sleep("20ms") -- the three tasks are blocked now
  print("resume sleeping", coroutine.resume(victim, "forged"))
  print("status", coroutine.status(victim))
  print("resume nested", coroutine.resume(inner, "forged"))
  print("wrap receiving", try(w, "forged"))
  process.send(process.pid(), "real", "message")
  local got = {}
  for _ = 1, 3 do
    local v = done:receive()
    got[v[1]] = table.concat({ tostring(v[2]), tostring(v[3]), tostring(v[4]), tostring(v[5]) }, " ")
  end
  print("sleep", got.sleep)
  print("nested", got.nested)
  print("receive", got.receive)
  print("after", coroutine.status(victim), waiter ~= nil and coroutine.status(waiter))
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
