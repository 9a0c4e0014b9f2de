-- Answers every "ping" with a "pong" carrying the same payload, until the supervisor's CANCEL.
return function()
  assert(process.registry.register("pong"))
  process.ready() -- dependents start now: the name is registered before anyone looks it up
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == events then
      if r.value.kind == process.event.CANCEL then return end
    else
      process.send(r.value:from(), "pong", r.value:data())
    end
  end
end
