-- Reads its settings from the registry, then serves until cancelled.
return function()
  local cfg = registry.get("app:settings")
  logger.info("api ready", { greeting = cfg.data.greeting, database = cfg.data.database })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
