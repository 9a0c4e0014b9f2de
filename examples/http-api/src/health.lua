-- /health: 200 when the store answers, 503 when it does not.
local store = require("store")

return function(req)
  local pong = store.call("ping")
  if pong ~= "pong" then return { status = 503, body = { status = "unavailable" } } end
  return { body = { status = "ok" } }
end
