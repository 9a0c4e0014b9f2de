-- A member of a group: up until CANCEL ("member down"), or until a "crash" message.
return function(name)
  logger.info("member up", { name = name })
  local events, inbox = process.events(), process.inbox()
  while true do
    local r = channel.select { events:case_receive(), inbox:case_receive() }
    if r.channel == events and r.value.kind == process.event.CANCEL then
      logger.info("member down", { name = name })
      return
    elseif r.channel == inbox and r.value:topic() == "crash" then
      error("member " .. name .. " crashed")
    end
  end
end
