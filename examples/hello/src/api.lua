return function()
  return true
end
