-- Crashes after a short while: the supervisor restarts it with a growing delay.
return function()
  logger.info("cache warming up")
  local r = channel.select { process.events():case_receive(), time.after(0.3 + math.random() * 0.4):case_receive() }
  if r.channel == process.events() and r.value.kind == process.event.CANCEL then return end
  error("cache lost its connection")
end
