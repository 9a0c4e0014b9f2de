local t = require("t")
return function()
  local me = process.pid()
  print(me, type(me), me == process.pid())
  local child = process.spawn("child", nil, me, "echo", "hi")
  local m = t.expect("args")
  print(child, m:from() == child, child ~= me)
  print(t.shown(m:data()))
  -- a child's own pid() is what spawn returned
  local c2 = process.spawn("child", nil, me, "wait")
  local up = t.expect("up")
  print(up:data() == c2, up:from() == c2)
  process.send(c2, "return")
end
