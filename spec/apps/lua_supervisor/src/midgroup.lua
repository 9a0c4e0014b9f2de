-- OTP's one_for_all_other_child_fails_restart: under one_for_all, b crashes; while the group
-- waits to restart, other processes fill the service's process limit (4), so a restarts and
-- b's start is refused: that is b's failure again, a is stopped again; once room is made the
-- next restart brings both back.
return function()
  local sup = supervisor.start { name = "midgroup", strategy = "one_for_all", intensity = 10,
                                 restart = { initial_delay = "200ms", jitter = 0 } }
  for _, name in ipairs { "a", "b" } do assert(sup:start_child("member", name)) end
  local extra = { assert(process.spawn("sleeper", nil, 1)) } -- the tree: a, b and this one
  process.send(sup:which_children()[2].pid, "crash")
  local function b() return sup:which_children()[2] end
  repeat time.sleep("10ms") until b().state == "restarting"
  extra[2] = assert(process.spawn("sleeper", nil, 2))   -- the tree: 3 of 4, a fits, b does not
  extra[3] = assert(process.spawn("sleeper", nil, 3))
  repeat time.sleep("10ms") until b().restarts == 1 and b().state == "restarting"
  process.terminate(extra[2])
  process.terminate(extra[3])
  repeat time.sleep("10ms") until b().state == "running"
  time.sleep("50ms")
  local out = {}
  for _, c in ipairs(sup:which_children()) do out[#out + 1] = c.state .. ":" .. c.restarts end
  logger.info("midgroup done", { children = table.concat(out, " ") })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
