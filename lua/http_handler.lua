-- The main of a handler process: a fresh process of an http.endpoint's function.lua per
-- request (docs/lua-api.md "HTTP server"). The host passes the endpoint's function, the
-- request table (nil when it was answered or its connection closed before this ran) and
-- `respond`, a host function that answers this request only. A raised error ends the process:
-- the host then answers 500 and logs the error with its traceback.
local type, tostring, setmetatable = type, tostring, setmetatable

local request_mt = {
  __index = {
    -- req:json(): the body decoded, or nil, err
    json = function(self) return json.decode(self.body) end,
  },
}

-- What the handler returned, as respond's arguments; nil, why when it is no response.
local function response(res, err)
  if res == nil then return nil, tostring(err) end
  if type(res) ~= "table" then
    return nil, "the handler returned a " .. type(res) .. ", expected {status, headers, body}"
  end
  local status, body, is_json = res.status or 200, res.body, false
  if type(status) ~= "number" then return nil, "status: expected a number, got " .. type(status) end
  if type(body) == "table" then
    local text, jerr = json.encode(body)
    if not text then return nil, "body: " .. tostring(jerr) end
    body, is_json = text, true
  elseif body ~= nil and type(body) ~= "string" then
    body = tostring(body)
  end
  return status, res.headers, body or "", is_json
end

return function(handler, req, respond)
  return function()
    if req == nil then return end
    setmetatable(req, request_mt)
    local status, headers, body, is_json = response(handler(req))
    if status == nil then
      logger.error("handler failed", { error = headers })
      respond(500, nil, "internal server error\n", false)
      return
    end
    respond(status, headers, body, is_json)
  end
end
