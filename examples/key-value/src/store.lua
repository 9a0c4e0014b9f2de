-- A line protocol: "SET key value", "GET key", "DEL key", "KEYS". One task per connection;
-- the table is this process's, so no locks: tasks of one process never run at the same time.
local data = {}

local commands = {
  SET = function(k, v) data[k] = v return "OK" end,
  GET = function(k) return data[k] and ("VALUE " .. data[k]) or "NONE" end,
  DEL = function(k) local had = data[k] ~= nil data[k] = nil return had and "OK" or "NONE" end,
  KEYS = function()
    local keys = {}
    for k in pairs(data) do keys[#keys + 1] = k end
    table.sort(keys)
    return "KEYS " .. table.concat(keys, " ")
  end,
}

local function serve(conn)
  while true do
    local line = conn:read_line("60s")
    if not line then break end
    local cmd, key, value = line:match("^(%u+)%s*(%S*)%s*(.-)%s*$")
    local f = commands[cmd or ""]
    conn:write((f and f(key, value) or "ERROR unknown command") .. "\n")
  end
  conn:close()
end

return function(addr)
  local listener = assert(net.listen(addr))
  logger.info("listening", { addr = listener:addr() })
  process.ready()
  coroutine.spawn(function()
    while true do
      local conn = listener:accept()
      if not conn then return end
      coroutine.spawn(serve, conn)
    end
  end)
  -- the main task waits for the supervisor's CANCEL; returning closes the listener
  repeat local e = process.events():receive() until e.kind == process.event.CANCEL
end
