-- A Lua 5.1 test-suite subset (after the official suite's strings, pm, sort, nextvar, calls,
-- closure, events, errors and coroutine files) and generated pattern cases. Everything it
-- prints is deterministic, so a process and plain luajit must print the same.
local out = {}
local function section(name) print("== " .. name) end
local function show(...)
  local t = { select("#", ...), ... }
  for i = 2, t[1] + 1 do
    local v = t[i]
    if type(v) == "table" or type(v) == "function" or type(v) == "thread" then v = type(v) end
    t[i] = tostring(v)
  end
  print(table.concat(t, "\t", 2, t[1] + 1))
end
local function try(f, ...) show(pcall(f, ...)) end

local function strings()
  section("strings")
  show(("hello"):sub(2, -2), ("hello"):sub(-3), ("hello"):sub(0), ("hello"):sub(10), ("hello"):sub(3, 2))
  show(string.byte("abc", 1, -1), string.char(72, 105), ("x"):rep(3), ("ab"):rep(0), ("a"):rep(3, ","))
  show(("MiXeD"):upper(), ("MiXeD"):lower(), #"\0a\0", ("abc"):reverse(), ("abc"):len())
  show(string.format("%5.2f|%-5d|%05d|%x|%X|%o|%e|%g|%g", 3.14159, 42, 42, 255, 255, 8, 12345.678, 0.1, 1e20))
  show(string.format("%q", "a\nb\"c\\\0d"), string.format("%s %s", 1, true), string.format("%c%c", 76, 117))
  show(string.format("%10s|%-10s|%.2s", "hi", "hi", "hello"), string.format("%%"), string.format("%i", 3.0))
  show(tostring(1e15), tostring(1e16), tostring(0.1), tostring(-0), tostring(1 / 0), tostring(-1 / 0), 2 ^ 53)
  show(tonumber("0x10"), tonumber("  12  "), tonumber("1e2"), tonumber("z", 36), tonumber("10", 2), tonumber(""), tonumber("1e"))
  show("a" < "b", "a" < "ab", "Z" < "a", "" < "a", "10" < "9")
  show(("%d"):format(-0), 7 % 3, -7 % 3, 7 % -3, 5.5 % 2, math.fmod(-7, 3))
end

local function patterns()
  section("patterns")
  show(string.find("hello world", "o w"), string.find("hello", "l+"), string.find("a.b", ".", 1, true))
  show(string.find("hello", "(l)(l)"), string.match("key = value", "(%w+)%s*=%s*(%w+)"))
  show(string.match("  trim  ", "^%s*(.-)%s*$"), string.match("2024-01-05", "(%d+)-(%d+)-(%d+)"))
  show(string.gsub("hello world", "o", "0"), string.gsub("abc", "%w", "%0%0"), string.gsub("abc", "", "-"))
  show(string.gsub("hello world", "(%w+)", "<%1>"), string.gsub("abc", "b", "%%"), string.gsub("a b c", " ", "", 1))
  show(string.gsub("$name is $age", "%$(%w+)", { name = "ann", age = 3 }))
  show(string.gsub("x = 1, y = 2", "(%w+) = (%w+)", function(k, v) return v .. " = " .. k end))
  show(string.match("THE (quick) fox", "%((%a+)%)"), string.find("THE (quick) fox", "%b()"))
  show(string.gsub("THE (quick) fox", "%f[%a]%a+", "W"), string.match("[[x]]", "%[(%b[])%]"))
  show(string.match("hello", "()ll()"), string.match("aaa", "a-b"), string.match("aaab", "a-b"), string.match("", ".*"))
  show(string.find("abc", "[a-", 1, true), string.match("a]b", "[]]"), string.match("a^b", "[%^]"), string.match("x-y", "[a%-z]+"))
  show(string.match("  x", "^ *"), string.find("abc", "^b"), string.find("aXb", "%u"), string.match("f(a,b)", "%((.-)%)"))
  show(string.match("hello hello", "(h%a+) %1"), string.match("abab", "(ab)%1"), string.rep("ab", 3):match("^(ab)+$"))
  local words = {}
  for w in string.gmatch("one two  three", "%a+") do words[#words + 1] = w end
  show(table.concat(words, ","))
  local pairs_ = {}
  for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do pairs_[#pairs_ + 1] = k .. v end
  show(table.concat(pairs_, ","))
  for _, p in ipairs({ "%", "[a", "(()", "%b", "%f", "(%1)", "%g(", "a)" }) do
    local ok, err = pcall(string.find, "abc", p)
    show(p, ok, err)
  end
end

local function tables()
  section("tables")
  local t = { 5, 2, 8, 1, 9, 3 }
  table.sort(t)
  show(table.concat(t, ","))
  table.sort(t, function(a, b) return a > b end)
  show(table.concat(t, ","))
  local s = { "banana", "apple", "Cherry", "date" }
  table.sort(s)
  show(table.concat(s, " "))
  local u = {}
  table.insert(u, "a"); table.insert(u, 1, "b"); table.insert(u, #u + 1, "c")
  show(table.concat(u, ""), table.remove(u), table.remove(u, 1), table.concat(u, ""), #u, table.remove({}))
  show(table.maxn({ 1, 2, [10] = 3 }), #{ 1, 2, 3, nil }, select("#", unpack({ 1, 2, 3 })), unpack({ 1, 2, 3 }, 2))
  show(table.concat({ 1, 2, 3 }, "-", 2, 3), table.concat({}, "x"), select(-1, 1, 2, 3), select(2, "a", "b", "c"))
  local n, sum = 0, 0
  for k, v in pairs({ a = 1, b = 2, 10, 20 }) do n = n + 1; sum = sum + v end
  show(n, sum, next({}), rawlen and "rawlen" or "no rawlen", rawequal(t, t), rawget({ 7 }, 1))
  local big = {}
  for i = 1, 200 do big[i] = (i * 7919) % 211 end
  table.sort(big)
  local ok = true
  for i = 2, 200 do ok = ok and big[i - 1] <= big[i] end
  show("sorted 200", ok, big[1], big[200])
end

local function calls()
  section("calls")
  local function va(...) return select("#", ...), ... end
  show(va(), va(nil), va(nil, nil), va(1, nil, 3))
  local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
  show(fib(20))
  local function counter()
    local c = 0
    return function() c = c + 1; return c end
  end
  local c1, c2 = counter(), counter()
  c1(); c1()
  show(c1(), c2())
  local fs = {}
  for i = 1, 3 do fs[i] = function() return i end end
  show(fs[1](), fs[2](), fs[3]())
  local function tail(n) if n == 0 then return "done" end return tail(n - 1) end
  show(tail(100000))
  show(math.floor(-3.5), math.ceil(-3.5), math.max(1, 5, 3), math.min(2, -1), math.abs(-4), math.huge > 1e308)
  show(math.modf(3.7), math.modf(-3.7), math.floor(2 ^ 31 + 0.5), 10 / 4, 2 ^ 10)
end

local function metatables()
  section("metatables")
  local V = {}
  V.__index = V
  V.__add = function(a, b) return setmetatable({ x = a.x + b.x }, V) end
  V.__eq = function(a, b) return a.x == b.x end
  V.__lt = function(a, b) return a.x < b.x end
  V.__le = function(a, b) return a.x <= b.x end
  V.__tostring = function(a) return "V(" .. a.x .. ")" end
  V.__concat = function(a, b) return tostring(a) .. "|" .. tostring(b) end
  V.__unm = function(a) return setmetatable({ x = -a.x }, V) end
  V.__call = function(self, y) return self.x * y end
  local function v(x) return setmetatable({ x = x }, V) end
  show(tostring(v(1) + v(2)), v(1) == v(1), v(1) < v(2), v(2) <= v(1), tostring(-v(3)), v(1) .. v(2), v(4)(5))
  local log = {}
  local proxy = setmetatable({}, {
    __index = function(_, k) return "default " .. k end,
    __newindex = function(t, k, val) log[#log + 1] = k; rawset(t, k, val) end })
  proxy.a = 1
  show(proxy.a, proxy.b, table.concat(log, ","), getmetatable(setmetatable({}, { __metatable = "locked" })))
  show(pcall(setmetatable, setmetatable({}, { __metatable = 1 }), {}))
  local weak = setmetatable({}, { __mode = "k" })
  show(type(weak), rawequal(weak, weak))
end

local function errors()
  section("errors")
  show(pcall(error, "msg"), pcall(error, "msg", 0), pcall(error))
  show(pcall(function() error("lvl1") end))
  show(pcall(function() local function f() error("lvl2", 2) end f() end))
  show(select(2, pcall(error, { code = 1 })).code)
  show(pcall(function() local x = nil; return x.y end))
  show(pcall(function() return 1 + {} end))
  show(pcall(function() return #nil end))
  show(pcall(function() return ("x") < 1 end))
  show(pcall(function() undefined_fn() end))
  show(pcall(function() local t = {} t.x.y = 1 end))
  show(pcall(function() local s = string.rep() end))
  show(pcall(function() local s = ("x"):rep("y") end))
  show(pcall(function() local t = {} table.insert(t, 1, 2, 3) end))
  show(pcall(function()
    local t = {}
    for k = 1, 100 do t[k] = k % 7 end
    table.sort(t, function() return true end)
  end))
  show(pcall(function() local r = string.find("a", "%") end))
  show(pcall(function() local r = string.format("%d", "x") end))
  show(pcall(function() local r = string.gsub("a", "a", { a = {} }) end))
  show(pcall(function() local r = setmetatable(1, {}) end))
  show(pcall(function() local r = tostring() end))
  show(pcall(function() local r = ipairs() end))
  show(xpcall(function() error("handled") end, function(e) return "handler: " .. e end))
  show(select("#", pcall(error)))
end

local function coroutines()
  section("coroutines")
  local co = coroutine.create(function(a, b)
    local c = coroutine.yield(a + b)
    local d, e = coroutine.yield(c * 2)
    return d + e
  end)
  show(coroutine.resume(co, 1, 2))
  show(coroutine.status(co), coroutine.resume(co, 10))
  show(coroutine.resume(co, 3, 4))
  show(coroutine.status(co), coroutine.resume(co))
  local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
  show(gen(), gen(), gen())
  local bad = coroutine.create(function() error("inside") end)
  show(coroutine.resume(bad))
  show(coroutine.status(bad), coroutine.running() == nil or "thread")
  show(pcall(coroutine.wrap(function() error({}) end)))
  local nested = coroutine.wrap(function()
    local inner = coroutine.wrap(function() coroutine.yield("inner") end)
    coroutine.yield(inner())
    coroutine.yield("outer")
  end)
  show(nested(), nested())
end

local function loading()
  section("load")
  local f = loadstring("return 1 + ...")
  show(f(41), loadstring("syntax error here"))
  show(load("return x", "=env", "t", nil) ~= nil)
  local pieces, i, calls = { "x = = 1\n" }, 0, 0
  for k = 2, 500 do pieces[k] = "-- more\n" end
  show(load(function() calls = calls + 1; i = i + 1; return pieces[i] end, "=stream"))
  show(calls < 10)
  i = 0
  local parts = { "local a, b = ", "20, ", "22 ", "return a + b" }
  show(load(function() i = i + 1; return parts[i] end)())
  show(load(function() return nil end)())
  show(loadstring("return ...", "=varargs")(1, 2, 3))
end

-- Generated pattern cases: a fixed LCG picks subjects and patterns from small alphabets.
local function generated()
  section("generated patterns")
  local seed = 12345
  local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 end
  local subj_chars = { "a", "b", "c", " ", "(", ")", ".", "%", "1", "2", "-", "x" }
  local items = { "a", "b", ".", "%a", "%d", "%s", "%w", "%p", "[ab]", "[^a]", "[%a%d]", "%.", "%%", "(", ")",
                  "*", "+", "-", "?", "^", "$", "%b()", "%f[%w]", "()", "x", "[a-c]", "%1" }
  local results = {}
  for case = 1, 600 do
    local s = {}
    for _ = 1, rnd(12) - 1 do s[#s + 1] = subj_chars[rnd(#subj_chars)] end
    local p = {}
    for _ = 1, rnd(5) do p[#p + 1] = items[rnd(#items)] end
    s, p = table.concat(s), table.concat(p)
    local r1 = { pcall(string.find, s, p) }
    local r2 = { pcall(string.gsub, s, p, "<%0>") }
    local r3 = { pcall(string.match, s, p, rnd(3)) }
    for k, r in ipairs({ r1, r2, r3 }) do
      for j = 1, #r do r[j] = tostring(r[j]) end
      results[#results + 1] = case .. "." .. k .. " " .. string.format("%q %q", s, p) .. " " .. table.concat(r, " ")
    end
  end
  for _, line in ipairs(results) do print(line) end
end

return function()
  for _, f in ipairs({ strings, patterns, tables, calls, metatables, errors, coroutines, loading, generated }) do
    local ok, err = pcall(f)
    if not ok then print("section error", err) end
  end
end
