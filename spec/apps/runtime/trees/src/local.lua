return function(case)
  if case == "tree" then
    local m = require("m")
    print(m.name, m.sub.name, m.sub.helper.name, m.greet("ann"), m.sub.helper.later())
    print(require("m.sub") == m.sub, package.loaded["m.sub"] == m.sub, package.loaded["my.sub"] == m.sub)
    print(pcall(require, "m.nope"))
    -- package.loaded is the process's, keyed by name as in Lua: the library's own name is there
    print(require("my.sub") == m.sub, pcall(require, "my.other"))
    print(require("deep.alias.sub") == m.sub, pcall(require, "deep"))
  elseif case == "package" then
    package.preload.pre = function(...) return { got = ... } end
    print(require("pre").got, require("pre") == require("pre"))
    package.loaded.fake = 42
    print(require("fake"))
    package.loaded["m"] = nil  -- forces a reload, as in Lua
    local again = require("m")
    print(again.name, type(package.loaded.m))
    print(require("os") == os, require("debug") == debug, require("package") == package, require("_G") == _G)
    print(package.config:sub(1, 1), package.path, pcall(require, "ffi"))
  elseif case == "compat" then
    print(os.getenv("TREES_MODE"), os.getenv("HOME"), select("#", os.getenv("HOME")))
    local function f() return x end
    local env = setfenv(f, { x = "from env" })
    print(env == f, f(), getfenv(f).x, getfenv(1) == _G, getfenv() == _G)
    print(pcall(setfenv, print, {}))
    print(pcall(getfenv, 0))
    print(pcall(getfenv, coroutine.wrap(function() end)))
    local info = debug.getinfo(1, "Sl")
    print(info.short_src:match("local%.lua$"), info.currentline, info.func, debug.getinfo(print).what)
    print(io.type(io.stdout), io.type({}), debug.getmetatable("x"), debug.getmetatable(setmetatable({}, { __metatable = "p" })))
  elseif case == "cycle" then
    print(pcall(require, "cyc.a"))
    print(pcall(require, "cyc.a")) -- the same again: nothing was left half-loaded
  end
end
