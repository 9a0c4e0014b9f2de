-- For the kill case: listens, sends its address to parent, accepts 5 connections and makes
-- 3 of its own to itself (accepted too), tells parent how many sockets it holds, then blocks
-- reading them all until it is killed.
return function(parent)
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  process.send(parent, "addr", l:addr())
  local conns = {}
  for i = 1, 3 do conns[#conns + 1] = assert(net.connect(l:addr())) end
  for i = 1, 8 do conns[#conns + 1] = assert(l:accept()) end
  process.send(parent, "held", tostring(#conns + 1))
  for _, c in ipairs(conns) do coroutine.spawn(function() c:read(1) end) end
  process.inbox():receive()
end
