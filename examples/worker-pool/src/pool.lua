-- Runs `jobs` jobs on `size` monitored workers. A worker's EXIT puts its job back in the queue
-- (at most 3 attempts) and starts a replacement. Stops its workers on CANCEL.
local MAX_ATTEMPTS = 3

return function(size, jobs)
  local me = process.pid()
  local queue, busy, idle, results, total = {}, {}, {}, 0, 0
  for n = 1, jobs do queue[#queue + 1] = { n = n, attempt = 1 } end

  local function start_worker()
    local pid = assert(process.spawn_monitored("worker", nil, me))
    idle[#idle + 1] = pid
  end
  local function dispatch()
    while #queue > 0 and #idle > 0 do
      local pid, job = table.remove(idle), table.remove(queue, 1)
      busy[pid] = job
      process.send(pid, "job", job)
    end
  end

  for _ = 1, size do start_worker() end
  dispatch()
  local inbox, events = process.inbox(), process.events()
  while true do
    local r = channel.select { inbox:case_receive(), events:case_receive() }
    if r.channel == inbox then
      local _, sum = r.value:data()
      local pid = r.value:from()
      total = total + sum
      busy[pid] = nil
      idle[#idle + 1] = pid
      results = results + 1
      if results == jobs then logger.info("all jobs done", { jobs = jobs, total = total }) end
    elseif r.value.kind == process.event.EXIT then
      local job = busy[r.value.from]
      busy[r.value.from] = nil
      logger.warn("worker failed", { job = job and job.n, error = r.value.result.error })
      if job and job.attempt < MAX_ATTEMPTS then
        job.attempt = job.attempt + 1
        queue[#queue + 1] = job
      end
      start_worker()
    elseif r.value.kind == process.event.CANCEL then
      for _, pid in ipairs(idle) do process.terminate(pid) end
      for pid in pairs(busy) do process.terminate(pid) end
      return
    end
    dispatch()
  end
end
