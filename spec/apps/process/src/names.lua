local t = require("t")
-- Scenario 42 and the name registry: register, lookup, unregister, release on exit.
return function()
  local me = process.pid()
  local reg = process.registry
  -- register ourselves; lookup gives our pid
  print(reg.register("main"))
  print(reg.lookup("main") == me)
  -- registering it again is a no-op for its holder; another process cannot take it
  print(reg.register("main"))
  local c = process.spawn_monitored("child", nil, me, "register", "main")
  print(t.shown(t.expect("registered"):data()))
  t.expect("up")
  -- names cannot look like pids
  print(reg.register("host|0x0001"))
  print(reg.register(c))
  -- register another process under a name; sending by name reaches it
  print(reg.register("helper", c))
  print(reg.lookup("helper") == c)
  process.send("helper", "ping", "hello")
  print(t.shown(t.expect("pong"):data()))
  -- a process may hold several names
  print(reg.register("helper2", c), reg.lookup("helper2") == c)
  -- unregister releases at once; the name is free again
  print(reg.unregister("helper2"))
  print(reg.lookup("helper2"))
  print(reg.unregister("helper2"))
  print(reg.register("helper2", me), reg.lookup("helper2") == me, reg.unregister("helper2"))
  -- scenario 42: the names of a process are released when it ends
  process.send(c, "return")
  print(t.event_text(t.event(), { [c] = "c" }))
  print(reg.lookup("helper"))
  print(process.send("helper", "ping"))
  -- and can be taken by someone else
  local d = process.spawn_monitored("child", nil, me, "register", "helper")
  print(t.shown(t.expect("registered"):data()))
  t.expect("up")
  print(reg.lookup("helper") == d)
  -- a process that fails releases its names too
  process.send(d, "fail", "bad")
  print(t.event_text(t.event(), { [d] = "d" }))
  print(reg.lookup("helper"))
  print(reg.unregister("helper"))
  -- a dead pid cannot be registered
  print(reg.register("ghost", d))
  print(reg.lookup("ghost"))
  -- unknown names
  print(reg.lookup("never"))
  -- bad arguments
  local ok, e = pcall(function() local r = reg.register() return r end)
  print(ok, (e:gsub("^.-: ", "")))
  print(reg.lookup("main") == me)
end
