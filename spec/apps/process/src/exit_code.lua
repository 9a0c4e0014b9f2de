-- Exit codes of run -x: a returned number is the code; any other success is 0.
return function(what, ...)
  if what == "7" then return 7 end
  if what == "0" then return 0 end
  if what == "true" then return true end
  if what == "false" then return false end
  if what == "string" then return "5" end
  if what == "table" then return { 1 } end
  if what == "nothing" then return end
  if what == "nil_nil" then return nil, nil end
  if what == "args" then print(what, select("#", ...)) return 3 end
end
