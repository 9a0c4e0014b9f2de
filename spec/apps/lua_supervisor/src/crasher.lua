-- Fails 20ms after it starts.
return function()
  logger.info("crasher up")
  time.sleep("20ms")
  error("crash")
end
