-- Spinners that never block. Tells the parent it is about to spin, then spins forever.
local spinners = {}

spinners.plain = function() -- S5
  while true do end
end

spinners.pcall = function() -- S6
  while true do pcall(function() while true do end end) end
end

spinners.coroutine = function() -- S7
  while true do coroutine.resume(coroutine.create(function() while true do end end)) end
end

spinners.wrap = function() -- S7 through coroutine.wrap and a nested coroutine
  coroutine.wrap(function()
    coroutine.wrap(function() while true do end end)()
  end)()
end

spinners.task = function() -- a spinning task next to a blocked main
  coroutine.spawn(function() while true do end end)
  process.inbox():receive()
end

spinners.catch = function() -- catches everything, even the kill, and goes on
  while true do
    local ok = pcall(function() while true do end end)
    while not ok do ok = pcall(function() end) end
  end
end

spinners.pattern = function() -- S14 in a loop: each match runs out of budget
  local s, p = ("a"):rep(30), ("a?"):rep(30) .. ("a"):rep(30)
  while true do pcall(string.find, s, p) end
end

-- In a C call the hook cannot yield: no preemption, but a kill still lands.
spinners.sort = function()
  table.sort({ 3, 2, 1 }, function() while true do end end)
end

spinners.gsub = function()
  string.gsub("abc", "%w", function() while true do end end)
end

spinners.xpcall_handler = function()
  xpcall(function() error("x") end, function() while true do end end)
end

return function(mode, parent)
  local f = spinners[mode]
  if not f then error("no spinner " .. tostring(mode)) end
  process.send(parent, "spinning", mode)
  return f()
end
