-- Reads its settings from the registry, then serves until cancelled.
return function()
  -- registry.get returns {id, name, namespace, kind, meta, data}; data holds the entry's own
  -- fields, here the one named `data`
  local settings = registry.get("app:settings").data.data
  logger.info("api ready", { greeting = settings.greeting, database = settings.database })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
