-- Runs job `name` every `period` until the supervisor's CANCEL. A run that raises an error is
-- logged and the ticker goes on (one bad run does not stop the schedule).
local jobs = {
  heartbeat = function(n) return { beat = n } end,
  cleanup = function(n) return { removed = n % 3 } end,
  report = function(n) return { lines = n * 10 } end,
}

return function(name, period)
  local ticker = time.ticker(period)
  local events, ticks = process.events(), ticker:channel()
  local runs = 0
  logger.info("scheduled", { job = name, every = period })
  while true do
    local r = channel.select { ticks:case_receive(), events:case_receive() }
    if r.channel == events and r.value.kind == process.event.CANCEL then
      ticker:stop()
      logger.info("unscheduled", { job = name, runs = runs })
      return
    elseif r.channel == ticks then
      runs = runs + 1
      local ok, result = pcall(jobs[name], runs)
      if ok then logger.info("ran", { job = name, run = runs, result = result })
      else logger.error("run failed", { job = name, run = runs, error = result }) end
    end
  end
end
