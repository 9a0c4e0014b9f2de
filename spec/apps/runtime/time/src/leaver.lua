-- Arms every kind of timer, then ends (returns, fails or blocks until killed, by mode) with
-- all of them pending.
return function(mode, parent)
  local after = time.after("20ms")
  local ticker = time.ticker("1ms")
  coroutine.spawn(function() time.sleep("15ms") end)
  coroutine.spawn(function()
    local r = channel.select { ticker:channel():case_receive(), after:case_receive() }
    return r
  end)
  if parent then process.send(parent, "armed") end
  if mode == "fail" then error("leaving with timers") end
  if mode == "block" then process.inbox():receive() end
  return true
end
