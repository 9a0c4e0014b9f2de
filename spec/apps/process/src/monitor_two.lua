local t = require("t")
-- Scenario 39, first half: two monitors on one process, two EXIT events.
return function()
  local me = process.pid()
  local c = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  process.monitor(c)
  -- and a second process watching it too
  local w = process.spawn("child", nil, me, "watch", c)
  t.expect("watching")
  process.send(c, "return", "bye")
  for _ = 1, 2 do print(t.event_text(t.event(), { [c] = "c" })) end
  local kind, from = t.expect("down"):data()
  print(kind, from == c)
  t.barrier()
  print(t.poll(process.events()))
end
