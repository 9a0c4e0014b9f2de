local t = require("t")
-- Scenario 40: a normal exit of B does not kill A, nor does a returned value (false, 0: what
-- is success, docs/lua-api.md "How a process runs").
return function()
  local me = process.pid()
  local b = process.spawn_linked_monitored("child", nil, me, "wait")
  t.expect("up")
  process.send(b, "return", "fine")
  print(t.event_text(t.event(), { [b] = "B" }))
  t.barrier() -- a LINK_DOWN sent after the EXIT would have been handled by now
  print("A alive")
  -- returning false alone, or 0, is still a normal exit
  local c = process.spawn_linked_monitored("child", nil, me, "ret", false)
  print(t.event_text(t.event(), { [c] = "C" }))
  t.barrier()
  print("A alive")
  -- and the links of a trapping process stay quiet on a normal exit
  process.set_options { trap_links = true }
  local d = process.spawn_linked_monitored("child", nil, me, "ret", 0)
  print(t.event_text(t.event(), { [d] = "D" }))
  t.barrier()
  print(t.poll(process.events()))
  return 0
end
