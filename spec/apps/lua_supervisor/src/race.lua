-- Six members under one_for_all all crash at once: the EXITs that come while the supervisor
-- stops the siblings of the first are taken as those siblings' ends; one group restart.
return function()
  local sup = supervisor.start { name = "race", strategy = "one_for_all", intensity = 10,
                                 restart = { initial_delay = "50ms", jitter = 0 } }
  for n = 1, 6 do assert(sup:start_child("member", "r" .. n)) end
  for _, c in ipairs(sup:which_children()) do process.send(c.pid, "crash") end
  local all
  repeat
    time.sleep("20ms")
    all = true
    for _, c in ipairs(sup:which_children()) do all = all and c.state == "running" and c.restarts == 1 end
  until all
  time.sleep("100ms")
  local out = {}
  for _, c in ipairs(sup:which_children()) do out[#out + 1] = c.state .. ":" .. c.restarts end
  logger.info("race done", { children = table.concat(out, " ") })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
