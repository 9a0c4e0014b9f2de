local function try(f)
  local ok, e = pcall(f)
  print(ok, ok or (tostring(e):gsub("^.-:%d+: ", "")))
end
return function()
  try(function() process.x = 1 end)
  try(function() process.spawn = nil end)
  try(function() process.event.EXIT = "x" end)
  try(function() process.event.NEW = "x" end)
  try(function() process.registry.lookup = print end)
  try(function() setmetatable(process, {}) end)
  print(getmetatable(process))
  -- nothing changed
  print(process.x, type(process.spawn), process.event.EXIT, type(process.registry.lookup))
  -- the proxy itself holds nothing
  print(rawget(process, "spawn"))
end
