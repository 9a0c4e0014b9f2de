-- Becomes ready after `delay` seconds (scaled by the caller), then serves until cancelled.
return function(delay)
  time.sleep(delay)
  process.ready()
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
