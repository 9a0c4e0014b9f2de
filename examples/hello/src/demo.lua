-- A tour of the runtime: spawn workers, exchange messages, wait with a timeout, monitor an exit.
local function worker(n)
  local msg = process.inbox():receive()
  local from, data = msg:from(), msg:data()
  process.send(from, "square", { n = n, value = data.x * data.x })
end

return {
  worker = worker,
  main = function(count)
    count = tonumber(count) or 3
    local started = time.now()
    for i = 1, count do
      local pid = process.spawn_monitored("app:demo_worker", nil, i)
      process.send(pid, "work", { x = i })
    end
    local inbox, events = process.inbox(), process.events()
    local results, exits = {}, 0
    while #results < count or exits < count do
      local r = channel.select { inbox:case_receive(), events:case_receive(), time.after("2s"):case_receive() }
      if r.channel == inbox then
        local data = r.value:data()
        results[#results + 1] = data.value
      elseif r.channel == events then
        exits = exits + 1
      else
        error("timed out waiting for workers")
      end
    end
    table.sort(results)
    print(("%d workers answered %s in %.1f ms"):format(count, table.concat(results, ", "),
      (time.now() - started) * 1000))
    logger.info("demo finished", { workers = count })
    return 0
  end,
}
