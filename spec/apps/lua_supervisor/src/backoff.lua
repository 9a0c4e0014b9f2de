-- A crashing child restarted with backoff 100ms, 200ms, 400ms (no jitter), capped at 400ms.
return function()
  local sup = supervisor.start {
    name = "backoff", intensity = 100, period = "10s",
    restart = { initial_delay = "100ms", backoff_factor = 2, max_delay = "400ms", jitter = 0 },
  }
  assert(sup:start_child("crasher"))
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
