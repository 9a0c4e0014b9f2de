-- Returns normally after 20ms.
return function()
  logger.info("returner up")
  time.sleep("20ms")
end
