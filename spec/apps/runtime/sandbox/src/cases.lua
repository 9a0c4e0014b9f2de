-- Sandbox cases that one process checks by itself; each prints what it observed.
local cases = {}

function cases.globals() -- S1, S4
  -- io: stdout and stderr only; package: loaded, preload and no search path
  print("S1", io.open, io.popen, io.lines, io.read, package.loadlib, package.searchpath, package.loaders, ffi)
  -- getfenv/setfenv: only on the process's own Lua functions (sandbox_compat)
  local ok1, err1 = pcall(getfenv, print)
  local ok2, err2 = pcall(setfenv, 0, {})
  print("S4", ok1, err1, ok2, err2, dofile, loadfile, newproxy)
  print("raw", rawget(_G, "os"), rawget(_G, "debug"), rawget(_G, "module"), rawget(_G, "gcinfo"))
  -- os, debug and jit are safe subsets (read-only proxies: probe by name)
  local probes = {
    os = { "clock", "date", "difftime", "time", "execute", "exit", "getenv", "remove", "rename", "tmpname", "setlocale" },
    debug = { "traceback", "getinfo", "sethook", "gethook", "getlocal", "setlocal", "getupvalue", "setupvalue",
              "getregistry", "getmetatable", "setmetatable", "getfenv", "setfenv" },
    jit = { "version", "version_num", "os", "arch", "status", "on", "off", "flush", "opt", "attach", "util" },
  }
  for _, lib in ipairs { "os", "debug", "jit" } do
    local have = {}
    for _, k in ipairs(probes[lib]) do
      if _G[lib][k] ~= nil then have[#have + 1] = k end
    end
    print(lib, table.concat(have, " "))
  end
  -- nothing else reachable: list every global and every library function (some globals
  -- are opened on first read: read those first so the list does not depend on which)
  for _, lazy in ipairs { "table", "math", "bit", "coroutine", "xpcall", "require", "process", "channel",
                          "time", "logger", "errors", "json", "registry" } do
    local _ = _G[lazy]
  end
  local names = {}
  for k in pairs(_G) do names[#names + 1] = k end
  table.sort(names)
  print("globals", table.concat(names, " "))
  for _, lib in ipairs { "string", "table", "math", "bit" } do
    local fns = {}
    for k in pairs(_G[lib]) do fns[#fns + 1] = k end
    table.sort(fns)
    print(lib, table.concat(fns, " "))
  end
  -- coroutine is a read-only host module (a proxy: pairs sees nothing): ask by name
  local fns = {}
  for _, k in ipairs { "create", "isyieldable", "resume", "running", "status", "wrap", "yield", "spawn" } do
    if type(coroutine[k]) == "function" then fns[#fns + 1] = k end
  end
  print("coroutine", table.concat(fns, " "))
end

function cases.binary() -- S2
  print("load", load("\27LJ\2\0"))
  print("loadstring", loadstring("\27LJ\2\0"))
  local parts = { "\27LJ", "\2\0" }
  print("reader", load(function() return table.remove(parts, 1) end))
  print("mode b", load("\27LJ\2\0", "x", "b"))
  print("text with mode b", pcall(function() return load("return 1", "x", "b")() end))
  local f = load("return ...", "=chunk", "t", { })
  print("text", f(42))
  local g = load("return x", "=chunk", "t", { x = "env" })
  print("env", g and g())
end

function cases.strings() -- S3
  print("S3", getmetatable(""), ("").dump, string.dump)
  print("index", pcall(function() return getmetatable("").__index end))
  print("methods", ("abc"):upper(), ("%d"):format(7))
end

function cases.gc() -- S9
  for _, opt in ipairs { "stop", "collect", "step", "setpause", "restart" } do
    local ok, err = pcall(collectgarbage, opt)
    print(opt, ok, err)
  end
  print("default", pcall(collectgarbage))
  print("count", type(collectgarbage("count")), collectgarbage("count") > 0)
end

function cases.require() -- S15
  for _, name in ipairs { "os", "ffi", "../../etc/passwd", "io.open", "debug", "jit", "package", "jit.opt", "string.dump" } do
    local ok, err = pcall(require, name)
    print(name, ok, ok and type(err) or err)
  end
end

function cases.pattern() -- S14 in this process: a budget, not minutes
  local t0 = time.now()
  local ok, err = pcall(string.find, ("a"):rep(30), ("a?"):rep(30) .. ("a"):rep(30))
  local dt = time.now() - t0
  print("find", ok, err)
  print("fast", dt < 2)
  t0 = time.now()
  ok, err = pcall(string.match, ("a"):rep(5000), ("(.-)"):rep(20) .. "b")
  print("match", ok, err)
  ok, err = pcall(string.gsub, ("a"):rep(30), ("a?"):rep(30) .. ("a"):rep(30), "")
  print("gsub", ok, err)
  print("fast", time.now() - t0 < 4)
  -- ordinary patterns still work
  print("normal", ("key = value"):match("^(%w+)%s*=%s*(%w+)$"))
  print("gsub normal", ("hello world"):gsub("o", "0"))
end

-- S11: process A breaks its own string library; B, on the same worker, is unaffected.
function cases.upper()
  local inbox = process.inbox()
  local me = process.pid()
  process.spawn("sb:upper_a", "sb:single", me)
  local a = inbox:receive()
  print(a:topic(), a:data())
  process.spawn("sb:upper_b", "sb:single", me)
  local b = inbox:receive()
  print(b:topic(), b:data())
end

-- S8: the hog fails alone; this process goes on and can still spawn and talk.
function cases.memory()
  local events = process.events()
  for _, mode in ipairs { "grow", "catch" } do
    local pid = process.spawn_monitored("sb:hog", nil, mode)
    local deadline = time.after("10s")
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then
      print(mode, "no exit")
    else
      print(mode, r.value.kind, r.value.from == pid, r.value.result.value, r.value.result.error)
    end
  end
  local echo = process.spawn("sb:echo", "sb:single")
  process.send(echo, "ping", "still here")
  print("after", process.inbox():receive():data())
  process.terminate(echo)
  print("own memory small", collectgarbage("count") < 8 * 1024)
end

-- S13 through a monitor: the parent's EXIT event carries a copy; nobody runs the metamethods.
function cases.bad_error_monitored()
  local events = process.events()
  for _, how in ipairs { "tostring", "index", "return", "concat" } do
    local pid = process.spawn_monitored("sb:bad_tostring", nil, how)
    local deadline = time.after("5s")
    local r = channel.select { events:case_receive(), deadline:case_receive() }
    if r.channel == deadline then
      print(how, "no exit")
    else
      local e = r.value.result.error
      print(how, r.value.kind, type(e), type(e) == "table" and tostring(getmetatable(e)) or e)
    end
  end
end

return function(name, ...)
  local f = cases[name]
  if not f then error("no case " .. tostring(name)) end
  return f(...)
end
