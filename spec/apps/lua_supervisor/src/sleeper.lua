-- Runs until CANCEL.
return function(n)
  logger.info("sleeper up", { n = n })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
  logger.info("sleeper cancelled", { n = n })
end
