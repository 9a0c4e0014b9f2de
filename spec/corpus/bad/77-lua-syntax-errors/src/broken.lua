return function()
  local x = = 1
end
