-- waves(WAVES, PER, WARMUP, HOLD, AT_END): WARMUP waves first (the allocator and tables grow
-- to their working size), then prints "baseline" and holds still for HOLD so the spec can
-- sample the host, then WAVES waves, then prints "done" and blocks until killed (AT_END
-- "exit": returns 0 instead). A wave spawns PER monitored processes that block on their
-- inbox, terminates them all and waits for every EXIT event.
local function wave(per, events)
  local pids, alive = {}, {}
  for i = 1, per do
    local pid, err = process.spawn_monitored("soak:idle")
    if not pid then error("spawn " .. i .. ": " .. tostring(err)) end
    pids[i] = pid
    alive[pid] = true
  end
  for i = 1, per do
    local ok, err = process.terminate(pids[i])
    if not ok then error("terminate " .. pids[i] .. ": " .. tostring(err)) end
  end
  local deadline = time.after("20s")
  local killed = 0
  for _ = 1, per do
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then error("wave: only " .. killed .. " of " .. per .. " EXIT events in 20 s") end
    local ev = r.value
    if ev.kind ~= process.event.EXIT or not alive[ev.from] then error("unexpected event " .. tostring(ev.kind)) end
    alive[ev.from] = nil
    if ev.result.error == "killed" then killed = killed + 1 end
  end
  return killed
end

return function(waves, per, warmup, hold, at_end)
  waves, per, warmup = tonumber(waves) or 100, tonumber(per) or 1000, tonumber(warmup) or 3
  local events = process.events()
  for _ = 1, warmup do wave(per, events) end
  print("baseline")
  time.sleep(hold or "500ms")
  print("start")
  local t0, killed = time.now(), 0
  for _ = 1, waves do killed = killed + wave(per, events) end
  print(string.format("done %d killed %d in %.1f s", waves * per, killed, time.now() - t0))
  if at_end == "exit" then return 0 end
  process.inbox():receive() -- hold until the spec has read /proc and kills the host
end
