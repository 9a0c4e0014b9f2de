local t = require("t")
-- Scenario 39, second half: after unmonitor no EXIT arrives, even when it was already on its way.
return function()
  local me = process.pid()
  -- unmonitor before the end
  local c = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  process.monitor(c)
  print(process.unmonitor(c))
  local w = process.spawn("child", nil, me, "watch", c)
  t.expect("watching")
  process.send(c, "return")
  t.expect("down") -- c has ended, and its EXIT to us (sent before w's) has been handled
  print(t.poll(process.events()))
  -- unmonitor after the end, before we looked: the EXIT already sits in our mailbox
  c = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  w = process.spawn("child", nil, me, "watch", c)
  t.expect("watching")
  process.send(c, "return")
  t.expect("down")
  print(process.unmonitor(c))
  print(t.poll(process.events()))
  -- other events waiting in the channel stay, in their order
  process.cancel(me, "first")
  local x = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  process.spawn("child", nil, me, "watch", x)
  t.expect("watching")
  process.send(x, "return", "x")
  t.expect("down")
  c = process.spawn_monitored("child", nil, me, "wait")
  t.expect("up")
  process.spawn("child", nil, me, "watch", c)
  t.expect("watching")
  process.send(c, "return")
  t.expect("down")
  process.cancel(me, "last")
  t.barrier()
  process.unmonitor(c)
  local names = { [x] = "x", [c] = "c", [me] = "me" }
  for _ = 1, 4 do
    local ev = t.poll(process.events())
    print(ev and t.event_text(ev, names))
  end
  -- unmonitor of something not monitored, of a dead pid, of a name nobody holds
  print(process.unmonitor(me), process.unmonitor(c), process.unmonitor("nobody"))
  -- monitoring again after unmonitor works
  c = process.spawn("child", nil, me, "wait")
  t.expect("up")
  process.monitor(c)
  process.unmonitor(c)
  process.monitor(c)
  process.send(c, "return", "one")
  print(t.event_text(t.event(), { [c] = "c" }))
  t.barrier()
  print(t.poll(process.events()))
end
