-- Serves until cancelled, then takes 2 seconds to stop.
return function()
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
  time.sleep(2)
end
