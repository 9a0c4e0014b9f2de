-- Module trees (docs/registry.md "Module trees", docs/lua-api.md "require and imports"):
-- Debian's Lua libraries loaded unchanged from /usr/share/lua/5.1 inside a process print what
-- the same script prints under plain luajit; an app-local tree, package.loaded/preload, a
-- require cycle, and the registry's refusals of trees that leave their directory.
local rt = require("spec.lua.runtime_helper")
local h = require("spec.lua.steward_helper")

local APP = rt.APPS .. "/trees"
local SCRIPT = APP .. "/src/debian.lua"
local LUA51 = "/usr/share/lua/5.1"

local function have(path) return h.exists(LUA51 .. "/" .. path) end

local function plain_luajit(script)
  local out = os.tmpname()
  local code = "arg=nil package.path='" .. LUA51 .. "/?.lua;" .. LUA51 .. "/?/init.lua' dofile('" ..
               script .. "')()"
  os.execute("luajit -e " .. h.quote(code) .. " >" .. out .. " 2>&1")
  local s = h.read(out)
  os.remove(out)
  return s
end

-- The sections of the output, by their "== name" line.
local function sections(s)
  local t, cur = {}, nil
  for line in (s .. "\n"):gmatch("(.-)\n") do
    local name = line:match("^== (.+)$")
    if name then cur = name; t[cur] = {} elseif cur then table.insert(t[cur], line) end
  end
  for k, v in pairs(t) do t[k] = table.concat(v, "\n") end
  return t
end

describe("Debian's Lua libraries as module trees", function()
  local libs = { penlight = "pl/init.lua", luassert = "luassert/init.lua", uri = "uri.lua",
                 moses = "moses.lua", markdown = "markdown.lua", MessagePack = "MessagePack.lua" }
  local inside, plain

  setup(function()
    if not (have("pl/init.lua") and have("luassert/init.lua") and have("say/init.lua")) then return end
    inside = sections(rt.ok(rt.run("trees", "trees:run", {}), true).stdout)
    if os.execute("command -v luajit >/dev/null") then plain = sections(plain_luajit(SCRIPT)) end
  end)

  for name, file in pairs(libs) do
    it(name .. " prints what it prints under plain luajit", function()
      if not have(file) or not inside then return pending("lua-" .. name:lower() .. " is not installed") end
      assert.is_truthy(inside[name], "no section " .. name)
      assert.is_nil(inside[name]:match("^error"), inside[name])
      assert.is_truthy(plain, "plain luajit is not installed")
      assert.are.equal(plain[name], inside[name])
    end)
  end
end)

describe("an app-local tree", function()
  local function run(case) return rt.ok(rt.run("trees", "trees:local_case", { case }), true).stdout end

  it("resolves dotted names in the tree, a library's requires in its own tree, and passes the name as ...", function()
    assert.are.equal(table.concat({
      "m\tmy.sub\tmy.sub.helper\thello ann\thello ",
      "true\ttrue\ttrue",
      "false\tmodule 'm.nope' not found: no nope.lua or nope/init.lua in trees:local",
      "true\tfalse\tmodule 'my.other' not found: no such host module or import",
      "true\tfalse\tmodule 'deep' not found: no such host module or import", "" }, "\n"), run("tree"))
  end)

  it("keeps package.loaded and package.preload per process, as Lua does", function()
    assert.are.equal(table.concat({
      "pre\ttrue", "42", "m\ttable", "true\ttrue\ttrue\ttrue",
      "/\t\tfalse\tmodule 'ffi' not found: no such host module or import", "" }, "\n"), run("package"))
  end)

  it("gives os.getenv by env.get's rules, setfenv/getfenv on own functions only, debug.getinfo without func", function()
    assert.are.equal(table.concat({
      "test\tnil\t1",
      "true\tfrom env\tfrom env\ttrue\ttrue",
      "false\tsetfenv: not allowed on a host function",
      "false\tgetfenv: level 0 (the thread's environment) is not allowed",
      "false\tgetfenv: not allowed on a host function",
      "local.lua\t28\tnil\tC",
      "file\tnil\tfalse\tp", "" }, "\n"), run("compat"))
  end)

  it("reports a require cycle naming the chain, and leaves nothing half-loaded", function()
    local line = "false\trequire cycle: cyc.a -> cyc.b -> cyc.c -> cyc.a"
    assert.are.equal(line .. "\n" .. line .. "\n", run("cycle"))
  end)
end)

describe("dir:// sources", function()
  local dir

  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir .. "/app/lib/t " .. dir .. "/outside")
    local f = io.open(dir .. "/outside/secret.lua", "w"); f:write("return 1\n"); f:close()
  end)
  after_each(function() os.execute("rm -rf " .. h.quote(dir)) end)

  local function check(source)
    local f = io.open(dir .. "/app/app.yaml", "w")
    f:write("namespace: t\nentries:\n  - name: lib\n    kind: library.lua\n    source: " .. source .. "\n")
    f:close()
    return h.run("check", dir .. "/app")
  end

  it("refuses a directory outside the app, a missing one and a symlink that leaves the tree", function()
    local r = check("dir://../outside")
    assert.are_not.equal(0, r.code)
    assert.matches("dir://../outside resolves outside the app directory", r.stderr .. r.stdout, 1, true)
    r = check("dir://lib/none")
    assert.matches("dir://lib/none: No such file or directory", r.stderr .. r.stdout, 1, true)
    os.execute("ln -s " .. dir .. "/outside/secret.lua " .. dir .. "/app/lib/t/leak.lua")
    r = check("dir://lib/t")
    assert.matches("leak.lua: a symlink that leaves the tree", r.stderr .. r.stdout, 1, true)
  end)

  it("accepts a tree and reports a file of it that does not compile", function()
    local f = io.open(dir .. "/app/lib/t/bad.lua", "w"); f:write("return (\n"); f:close()
    local r = check("dir://lib/t")
    assert.are_not.equal(0, r.code)
    assert.matches("bad.lua:2:", r.stderr .. r.stdout, 1, true)
    os.remove(dir .. "/app/lib/t/bad.lua")
    assert.are.equal(0, check("dir://lib/t").code)
  end)
end)
