local t = require("t")
return function()
  local me = process.pid()
  local cycle = { name = "a" }
  cycle.self = cycle
  local deep = { a = { b = {} } }
  deep.a.b.back = deep.a
  print(process.send(me, "bad", cycle))
  print(process.send(me, "bad", deep))
  print(process.send(me, "bad", 1, print))
  print(process.send(me, "bad", { f = function() end }))
  print(process.send(me, "bad", process.inbox()))
  print(process.send(me, "bad", coroutine.create(function() end)))
  print(process.send(me, "bad", { [{}] = 1 }))
  -- over the host's size limit (64MB)
  local big = string.rep("x", 64 * 1024 * 1024 + 1)
  local ok, err = process.send(me, "big", big)
  print(ok, err)
  big = nil
  -- none of them arrived, and the process still works
  print(t.poll(process.inbox()))
  print(process.send(me, "good", "after"))
  print(t.shown(t.expect("good"):data()))
  return 0
end
