-- Logs `lines` lines with a payload of `size` bytes, then "flood done"; serves until cancelled.
return function(lines, size)
  local payload = string.rep("x", size)
  for i = 1, lines do logger.info("flood line", { n = i, payload = payload }) end
  logger.info("flood done", { lines = lines })
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
