-- Runs under a policy that allows funcs.call on add, nested and service_of only.
local t = require("t")
return function()
  print("guarded add " .. t.shown(funcs.call("add", 1, 2)))
  print("guarded multi " .. t.shown(funcs.call("multi")))
  print("guarded unknown " .. t.shown(funcs.call("nope")))
  print("guarded async " .. t.shown(funcs.async("multi")))
  print("guarded nested " .. t.shown(funcs.call("nested")))      -- the function inherits the guard
  print("guarded actor " .. t.shown(funcs.call("service_of")))   -- and the actor
  print("guarded done")
end
