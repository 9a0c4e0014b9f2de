-- restart.policy: always restarts a child that returns; on_failure leaves it stopped; never
-- leaves a crashed child failed.
return function()
  local function sup(policy)
    return supervisor.start { name = policy, intensity = 100, restart = { policy = policy, initial_delay = "10ms", jitter = 0 } }
  end
  local always, on_failure, never = sup("always"), sup("on_failure"), sup("never")
  assert(always:start_child("returner"))
  assert(on_failure:start_child("returner"))
  assert(never:start_child("crasher"))
  time.sleep("300ms")
  local function show(s)
    local c = s:which_children()[1]
    return c.state .. ":" .. (c.restarts >= 2 and "restarted" or tostring(c.restarts))
  end
  local bad = {}
  for _, o in ipairs { { strategy = "one_for_none" }, { intensity = -1 }, { period = "soon" }, { colour = 1 },
                       { restart = { policy = "sometimes" } }, { decide = "restart" } } do
    local ok, err = pcall(supervisor.start, o)
    bad[#bad + 1] = tostring(ok) .. " " .. tostring(err)
  end
  logger.info("policies", { always = show(always), on_failure = show(on_failure), never = show(never), bad = bad })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
