-- errors.new{retryable = false} raised or returned is a failure: exit 1, the message printed.
return function(how)
  local err = errors.new { message = "config is broken", kind = "config", retryable = false }
  print("start " .. how)
  if how == "raise" then error(err) end
  if how == "return" then return nil, err end
  if how == "plain" then return nil, errors.new("plain failure") end
  if how == "string" then return nil, "err" end
  if how == "number" then return nil, 42 end
  if how == "raise_string" then error("raised text") end
  if how == "raise_table" then error({ code = 7 }) end
  if how == "chunk" then return nil end
end
