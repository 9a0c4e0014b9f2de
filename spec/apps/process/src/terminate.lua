local t = require("t")
return function()
  local me = process.pid()
  -- a process that never blocks
  local s = process.spawn_monitored("child", nil, me, "spin")
  t.expect("up")
  local t0 = time.now()
  print(process.terminate(s))
  print(t.event_text(t.event(), { [s] = "spinner" }))
  print(time.now() - t0 < 1)
  -- a process blocked waiting for a message
  local w = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  print(process.terminate(w))
  print(t.event_text(t.event(), { [w] = "waiter" }))
  -- by registered name
  local r = process.spawn_monitored("child", nil, me, "register", "victim")
  t.expect("registered")
  t.expect("up")
  print(process.terminate("victim"))
  print(t.event_text(t.event(), { [r] = "named" }))
  -- dead pids and unknown names
  print(process.terminate(s))
  print(process.terminate("victim"))
  print(process.terminate("host|0x7fff"))
  print(t.poll(process.events()))
end
