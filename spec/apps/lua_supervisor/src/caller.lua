-- Starts a supervisor with three sleepers, then fails: its children die with it.
return function()
  local sup = supervisor.start { name = "doomed" }
  for n = 1, 3 do assert(sup:start_child("sleeper", n)) end
  logger.info("caller ready")
  process.inbox():receive()
  error("caller gives up")
end
