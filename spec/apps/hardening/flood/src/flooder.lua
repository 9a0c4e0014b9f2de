-- Floods each receiver (by name) with 1 KB messages for 1.5 s, backing off 5 ms whenever the
-- mailbox is full; reports what it saw, then cancels the receiver.
local blob = ("x"):rep(1024)

local function flood(name)
  local sent, full, first_full, other = 0, 0, nil, nil
  local t_end = time.now() + 1.5
  while time.now() < t_end do
    local ok, err = process.send(name, "blob", blob)
    if ok then
      sent = sent + 1
    elseif err == "mailbox full" then
      full = full + 1
      first_full = first_full or sent
      time.sleep("5ms")
    else
      other = err
      break
    end
  end
  logger.info("flood", { name = name, sent = sent, full = full, first_full = first_full, other = other })
  local pid = process.registry.lookup(name)
  logger.info("cancel", { name = name, ok = process.cancel(pid, "enough") == true })
end

return function(...)
  for _, name in ipairs({ ... }) do coroutine.spawn(function() flood(name) end) end
  time.sleep("3s")
end
