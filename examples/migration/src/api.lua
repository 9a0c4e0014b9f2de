-- Stands in for the service that needs the migrated schema: it only logs that it started.
return function()
  logger.info("serving on the migrated schema")
  repeat local e = process.events():receive() until e.kind == process.event.CANCEL
end
