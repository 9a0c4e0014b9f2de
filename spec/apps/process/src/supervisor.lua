local t = require("t")
-- Scenario 41: a supervisor written in Lua keeps a crashing worker alive. The worker crashes
-- `crashes` times (it is told its attempt number), then returns; each crash is answered with
-- a respawn after a short sleep.
return function(crashes)
  crashes = tonumber(crashes) or 5
  local me = process.pid()
  local attempt, restarts = 1, 0
  local pids = {}
  local t0 = time.now()
  local pid = assert(process.spawn_monitored("worker", nil, attempt, crashes))
  while true do
    pids[pid] = true
    local ev = t.event()
    if not ev then print("timeout") return 1 end
    if ev.kind == process.event.EXIT and ev.from == pid then
      if ev.result.error then
        print("crash " .. attempt .. ": " .. t.line(ev.result.error))
        time.sleep("10ms")
        attempt = attempt + 1
        restarts = restarts + 1
        pid = assert(process.spawn_monitored("worker", nil, attempt, crashes))
      else
        print("done: " .. t.show(ev.result.value))
        break
      end
    end
  end
  local distinct = 0
  for _ in pairs(pids) do distinct = distinct + 1 end
  print("restarts " .. restarts, "pids " .. distinct, time.now() - t0 >= crashes * 0.01)
end
