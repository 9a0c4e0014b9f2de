-- Spawns `count` monitored workers, then waits for every EXIT and checks each result.
return function(count)
  local started = time.now()
  for i = 1, count do assert(process.spawn_monitored("worker", nil, i)) end
  local spawned = time.now()
  local events, sum = process.events(), 0
  for _ = 1, count do
    local e = events:receive()
    assert(e.kind == process.event.EXIT and not e.result.error, e.result and e.result.error)
    sum = sum + e.result.value.square
  end
  local done = time.now()
  logger.info("all workers done", {
    workers = count, sum = sum,
    spawn_ms = math.floor((spawned - started) * 1000), total_ms = math.floor((done - started) * 1000),
  })
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
