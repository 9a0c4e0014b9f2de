-- Tries the same tasks under whatever context the service gives, logging each outcome (a
-- denial as a warning).
local function log(what, ok, err, fields)
  fields = fields or {}
  fields.allowed = ok and true or false
  fields.error = err
  if ok then logger.info(what, fields) else logger.warn(what, fields) end
end

return function()
  local me = security.actor()
  logger.info("starting tasks", { actor = me:id(), role = me:meta().role })

  log("read demo:settings", registry.get("demo:settings"))
  log("read demo:credentials", registry.get("demo:credentials"))
  log("spawn demo:report", process.spawn("report", nil, me:id()))
  log("spawn demo:cleanup", process.spawn("cleanup"))

  for _, doc in ipairs({ { "doc:1", "user:bob" }, { "doc:2", "user:alice" } }) do
    log("doc.write " .. doc[1], security.can("doc.write", doc[1], { owner = doc[2] }), nil, { owner = doc[2] })
  end
  logger.info("data.delete doc:1", { decision = security.check("data.delete", "doc:1") })
  logger.info("tasks done")
end
