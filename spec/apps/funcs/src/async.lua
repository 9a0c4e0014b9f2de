-- funcs.async: a channel that receives {values, error} once.
local t = require("t")

return function()
  local a = funcs.async("multi", "x")
  local b = funcs.async("fail_ret", "y")
  local c = funcs.async("raise")
  local d = funcs.async("fail_obj")
  for _, ch in ipairs({ a, b, c, d }) do print(t.show(t.recv(ch))) end
  print(t.show(t.poll(a)))                            -- once only
  print(funcs.async("nope"))
  print(funcs.async("echo", print))
  -- a caller may wait on several at once
  local e, f = funcs.async("add", 1, 1), funcs.async("add", 2, 2)
  local r = channel.select { e:case_receive(), f:case_receive() }
  local other = r.channel == e and f or e
  print(r.value.values[1] + t.recv(other).values[1])
  print(t.poll(process.events()))
end
