-- Spawns a caller that starts a supervisor of three sleepers and then fails (on a message).
return function()
  assert(process.registry.register("owner"))
  local pid = assert(process.spawn("caller"))
  logger.info("owner spawned", { caller = pid })
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == inbox then process.send(pid, "go") else
      if r.value.kind == process.event.CANCEL then return end
    end
  end
end
