-- A long-running service: serves until it is asked to stop (a CANCEL event), then returns.
return function()
  logger.info("database ready")
  local events = process.events()
  while true do
    local e = events:receive()
    if e.kind == process.event.CANCEL then
      logger.info("database stopping")
      return
    end
  end
end
