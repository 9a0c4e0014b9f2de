local t = require("t")
-- Scenario 40 with trap_links: A gets LINK_DOWN instead and keeps running.
return function()
  local me = process.pid()
  print(process.set_options { trap_links = true })
  local b = process.spawn_linked("child", nil, me, "wait")
  t.expect("up")
  process.send(b, "fail", "B broke")
  local ev = t.event()
  print(ev.kind == process.event.LINK_DOWN, ev.from == b, ev.result.value, t.line(ev.result.error))
  -- spawn_linked_monitored: both events
  local c = process.spawn_linked_monitored("child", nil, me, "wait")
  t.expect("up")
  process.send(c, "fail", "C broke")
  local kinds = {}
  for _ = 1, 2 do
    ev = t.event()
    kinds[#kinds + 1] = ev.kind .. "/" .. tostring(ev.from == c) .. "/" .. t.line(ev.result.error)
  end
  table.sort(kinds)
  print(table.concat(kinds, " "))
  -- a kill is abnormal too
  local d = process.spawn_linked("child", nil, me, "wait")
  t.expect("up")
  process.terminate(d)
  ev = t.event()
  print(ev.kind, ev.from == d, ev.result.error)
  t.barrier()
  print(t.poll(process.events()))
  -- trap_links off again: the next failure of a link kills us
  print(process.set_options { trap_links = false })
  local e = process.spawn_linked("child", nil, me, "wait")
  t.expect("up")
  process.send(e, "fail", "E broke")
  t.msg(5)
  print("not reached")
end
