-- Leaves sockets in every state for the host's shutdown to clean up: a unix listener with a
-- task in accept (timeout armed), a connection to itself with a task blocked writing past the
-- queue's bound (timeout armed) to a peer that never reads, and one blocked in read_line.
return function(path, parent)
  local u = assert(net.listen("unix://" .. path))
  coroutine.spawn(function() u:accept("30s") end)
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local c = assert(net.connect(l:addr()))
  local s = assert(l:accept("5s"))
  coroutine.spawn(function() c:write(string.rep("x", 16 * 1024 * 1024), "30s") end)
  coroutine.spawn(function() s:read_line() end)
  time.sleep("20ms")
  process.send(parent, "ready")
  process.inbox():receive()
end
