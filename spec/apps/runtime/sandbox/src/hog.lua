-- S8: allocates without end under limits.memory: 32MB. mode "catch" catches the error and
-- tries to go on.
return function(mode)
  local function grow()
    local t = {}
    while true do t[#t + 1] = ("x"):rep(1e6) .. #t end
  end
  if mode == "catch" then
    local ok, err = pcall(grow)
    return "survived: " .. tostring(err)
  end
  grow()
end
