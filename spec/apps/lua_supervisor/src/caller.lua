-- Starts a supervisor with three sleepers, then fails on "go": its children die with it.
return function()
  assert(process.registry.register("owner"))
  local sup = supervisor.start { name = "inner" }
  for n = 1, 3 do assert(sup:start_child("sleeper", n)) end
  logger.info("caller ready")
  process.inbox():receive()
  error("caller gives up")
end
