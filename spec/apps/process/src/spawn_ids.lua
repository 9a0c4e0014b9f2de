local t = require("t")
return function()
  local me = process.pid()
  -- relative and full ids name the same entry
  local a = process.spawn("child", nil, me, "echo", "relative")
  print(type(a), t.shown(t.expect("args"):data()))
  local b = process.spawn("proc:child", nil, me, "echo", "full")
  print(type(b), t.shown(t.expect("args"):data()), a ~= b)
  -- unknown ids
  print(process.spawn("nope"))
  print(process.spawn("other:child"))
  -- ids of entries that are not a process.lua
  print(process.spawn("t"))
  print(process.spawn("proc:pool"))
  print(process.spawn("settings"))
  -- a chunk that does not compile
  local pid, err = process.spawn("broken")
  print(pid, type(err), err and err:find("broken.lua", 1, true) ~= nil)
  -- arguments that cannot be copied
  pid, err = process.spawn("child", nil, me, "echo", function() end)
  print(pid, err)
  -- not a string id
  local ok, e = pcall(process.spawn)
  print(ok, (e:gsub("^.-: ", "")))
  ok, e = pcall(process.spawn, {})
  print(ok, (e:gsub("^.-: ", "")))
  -- the monitored and linked variants fail the same way, and leave no monitor or link behind
  print(process.spawn_monitored("nope"))
  print(process.spawn_linked("t"))
  local lm, lerr = process.spawn_linked_monitored("broken")
  print(lm, (lerr:gsub("^.*/src/", "")))
  print(process.spawn_monitored("child", "nohost", me, "ret"))
  print(process.spawn_linked("child", nil, me, "ret", print))
  -- nothing more arrived
  t.barrier()
  print(t.poll(process.inbox()), t.poll(process.events()))
end
