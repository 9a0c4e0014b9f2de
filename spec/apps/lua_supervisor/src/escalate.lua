-- Past its intensity (2 restarts in 10s) the supervisor stops its children and fails.
return function(trap)
  if trap then process.set_options { trap_links = true } end
  local sup = supervisor.start {
    name = "esc", intensity = 2, period = "10s", restart = { initial_delay = "10ms", jitter = 0 },
  }
  assert(sup:start_child("sleeper", 1))
  assert(sup:start_child("crasher"))
  local events = process.events()
  while true do
    local e = events:receive()
    if e.kind == process.event.LINK_DOWN then
      local n, err = sup:count_children()
      logger.info("link down", { from = e.from, supervisor = e.supervisor, error = e.result.error,
                                 me = process.pid(), after = tostring(n) .. " " .. tostring(err) })
    elseif e.kind == process.event.CANCEL then
      return
    end
  end
end
