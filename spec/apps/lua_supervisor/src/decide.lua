-- decide: "stop" for kind config, "escalate" for kind fatal, "restart" otherwise.
return function()
  local seen = {}
  local sup = supervisor.start {
    name = "decider", restart = { initial_delay = "10ms", jitter = 0 },
    decide = function(err, key)
      seen[#seen + 1] = key .. "=" .. err.kind
      if err.kind == "config" then return "stop" end
      if err.kind == "fatal" then return "escalate" end
      return "restart"
    end,
  }
  local k = assert(sup:start_child("kinded", "config"))
  time.sleep("200ms")
  local n = sup:count_children()
  local c = sup:which_children()[1]
  logger.info("after stop", { seen = table.concat(seen, ","), failed = n.failed, key = c.key, state = c.state })
  assert(sup:start_child("kinded", "fatal"))
  time.sleep("2s")
  logger.info("not reached")
end
