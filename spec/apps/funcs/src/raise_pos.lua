return function()
  error("boom here")
end
