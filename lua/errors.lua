-- The `errors` module (docs/lua-api.md): structured error values a process raises or returns.
-- An error value is a plain table {message = string, kind = string, retryable = boolean
-- [, details = any]}, so the host reads it with rawget and a copy sent in a message keeps its
-- meaning; a shared, protected metatable only adds __tostring. Defaults: kind "error",
-- retryable true (only an explicit retryable = false makes a failure final).
--   errors.new{message =, kind =, retryable =, details =} | errors.new(message) -> err
--   errors.is(v [, kind]) -> boolean: v is an error value (of that kind); works on copies too
-- tostring(err) is "kind: message", or the message alone when kind is "error".
-- The host opens it with the base functions it needs (host/lua_api/api_errors.c).
-- mt: the state's one error metatable (the host keeps it, so opening the module twice in a
-- state shares it).
local mt, type, next, rawget, rawset, setmetatable, tostring, select, error = ...

mt.__metatable = false -- getmetatable(err) is false; setmetatable refuses

local function raw_string(t, key)
  local v = rawget(t, key)
  if type(v) == 'string' then return v end
  return nil
end

mt.__tostring = function(e)
  local msg = raw_string(e, 'message') or '(no message)'
  local kind = raw_string(e, 'kind')
  if not kind or kind == 'error' then return msg end
  return kind .. ': ' .. msg
end

-- Raises as luaL_argerror would for fn, at `level` (1: the caller of bad), so the position is
-- that of the code that called fn.
local function bad(level, fn, n, why)
  error("bad argument #" .. n .. " to '" .. fn .. "' (" .. why .. ")", level + 1)
end

local checks = {
  message = function(v) local t = type(v) return t == 'string' or t == 'number', "field 'message' must be a string" end,
  kind = function(v) return type(v) == 'string', "field 'kind' must be a string" end,
  retryable = function(v) return type(v) == 'boolean', "field 'retryable' must be a boolean" end,
  details = function() return true end,
}

local function read_spec(spec, err)
  local k, v = next(spec)
  while k ~= nil do
    if type(k) ~= 'string' then bad(3, 'new', 1, 'keys must be message, kind, retryable or details') end
    local check = checks[k]
    if not check then
      bad(3, 'new', 1, "unknown field '" .. k .. "' (expected message, kind, retryable or details)")
    end
    local ok, why = check(v)
    if not ok then bad(3, 'new', 1, why) end
    rawset(err, k, k == 'message' and tostring(v) or v)
    k, v = next(spec, k)
  end
  if rawget(err, 'message') == nil then bad(3, 'new', 1, "field 'message' must be a string") end
end

local function new(...)
  local spec = ...
  local t = select('#', ...) == 0 and 'no value' or type(spec)
  if t ~= 'table' and t ~= 'string' and t ~= 'number' then
    bad(2, 'new', 1, 'table or string expected, got ' .. t)
  end
  local err = {kind = 'error', retryable = true}
  if t == 'table' then read_spec(spec, err) else err.message = tostring(spec) end
  return setmetatable(err, mt)
end

local function is(v, ...)
  if type(v) ~= 'table' then return false end
  local kind = raw_string(v, 'kind')
  if not kind or not raw_string(v, 'message') then return false end
  local want = ...
  if want == nil then return true end
  local wt = type(want)
  if wt ~= 'string' and wt ~= 'number' then bad(2, 'is', 2, 'string expected, got ' .. wt) end
  return kind == tostring(want)
end

return {new = new, is = is}
