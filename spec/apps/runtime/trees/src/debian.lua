-- Debian's Lua libraries, unchanged, exercised the same way inside a process and under plain
-- luajit (spec/lua/modules_tree_spec.lua runs both and compares what they print).
local function section(name) print("== " .. name) end

local function penlight()
  section("penlight")
  local stringx = require("pl.stringx")
  local List = require("pl.List")
  local tablex = require("pl.tablex")
  local pretty = require("pl.pretty")
  local class = require("pl.class")
  local utils = require("pl.utils")
  local OrderedMap = require("pl.OrderedMap")
  local Set = require("pl.Set")
  local seq = require("pl.seq")
  print(stringx.strip("  x y  "), stringx.startswith("hello", "he"), table.concat(stringx.split("a,b,,c", ","), "|"))
  print(stringx.shorten("a long sentence here", 10), stringx.title("hello world"))
  local l = List({ 3, 1, 2 }):sort():map(function(x) return x * 10 end)
  print(tostring(l), l:len(), List.range(1, 5):reduce("+"))
  print(pretty.write({ 1, 2, a = { b = true } }, ""))
  print(tablex.deepcompare({ a = { 1, 2 } }, { a = { 1, 2 } }), tablex.size({ a = 1, b = 2 }))
  local keys = tablex.keys(tablex.index_map({ "x", "y" }))
  table.sort(keys)
  print(table.concat(keys, ","))
  local Animal = class()
  function Animal:_init(name) self.name = name end
  function Animal:speak() return self.name .. " speaks" end
  local Dog = class(Animal)
  function Dog:speak() return self.name .. " barks" end
  print(Animal("cat"):speak(), Dog("rex"):speak(), Dog("rex"):is_a(Animal))
  print(utils.choose(true, "y", "n"), select("#", utils.unpack({ 1, 2, 3 })), utils.split("a b  c")[3])
  local m = OrderedMap()
  m:set("z", 1); m:set("a", 2)
  print(table.concat(m:keys(), ","))
  print(tostring(Set({ 1 }) + Set({ 2 }) == Set({ 2, 1 })))
  print(seq.sum(seq.list({ 1, 2, 3 })))
  local pl = require("pl.import_into")() -- penlight's lazy loader, into a table of its own
  print(pl.stringx.rstrip("x  ") .. "|", pl.List ~= nil)
  local ok, err = pcall(require, "pl.nope")
  print(require("pl.text") == stringx, ok, (err:match("^[^:]*")))
end

local function luassert()
  section("luassert")
  local assert = require("luassert")
  assert.are.same({ a = { 1, 2 } }, { a = { 1, 2 } })
  assert.is_true(true)
  assert.has_error(function() error("boom") end)
  assert.has_no.errors(function() end)
  local ok, err = pcall(assert.are.same, { 1 }, { 2 })
  print(ok, (tostring(err.message or err):gsub("0x%x+", "ADDR")))
  ok, err = pcall(assert.are.equal, 1, 2)
  print(ok, type(err))
  local spy = require("luassert.spy")
  local s = spy.new(function(x) return x end)
  s(3)
  assert.spy(s).was.called_with(3)
  print("spy", pcall(function() assert.spy(s).was.called(2) end))
  local say = require("say")
  say:set("greeting", "hello %s")
  print(say("greeting", { "world" }))
end

local function uri()
  section("uri")
  local URI = require("uri")
  local u = URI:new("http://Example.COM:80/a/b/../c?q=1#frag")
  print(tostring(u), u:scheme(), u:host(), u:port(), u:path(), u:query(), u:fragment())
  print(tostring(URI:new("https://x.org/")), URI:new("urn:isbn:0-395-36341-1"):isbn_digits())
  local base = URI:new("http://a/b/c/d;p?q")
  print(tostring(URI:new("../g", base)), tostring(URI:new("g?y#s", base)))
  print(URI:new("not a uri"))
end

local function moses()
  section("moses")
  local M = require("moses")
  print(table.concat(M.map({ 1, 2, 3 }, function(v) return v * 2 end), ","))
  print(M.reduce({ 1, 2, 3, 4 }, function(a, b) return a + b end), M.max({ 4, 9, 2 }))
  print(table.concat(M.uniq({ 1, 1, 2, 3, 3 }), ","), table.concat(M.range(1, 7, 2), ","))
  print(M.isEqual({ a = 1 }, { a = 1 }), M.size({ 1, 2, 3 }), table.concat(M.flatten({ 1, { 2, { 3 } } }), ","))
end

local function markdown()
  section("markdown")
  local md = require("markdown")
  print(md("# Title\n\nSome *emphasis* and `code`.\n\n- a\n- b\n"))
end

local function messagepack()
  section("MessagePack")
  local mp = require("MessagePack")
  local packed = mp.pack({ 1, 2.5, "x", true, { k = "v" } })
  print((packed:gsub(".", function(c) return string.format("%02x", c:byte()) end)))
  local v = mp.unpack(packed)
  print(v[1], v[2], v[3], v[4], v[5].k)
end

return function()
  for _, f in ipairs({ penlight, luassert, uri, moses, markdown, messagepack }) do
    local ok, err = pcall(f)
    if not ok then print("error", err) end
  end
end
