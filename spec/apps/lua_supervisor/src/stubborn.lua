-- Ignores its CANCEL (logs it); only a kill ends it.
return function()
  logger.info("stubborn up")
  local events = process.events()
  while true do
    if events:receive().kind == process.event.CANCEL then logger.info("stubborn ignores cancel") end
  end
end
