return function(attempt, crashes)
  if attempt <= crashes then error("crash #" .. attempt, 0) end
  return { attempt = attempt }
end
