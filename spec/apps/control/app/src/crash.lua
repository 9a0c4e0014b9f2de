-- Fails shortly after it starts, every time, through a nested call (so the traceback has frames).
local function connect()
  error("boom: crashed on purpose")
end

return function()
  time.sleep(0.05)
  connect()
end
