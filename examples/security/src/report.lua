-- Spawned by a service: runs with the context it inherited.
return function(requested_by)
  local e, err = registry.get("demo:credentials")
  logger.info("report", { requested_by = requested_by, actor = security.actor():id(),
                          credentials = e and "read" or err })
end
