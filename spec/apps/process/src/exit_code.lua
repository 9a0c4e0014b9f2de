-- Exit codes of run -x: a non-zero number fails with that code (1 unless a whole number from
-- 1 to 255); `false, err` fails with 1; any other return is a success, 0.
return function(what, ...)
  if what == "7" then return 7 end
  if what == "300" then return 300 end
  if what == "-2" then return -2 end
  if what == "1.5" then return 1.5 end
  if what == "false_err" then return false, "why" end
  if what == "0" then return 0 end
  if what == "true" then return true end
  if what == "false" then return false end
  if what == "string" then return "5" end
  if what == "table" then return { 1 } end
  if what == "nothing" then return end
  if what == "nil_nil" then return nil, nil end
  if what == "args" then print(what, select("#", ...)) return 3 end
end
