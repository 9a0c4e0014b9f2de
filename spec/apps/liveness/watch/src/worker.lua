return function()
  logger.info("version", { v = 1 })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
