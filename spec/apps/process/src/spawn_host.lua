local t = require("t")
return function()
  local me = process.pid()
  -- a declared process.host, by full and by relative id
  local a, err = process.spawn("child", "proc:pool", me, "echo", "on pool")
  print(type(a), err, t.shown(t.expect("args"):data()))
  local b, err2 = process.spawn("child", "pool", me, "echo", "relative pool")
  print(type(b), err2, b and t.shown(t.expect("args"):data()))
  -- monitored and linked spawns take the host too
  local c = process.spawn_monitored("child", "proc:pool", me, "ret", "pool value")
  print(t.event_text(t.event(), { [c] = "c" }))
  -- nil host: the default host
  assert(process.spawn("child", nil, me, "echo", "default"))
  print(t.shown(t.expect("args"):data()))
  -- unknown hosts, and entries that are not a process.host
  print(process.spawn("child", "proc:nohost", me, "echo"))
  print(process.spawn("child", "nohost", me, "echo"))
  print(process.spawn("child", "proc:child", me, "echo"))
  print(t.poll(process.inbox()))
end
