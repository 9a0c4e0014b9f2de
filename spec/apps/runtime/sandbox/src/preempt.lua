-- S5-S7, scenario 48: a spinner on the one-worker host `sb:single`, with an echo process and
-- a ticking process on the same worker. While it spins, 20 ping-pongs with the echo process
-- complete and 5 ticks arrive; then process.terminate ends it and the EXIT event's delay is
-- measured. others: "full" (the default: 20 pongs and 5 ticks within 5 s), "progress" (one
-- pong within 3 s), "no" (spinners that cannot be preempted, in a C call: only the kill is
-- checked). Prints one fact per line.
local function wait_topic(inbox, topic, deadline)
  while true do
    local r = channel.select { inbox:case_receive(), deadline:case_receive() }
    if r.channel == deadline then
      deadline:close() -- its one value is gone: later waits end at once
      return nil
    end
    if r.value:topic() == topic then return r.value end
  end
end

return function(mode, others)
  others = others or "full"
  local me = process.pid()
  local inbox, events = process.inbox(), process.events()
  local spinner = assert(process.spawn_monitored("sb:spin", "sb:single", mode, me))
  local m = wait_topic(inbox, "spinning", time.after("5s"))
  print("spinning", m and m:data())
  if others ~= "no" then
    local echo = assert(process.spawn("sb:echo", "sb:single"))
    local ticking = assert(process.spawn("sb:ticking", "sb:single", me))
    local deadline = time.after(others == "full" and "5s" or "3s")
    local n = others == "full" and 20 or 1
    local pongs = 0
    for i = 1, n do
      process.send(echo, "ping", i)
      local pong = wait_topic(inbox, "pong", deadline)
      if not pong or pong:data() ~= i then break end
      pongs = pongs + 1
    end
    if others == "full" then
      local ticks = 0
      for _ = 1, 5 do
        if not wait_topic(inbox, "tick", deadline) then break end
        ticks = ticks + 1
      end
      print("pongs", pongs)
      print("ticks", ticks)
    else
      print("progress", pongs >= 1)
    end
    process.terminate(echo)
    process.terminate(ticking)
  end
  -- still spinning: no EXIT yet
  local r = channel.select { events:case_receive(), default = true }
  print("alive", r.default == true)
  local t0 = time.now()
  print("terminate", process.terminate(spinner))
  local deadline = time.after("5s")
  r = channel.select { events:case_receive(), deadline:case_receive() }
  local dt = time.now() - t0
  if r.channel == deadline then
    print("exit", "none within 5 s")
    return 1
  end
  print("exit", r.value.kind, r.value.from == spinner, r.value.result.error)
  print("killed within 1s", dt < 1)
  if dt >= 1 then print("kill took", dt) end
  return 0
end
