-- A slow receiver: registers its name, then takes one message every 200 ms until cancelled.
return function(name)
  assert(process.registry.register(name))
  process.ready()
  local inbox, events, taken = process.inbox(), process.events(), 0
  while true do
    local r = channel.select({ events:case_receive(), default = true })
    if r.channel == events and r.value.kind == process.event.CANCEL then
      logger.info("receiver cancelled", { name = name, taken = taken, reason = r.value.reason })
      return
    end
    local got = channel.select({ inbox:case_receive(), default = true })
    if got.channel == inbox then taken = taken + 1 end
    time.sleep("200ms")
  end
end
