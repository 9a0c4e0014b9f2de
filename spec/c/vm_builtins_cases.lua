-- The sandbox's own builtins against LuaJIT's (spec/c/test_vm.c runs this in a raw LuaJIT
-- state and in processes with and without a memory limit; the outputs must be equal):
-- tostring, string.sub/upper/lower/reverse/char, rawset, and table.insert/remove/sort for
-- positions within bounds (outside, the sandbox raises where LuaJIT did something else).
local out = {}
local function show(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "table" then return "table" end
  return tostring(v)
end
local function rec(...)
  local t = {}
  for i = 1, select("#", ...) do t[i] = show((select(i, ...))) end
  out[#out + 1] = table.concat(t, ",")
end
local function dump(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = show(k) .. "=" .. show(t[k]) end
  return "{" .. table.concat(parts, " ") .. "}#" .. #t
end
local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- tostring
local numbers = { 0, -0, 1, -1, 0.5, 1 / 3, 1e15, 1e16, 2 ^ 53, 2 ^ 63, -2 ^ 63, 1e300, 1e-300,
  1 / 0, -1 / 0, 0 / 0, 123456789012, 3.14159265358979, 100, 1e100, 2 ^ 31, -2 ^ 31, 255, 1e-5 }
for _, n in ipairs(numbers) do rec(tostring(n), n .. "") end
rec(tostring("abc"), tostring(""), tostring(nil), tostring(true), tostring(false))
rec(tostring(1, 2), tostring("a", nil))
rec(select("#", tostring(setmetatable({}, { __tostring = function() return 1, 2 end }))))
rec(tostring(setmetatable({}, { __tostring = function(t) return "me" end })))
rec(pcall(tostring))
rec(pcall(function() local x = tostring() return x end))
rec(pcall(tostring, setmetatable({}, { __tostring = function() error("tserr", 0) end })))

-- string.sub
local idx = { 0, 1, 2, 3, -1, -2, -3, 5, 6, 100, -100, 2 ^ 31, -2 ^ 31, 2 ^ 31 - 1, -2 ^ 31 - 1,
  2 ^ 32 + 1, 2 ^ 40, -2 ^ 40, 1.5, -1.5, 2.9, 0 / 0, 1 / 0, -1 / 0, "2", " 3 ", "0x2", "x", true }
for _, s in ipairs { "", "hello", "a\0b\0c", 12345 } do
  for _, i in ipairs(idx) do
    rec(pcall(string.sub, s, i))
    rec(pcall(string.sub, s, i, nil))
    for _, j in ipairs(idx) do rec(pcall(string.sub, s, i, j)) end
  end
end
rec(pcall(string.sub))
rec(pcall(string.sub, "abc"))
rec(pcall(string.sub, nil, 1))
rec(pcall(function() local x = ("abc"):sub({}) return x end))
rec(("hello"):sub(2, 4), ("hello"):sub(-3), string.sub("hello", 2))

-- string.upper, lower, reverse
local bytes = {}
for c = 0, 255 do bytes[#bytes + 1] = string.char(c) end
local all = table.concat(bytes)
for _, s in ipairs { all, "", "Hello World", ("aZ\0"):rep(300), 123, 1.5, -0 } do
  rec(string.upper(s), string.lower(s), string.reverse(s))
end
rec(string.upper("a", "b"), ("xY"):lower(), ("ab"):reverse())
for _, f in ipairs { string.upper, string.lower, string.reverse } do
  rec(pcall(f))
  rec(pcall(f, nil))
  rec(pcall(f, {}))
  rec(pcall(f, true))
end
rec(pcall(function() local x = string.upper() return x end))

-- string.char
rec(pcall(string.char))
for _, c in ipairs { 0, 65, 255, 256, -1, 65.9, -0.5, "66", " 67", 2 ^ 31, 2 ^ 32 + 65, 0 / 0, 1 / 0, "x", {}, true } do
  rec(pcall(string.char, c))
end
rec(pcall(string.char, nil))
rec(string.char(65, 66, 67), string.char(0, 0))
local many = {}
for i = 1, 300 do many[i] = (i * 7) % 256 end
rec(string.char(unpack(many)))
many[280] = 256
rec(pcall(string.char, unpack(many)))
rec(pcall(function() local x = string.char(1, 2, 999) return x end))

-- rawset
local t = {}
rec(rawset(t, "a", 1) == t, t.a)
rec(pcall(rawset))
rec(pcall(rawset, {}))
rec(pcall(rawset, {}, 1))
rec(pcall(rawset, {}, nil, 1))
rec(pcall(rawset, {}, 0 / 0, 1))
rec(pcall(rawset, 1, 2, 3))
rec(pcall(function() local x = rawset("s", 1, 2) return x end))
local guarded = setmetatable({}, { __newindex = function() error("no") end })
rawset(guarded, "k", "v")
rec(guarded.k, select("#", rawset(guarded, "k2", nil)))

-- table.insert, positions within 1..#t+1
local shapes = { {}, { 1, 2, 3 }, { "a", "b", nil, "d" }, { [1] = 1, [2] = 2, [4] = 4, x = "x" } }
for _, shape in ipairs(shapes) do
  local a = copy(shape)
  table.insert(a, "v")
  rec(dump(a))
  local n = #shape
  for _, pos in ipairs { 1, 2, n, n + 1, 1.5, 1.9, "1", " 2 " } do
    local num = tonumber(pos)
    if num and num >= 1 and math.floor(num) <= n + 1 then
      local b = copy(shape)
      rec(pcall(table.insert, b, pos, "w"))
      rec(dump(b))
    end
  end
  local c = copy(shape)
  table.insert(c, 1, nil)
  rec(dump(c))
end
rec(pcall(table.insert))
rec(pcall(table.insert, nil, 1))
rec(pcall(table.insert, {}))
rec(pcall(table.insert, {}, 1, 2, 3))
rec(pcall(table.insert, {}, "x", 1))
rec(pcall(function() table.insert({}, 1, 2, 3) end))
local mt = setmetatable({ 1, 2 }, { __newindex = function() error("mt") end, __index = function() return "i" end })
table.insert(mt, "z")
table.insert(mt, 1, "y")
rec(rawget(mt, 1), rawget(mt, 2), rawget(mt, 3), rawget(mt, 4), #mt)

-- table.remove, positions #t or within 1..#t+1
for _, shape in ipairs(shapes) do
  local a = copy(shape)
  rec(select("#", table.remove(a)), dump(a))
  a = copy(shape)
  rec(select("#", table.remove(a, nil)), dump(a))
  local n = #shape
  for _, pos in ipairs { 1, 2, n, n + 1, 1.5, 2.9, "1", "2" } do
    local num = tonumber(pos)
    if num and (num == n or (num >= 1 and num <= n + 1)) then
      local b = copy(shape)
      rec(pcall(table.remove, b, pos))
      rec(dump(b))
    end
  end
end
rec(select("#", table.remove({}, 0)))
rec(pcall(table.remove))
rec(pcall(table.remove, {}, "x"))
rec(pcall(table.remove, { 1 }, {}))
rec(pcall(function() return table.remove(nil) end))
local mr = setmetatable({ 1, 2, 3 }, { __index = function() return "i" end, __newindex = function() error("mt") end })
rec(table.remove(mr, 1), table.remove(mr), rawget(mr, 1), rawget(mr, 2), #mr)

-- table.sort: same comparisons in the same order, same results and errors
local seed = 42
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return math.floor(seed / 65536) % n
end
local arrays = { {}, { 1 }, { 2, 1 }, { 3, 1, 2 }, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 } }
local up, down = {}, {}
for i = 1, 20 do up[i] = i; down[i] = 21 - i end
arrays[#arrays + 1] = up
arrays[#arrays + 1] = down
for _, n in ipairs { 50, 200 } do
  local r = {}
  for i = 1, n do r[i] = rnd(100) end
  arrays[#arrays + 1] = r
end
local words = {}
for i = 1, 60 do words[i] = ("w" .. rnd(1000)):rep(1 + rnd(3)) end
arrays[#arrays + 1] = words
for _, arr in ipairs(arrays) do
  local a = copy(arr)
  table.sort(a)
  rec(table.concat(a, " "))
  local log = {}
  local b = copy(arr)
  table.sort(b, function(x, y) log[#log + 1] = x .. "<" .. y return x > y end)
  rec(table.concat(b, " "), #log, table.concat(log, " ", 1, math.min(#log, 400)))
end
local bad = {}
for i = 1, 10 do bad[i] = rnd(10) end
local c = copy(bad)
rec(pcall(table.sort, c, function() return true end))
rec(table.concat(c, " "))
c = copy(bad)
rec(pcall(function() table.sort(c, function() return true end) end))
rec(pcall(table.sort, { 1, "x", 2 }))
rec(pcall(table.sort, { 1, nil, 3 }))
rec(pcall(table.sort, {}, 5))
rec(pcall(table.sort, nil))
rec(pcall(table.sort, { 3, 2, 1 }, function(x, y) error("cmp", 0) end))
local lt = { __lt = function(x, y) return x.v < y.v end }
local objs = {}
for i = 1, 30 do objs[i] = setmetatable({ v = rnd(50) }, lt) end
table.sort(objs)
local vs = {}
for i, o in ipairs(objs) do vs[i] = o.v end
rec(table.concat(vs, " "))

-- the pattern matcher (vm_pattern.c): a back-reference to a position capture never matches (it
-- raised "pattern too complex"), and its budget, linear in subject x pattern, covers
-- backtracking LuaJIT finishes in milliseconds
rec(string.find("xaa", "()a%1"))
rec(string.match("xaa", "()a%1"), string.gsub("xaa", "()a%1", "!"))
rec(string.find(("a"):rep(1500), ".-b"))
rec(string.find(("a"):rep(1500) .. "b", ".-b"))
rec(string.find("<x>" .. ("y"):rep(2000) .. "</x>", "<(%w+)>(.-)</%1>"))
rec(string.find("<x>" .. ("y"):rep(2000) .. "</z>", "<(%w+)>(.-)</%1>"))

return table.concat(out, "\n")
