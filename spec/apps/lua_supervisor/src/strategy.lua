-- Three members a, b, c; b crashes once; the strategy decides who restarts.
return function(strategy)
  local sup = supervisor.start {
    name = strategy, strategy = strategy, restart = { initial_delay = "50ms", jitter = 0 },
  }
  for _, name in ipairs { "a", "b", "c" } do assert(sup:start_child("member", name)) end
  local before = sup:which_children()
  process.send(before[2].pid, "crash")
  local after
  repeat
    time.sleep("20ms")
    after = sup:which_children()
  until after[2].state == "running" and after[2].pid ~= before[2].pid
  time.sleep("100ms")
  after = sup:which_children()
  local out = {}
  for i, c in ipairs(after) do
    out[#out + 1] = ("%s:%s:%d:%s"):format(c.key, c.state, c.restarts, c.pid == before[i].pid and "same" or "new")
  end
  logger.info("strategy done", { children = table.concat(out, " ") })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
