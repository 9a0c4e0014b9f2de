-- Nested: a supervisor restarts `caller`, which starts a supervisor of three sleepers and
-- fails on "go" (sent to the name "owner" it registers); its sleepers die with it.
return function()
  local sup = supervisor.start { name = "outer", restart = { initial_delay = "50ms", jitter = 0 } }
  assert(sup:start_child("caller"))
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
