-- The backup service: one backup at once, then one per interval, until the host stops it.
local backup = require("backup")

return function()
  local settings = registry.get("app:settings").data
  local tick = time.ticker(settings.interval):channel()
  local events = process.events()
  while true do
    local done, err = backup.run(settings.keep)
    if done then
      logger.info("backed up", done)
    else
      logger.error("backup failed", { error = err })
    end
    local r = channel.select { events:case_receive(), tick:case_receive() }
    if r.channel == events and r.value.kind == process.event.CANCEL then return end
  end
end
