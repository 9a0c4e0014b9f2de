-- A worker under the `workers` group: takes a job every second until it is cancelled.
return function(name)
  logger.info("worker ready", { name = name })
  local events, jobs = process.events(), time.ticker("1s")
  local done = 0
  while true do
    local r = channel.select { events:case_receive(), jobs:channel():case_receive() }
    if r.channel == events then
      if r.value.kind == process.event.CANCEL then return end
    else
      done = done + 1
      if done % 5 == 0 then logger.info("jobs done", { name = name, jobs = done }) end
    end
  end
end
