-- Sends the parent a "tick" with the tick count every 10 ms.
return function(parent)
  local t = time.ticker("10ms")
  local n = 0
  while true do
    t:channel():receive()
    n = n + 1
    process.send(parent, "tick", n)
  end
end
