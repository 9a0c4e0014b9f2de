-- Logs NAME line 1..count, then has a child process log one line, waits for it, and logs
-- "NAME done"; serves until cancelled. The pause first lets the supervisor log "running".
return function(name, count)
  time.sleep("300ms")
  for i = 1, count do logger.info(name .. " line", { n = i }) end
  local pid = assert(process.spawn_monitored("child", nil, name))
  local events = process.events()
  repeat local e = events:receive() until e.kind == process.event.EXIT and e.from == pid
  logger.info(name .. " done")
  repeat local e = events:receive() until e.kind == process.event.CANCEL
end
