-- terminate_child, restart_child, which_children, count_children, delete_child, stop, and the
-- errors, each logged as one "check" line: {what, ok, err}.
local function check(what, ok, err)
  logger.info("check", { what = what, ok = type(ok) == "table" and "table" or ok, err = err })
  return ok
end

return function()
  assert(process.registry.register("manage"))
  local sup = supervisor.start { name = "manager", stop_timeout = "300ms" }
  local k1 = check("start 1", sup:start_child("sleeper", 1))
  local k2 = check("start 2", sup:start_child("sleeper", 2))
  check("start missing", sup:start_child("nope"))
  check("start denied", sup:start_child("secret"))
  check("start bad args", sup:start_child("sleeper", function() end))
  logger.info("ready to terminate")
  process.inbox():receive() -- the spec counts processes first
  check("terminate", sup:terminate_child(k1))
  local n = sup:count_children()
  logger.info("counts", { total = n.total, running = n.running, stopped = n.stopped })
  check("terminate unknown", sup:terminate_child("nope#9"))
  local old = sup:which_children()[1].pid
  check("restart", sup:restart_child(k1))
  local w = sup:which_children()
  logger.info("which", { key = w[1].key, state = w[1].state, restarts = w[1].restarts,
                         fresh = w[1].pid ~= old and w[1].pid ~= nil, second = w[2].key })
  check("delete", sup:delete_child(k2))
  local k3 = check("start stubborn", sup:start_child("stubborn"))
  time.sleep("20ms")
  check("terminate stubborn", sup:terminate_child(k3))
  check("delete stubborn", sup:delete_child(k3))
  check("count after delete", sup:count_children().total)
  logger.info("ready to stop")
  process.inbox():receive() -- the spec counts processes again
  check("stop", sup:stop())
  check("after stop", sup:start_child("sleeper", 3))
  check("stop again", sup:stop())
  logger.info("stopped all")
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
