-- The /api endpoints. Each request is a fresh process running as the user of its token (the
-- router's `auth`), so security.can below decides for that user, with that user's scope.
local M = {}

local ORDERS = { { id = 1, item = "tea", qty = 2 }, { id = 2, item = "cups", qty = 6 } }

local function who() return security.actor():id() end

-- GET /api/orders: any logged-in user (customers and admins may read)
function M.list(req)
  if not security.can("read", "orders") then return { status = 403, body = { error = "forbidden" } } end
  return { body = { orders = ORDERS, user = who() } }
end

-- DELETE /api/orders/{id}: admins only. A demo: nothing is stored, the answer says what would go.
function M.delete(req)
  if not security.can("delete", "orders") then
    return { status = 403, body = { error = who() .. " may not delete orders" } }
  end
  return { body = { deleted = tonumber(req.params.id), by = who() } }
end

-- POST /api/logout: the token of this request stops working at once.
function M.logout(req)
  local token = req.headers.authorization:match("^%S+%s+(%S+)")
  local revoked = assert(security.token_store("sessions")):revoke(token)
  return { body = { logged_out = who(), revoked = revoked } }
end

return M
