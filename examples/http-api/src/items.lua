-- The item endpoints: each runs in a fresh process per request, as the v1 router's identity.
local store = require("store")

local M = {}

function M.create(req)
  local fields, err = req:json()
  if not fields then return { status = 400, body = { error = "invalid JSON: " .. tostring(err) } } end
  local item, why = store.call("create", fields)
  if not item then return { status = 422, body = { error = why } } end
  return { status = 201, headers = { location = "/v1/items/" .. item.id }, body = item }
end

function M.list(req)
  local items, err = store.call("list")
  if not items then return nil, err end -- a 500; the error is logged
  return { body = { items = items, count = #items } }
end

function M.get(req)
  local item, err = store.call("get", req.params.id)
  if err then return nil, err end
  if not item then return { status = 404, body = { error = "no item " .. req.params.id } } end
  return { body = item }
end

return M
