-- For the log specs: one line at each level, then returns.
return function()
  logger.debug("debug line")
  logger.info("info line", { k = "v" })
  logger.warn("warn line")
  logger.error("error line")
  return 0
end
