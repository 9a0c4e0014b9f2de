-- Serves until cancelled; says hello through the logger first.
return function()
  logger.info("serving", { answer = 42 })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
