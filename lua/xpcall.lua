-- The sandbox's xpcall (host/vm/vm_sandbox.c installs it in every process). The raw xpcall
-- gets guard(h) instead of the handler h: once the process is being killed, the guard returns
-- the error untouched without running h, which could otherwise loop with every hook off.
-- Compiled stripped: the error is raised at the caller's level, so no position is lost.
local xpcall, guard, type, error = ...

return function(f, h, ...)
  if type(h) ~= 'function' then
    error("bad argument #2 to 'xpcall' (function expected, got " .. type(h) .. ')', 2)
  end
  return xpcall(f, guard(h), ...)
end
