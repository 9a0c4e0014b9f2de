-- Each case prints what it observed; the spec compares the lines.
local cases = {}

local function show(v)
  if type(v) ~= "table" then return tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local val = v[k]
    if val == nil then val = v[tonumber(k)] end
    parts[#parts + 1] = k .. "=" .. show(val)
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

function cases.logger()
  logger.debug("debug line", { n = 0 })
  logger.info("info line", { user = "ann", count = 3, ok = true, list = { 1, 2 } })
  logger:warn("warn line") -- method call form
  logger.error("error line", { pid = "spoofed", ["with space"] = "a b" })
  print("bad msg", pcall(logger.info, {}))
  print("bad fields", pcall(logger.info, "x", "y"))
  print("pid", process.pid())
end

function cases.errors()
  local e = errors.new { message = "disk full", kind = "io", retryable = false, details = { path = "/x" } }
  print("fields", e.message, e.kind, e.retryable, e.details.path)
  print("tostring", tostring(e))
  local plain = errors.new("plain")
  print("defaults", plain.message, plain.kind, plain.retryable, tostring(plain))
  print("is", errors.is(e), errors.is(e, "io"), errors.is(e, "net"), errors.is("text"), errors.is({}))
  print("metatable", getmetatable(e))
  print("setmetatable", pcall(setmetatable, e, {}))
  -- raised and caught: the same table comes back
  local ok, caught = pcall(error, e)
  print("raised", ok, rawequal(caught, e), caught.kind)
  print("no message", pcall(errors.new, { kind = "x" }))
  print("bad kind", pcall(errors.new, { message = "m", kind = 1 }))
  print("unknown field", pcall(errors.new, { message = "m", colour = "red" }))
  print("bad arg", pcall(errors.new, true))
  -- a copy sent in a message is still an error value
  process.send(process.pid(), "err", e)
  local copy = process.inbox():receive():data()
  print("copy", errors.is(copy, "io"), copy.message, copy.retryable)
end

function cases.fail_with_error()
  return nil, errors.new { message = "no route", kind = "net" }
end

function cases.raise_error()
  error(errors.new { message = "exploded", kind = "boom" })
end

function cases.json()
  local s = json.encode { name = "x", list = { 1, 2, 3 }, nested = { ok = true } }
  local back = json.decode(s)
  print("roundtrip", show(back))
  print("scalars", json.encode(1.5), json.encode("a\"b"), json.encode(true), json.encode({}))
  print("list", json.encode { 1, "two", false })
  print("null", json.encode { a = json.null }, show(json.decode('{"a":null,"b":[1,null,3]}')))
  print("decode null", json.decode("null"))
  print("decode error", json.decode("{bad json"))
  print("decode type", json.decode(42))
  print("encode function", json.encode { f = print })
  local deep = {}
  local t = deep
  for _ = 1, 200 do t.x = {} t = t.x end
  local v, err = json.encode(deep)
  print("encode deep", v, err ~= nil)
  local cyc = {}
  cyc.self = cyc
  v, err = json.encode(cyc)
  print("encode cycle", v, err ~= nil)
  print("decode deep", json.decode(("["):rep(1000) .. ("]"):rep(1000)) == nil)
  print("unicode", json.decode('"\\u00e9"') == "\195\169")
end

function cases.registry()
  local e = registry.get("mods:settings")
  print("get", e.id, e.name, e.namespace, e.kind)
  print("meta", show(e.meta))
  print("data", show(e.data))
  -- a copy: changing it changes nothing
  e.data.data.greeting = "changed"
  print("copy", registry.get("mods:settings").data.data.greeting)
  print("missing", registry.get("mods:nope"))
  local found = registry.find { kind = "registry.entry" }
  local ids = {}
  for _, f in ipairs(found) do ids[#ids + 1] = f.id end
  print("find kind", table.concat(ids, " "))
  ids = {}
  for _, f in ipairs(registry.find { ["meta.type"] = "config", ["meta.level"] = 3 }) do ids[#ids + 1] = f.id end
  print("find meta", table.concat(ids, " "))
  ids = {}
  for _, f in ipairs(registry.find { namespace = "mods.lib" }) do ids[#ids + 1] = f.id end
  print("find namespace", table.concat(ids, " "))
  print("find none", #registry.find { name = "nothing" })
  print("find bad kind", pcall(registry.find, { kind = "process.nope" }))
  print("find bad key", pcall(registry.find, { colour = "red" }))
  local me = registry.get("mods:run")
  print("own process", me.kind, me.data.imports.greet)
end

function cases.require()
  local greet = require("greet")
  print("import", greet.greet("ann"))
  print("library's own import", greet.sees_outer_import)
  local cfgs = require("cfgs")
  print("once", rawequal(cfgs, require("cfgs")), cfgs.loads())
  print("host modules", require("time") == time, require("json") == json, require("channel") == channel,
        require("process") == process, require("coroutine") == coroutine, require("string") == string)
  -- package.loaded is the process's, keyed by name as in Lua: what the library loaded is there
  print("the library's import is in package.loaded", type(require("fmt")), package.loaded.fmt == require("fmt"))
  print("unknown", pcall(require, "nope"))
  print("by id", pcall(require, "mods:greeter"))
  print("not a string", pcall(require))
end

function cases.readonly()
  for _, name in ipairs { "process", "channel", "time", "logger", "errors", "json", "registry", "coroutine" } do
    local mod = _G[name]
    local ok, err = pcall(function() mod.injected = 1 end)
    print(name, ok, (tostring(err):gsub("^[^:]*:%d+: ", "")), rawget(mod, "injected"), getmetatable(mod))
  end
  print("replace", pcall(function() time.now = function() return 0 end end))
  print("remove", pcall(function() json.encode = nil end))
  print("still there", type(time.now()), type(json.encode))
  print("setmetatable", pcall(setmetatable, time, {}))
  print("nested", pcall(function() process.event.EXIT = "x" end))
  print("nested value", process.event.EXIT)
  print("registry names", pcall(function() process.registry.register = nil end))
  print("require gives the same", pcall(function() require("time").sleep = nil end))
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
