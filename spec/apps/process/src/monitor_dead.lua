local t = require("t")
-- Scenario 38: monitoring a process that already ended gives exactly one EXIT, at once.
return function()
  local me = process.pid()
  local c = process.spawn_monitored("child", nil, me, "ret", "gone")
  print(t.event_text(t.event(), { [c] = "c" }))
  print(process.monitor(c))
  -- at once: already in the events channel, no waiting
  local ev = t.poll(process.events())
  print(ev and t.event_text(ev, { [c] = "c" }))
  -- exactly one: nothing more, even after everything sent to us has been handled
  t.barrier()
  print(t.poll(process.events()))
  -- a pid that never existed, and a name nobody holds
  print(process.monitor("host|0x7fff"))
  ev = t.poll(process.events())
  print(ev and t.event_text(ev))
  print(process.monitor("nobody"))
  ev = t.poll(process.events())
  print(ev and ev.kind, ev and ev.result.error)
  t.barrier()
  print(t.poll(process.events()))
end
