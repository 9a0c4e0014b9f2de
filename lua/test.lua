-- The `steward test` runner (docs/lua-api.md "steward test"): wraps a test.lua chunk. Its main
-- function defines describe/it/pending/before_each/after_each/setup/teardown and luassert's
-- assert (when the entry imports `luassert`), runs the chunk to collect the tests, runs them
-- (each error caught with the test file's line), prints them as text, TAP or JUnit, and
-- returns the counts to the host: {tests = n, failed = n, pending = n}.
local chunk = ...

local function escape_xml(s)
  return (tostring(s):gsub("[<>&\"]", { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;", ['"'] = "&quot;" }))
end

local function collect(env)
  local root = { name = nil, children = {}, befores = {}, afters = {}, setups = {}, teardowns = {} }
  local current = root
  local function add(t) t.parent = current; table.insert(current.children, t) end
  function env.describe(name, fn)
    local block = { kind = "describe", name = name, children = {}, befores = {}, afters = {},
                    setups = {}, teardowns = {} }
    add(block)
    local outer = current
    current = block
    fn()
    current = outer
  end
  env.context = env.describe
  function env.it(name, fn) add({ kind = fn and "it" or "pending", name = name, fn = fn }) end
  function env.pending(name) add({ kind = "pending", name = name }) end
  function env.before_each(fn) table.insert(current.befores, fn) end
  function env.after_each(fn) table.insert(current.afters, fn) end
  function env.setup(fn) table.insert(current.setups, fn) end
  function env.teardown(fn) table.insert(current.teardowns, fn) end
  env.lazy_setup, env.lazy_teardown = env.setup, env.teardown
  return root
end

local function full_name(t)
  local parts = {}
  while t and t.name do table.insert(parts, 1, t.name); t = t.parent end
  return table.concat(parts, " ")
end

-- The error with the test file's line: the innermost frame of the test chunk's source.
local function catcher(source)
  return function(err)
    local where, short
    for level = 2, 60 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == source and info.currentline > 0 then
        where = info.source:gsub("^[@=]", "") .. ":" .. info.currentline
        short = info.short_src .. ":" .. info.currentline -- how Lua's messages name it
        break
      end
    end
    local message = type(err) == "table" and tostring(err.message or err) or tostring(err)
    for _, prefix in ipairs({ where, short }) do
      if message:sub(1, #prefix + 2) == prefix .. ": " then message = message:sub(#prefix + 3) end
    end
    return { message = message, where = where }
  end
end

local function run_all(root, opts, report)
  local source = debug.getinfo(chunk, "S").source
  local handler = catcher(source)
  local function call(fn)
    local ok, e = xpcall(fn, handler)
    return ok, e
  end
  local function chain_of(t)
    local list, b = {}, t.parent
    while b do table.insert(list, 1, b); b = b.parent end
    return list
  end
  local function run_it(t)
    local name = full_name(t)
    if opts.filter and opts.filter ~= "" and not name:find(opts.filter) then return end
    if t.kind == "pending" then return report("pending", name) end
    local blocks = chain_of(t)
    local ok, err = true, nil
    for _, b in ipairs(blocks) do
      for _, f in ipairs(b.befores) do
        if ok then ok, err = call(f) end
      end
    end
    if ok then ok, err = call(t.fn) end
    for i = #blocks, 1, -1 do
      for _, f in ipairs(blocks[i].afters) do
        local ok2, err2 = call(f)
        if ok and not ok2 then ok, err = ok2, err2 end
      end
    end
    report(ok and "ok" or "fail", name, err)
  end
  local function walk(block)
    for _, f in ipairs(block.setups) do
      local ok, err = call(f)
      if not ok then return report("fail", full_name(block) .. " (setup)", err) end
    end
    for _, t in ipairs(block.children) do
      if t.kind == "describe" then walk(t) else run_it(t) end
    end
    for _, f in ipairs(block.teardowns) do
      local ok, err = call(f)
      if not ok then report("fail", full_name(block) .. " (teardown)", err) end
    end
  end
  walk(root)
end

-- Virtual time for the test process (not the services or processes it spawns): the runner's
-- `time` is the host's plus freeze() and advance(d). Once frozen, now(), unix(), sleep(),
-- after() and ticker() follow a clock that moves only by advance(d), which wakes, in deadline
-- order, what became due and lets the woken tasks run.
local function virtual_time(real)
  local frozen, now, unix0, now0 = false, 0, 0, 0
  local timers, seq = {}, 0
  local vt = {}
  local function add_timer(delay, period, ch)
    seq = seq + 1
    local t = { at = now + delay, period = period, ch = ch, seq = seq }
    table.insert(timers, t)
    return t
  end
  local function due()
    local best
    for _, t in ipairs(timers) do
      if not t.stopped and t.at <= now and (not best or t.at < best.at or (t.at == best.at and t.seq < best.seq)) then
        best = t
      end
    end
    return best
  end
  local function seconds(d, fname)
    local s = type(d) == "number" and d or real.parse_duration(d)
    if type(s) ~= "number" or s < 0 then
      error("bad argument #1 to '" .. fname .. "' (expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds))", 3)
    end
    return s
  end
  function vt.freeze()
    if not frozen then frozen, now0, unix0 = true, real.now(), real.unix(); now = now0 end
    return now
  end
  function vt.advance(d)
    if not frozen then error("time.advance: the clock is not frozen (freeze it first)", 2) end
    local target = now + seconds(d, "advance")
    real.sleep(0) -- tasks spawned or woken before this call reach their timers first
    while true do
      local saved = now
      now = target
      local t = due()
      now = saved
      if not t then break end
      now = t.at
      if t.period then t.at = t.at + t.period else t.stopped = true end
      if t.ch then
        if t.period then channel.select({ t.ch:case_send(now), default = true }) else t.ch:send(now) end
      end
      real.sleep(0) -- the woken tasks run before the clock moves on
    end
    now = target
    real.sleep(0)
    return now
  end
  function vt.now() return frozen and now or real.now() end
  function vt.unix() return frozen and unix0 + (now - now0) or real.unix() end
  function vt.sleep(d)
    local s = frozen and seconds(d, "sleep")
    if not frozen or s == 0 then return real.sleep(d) end -- sleep(0) still just yields
    local ch = channel.new(1)
    add_timer(s, nil, ch)
    ch:receive()
  end
  function vt.after(d)
    if not frozen then return real.after(d) end
    local ch = channel.new(1)
    add_timer(seconds(d, "after"), nil, ch)
    return ch
  end
  function vt.ticker(d)
    if not frozen then return real.ticker(d) end
    local period = seconds(d, "ticker")
    if period == 0 then error("bad argument #1 to 'ticker' (a ticker needs a period above zero)", 2) end
    local t = add_timer(period, period, channel.new(1))
    return { channel = function() return t.ch end, stop = function() t.stopped = true end }
  end
  return setmetatable(vt, { __index = real })
end

local formats = {}

function formats.text(id)
  return function(status, name, err)
    if status == "ok" then print("ok      " .. id .. ": " .. name)
    elseif status == "pending" then print("pending " .. id .. ": " .. name)
    else
      print("FAIL    " .. id .. ": " .. name)
      print("  " .. (err.where and err.where .. ": " or "") .. err.message:gsub("\n", "\n  "))
    end
  end
end

function formats.tap(id, offset)
  local n = offset
  return function(status, name, err)
    n = n + 1
    local label = id .. ": " .. name
    if status == "ok" then print("ok " .. n .. " - " .. label)
    elseif status == "pending" then print("ok " .. n .. " - " .. label .. " # SKIP pending")
    else
      print("not ok " .. n .. " - " .. label)
      if err.where then print("# " .. err.where) end
      print("# " .. err.message:gsub("\n", "\n# "))
    end
  end
end

function formats.junit(id)
  local cases = {}
  return function(status, name, err)
    local line = '  <testcase classname="' .. escape_xml(id) .. '" name="' .. escape_xml(name) .. '"'
    if status == "ok" then line = line .. "/>"
    elseif status == "pending" then line = line .. "><skipped/></testcase>"
    else
      local text = (err.where and err.where .. ": " or "") .. err.message
      line = line .. '><failure message="' .. escape_xml(err.where or "failed") .. '">' .. escape_xml(text) ..
             "</failure></testcase>"
    end
    table.insert(cases, line)
  end, cases
end

return function()
  return function(format, filter, offset, id)
    local env = _G
    local root = collect(env)
    env.time = virtual_time(time)
    local ok_assert, luassert = pcall(require, "luassert")
    if ok_assert then
      env.assert = luassert
      for _, m in ipairs({ "spy", "mock", "stub", "match" }) do
        local ok, mod = pcall(require, "luassert." .. m)
        if ok then env[m] = mod end
      end
    end
    local counts = { tests = 0, failed = 0, pending = 0 }
    local out, cases = formats[format or "text"](id or "?", tonumber(offset) or 0)
    local function report(status, name, err)
      counts.tests = counts.tests + 1
      if status == "fail" then counts.failed = counts.failed + 1 end
      if status == "pending" then counts.pending = counts.pending + 1 end
      out(status, name, err)
    end
    local loaded, err = xpcall(chunk, catcher(debug.getinfo(chunk, "S").source))
    if not loaded then report("fail", "(loading the test file)", err)
    else run_all(root, { filter = filter }, report) end
    if cases then
      print('<testsuite name="' .. escape_xml(id) .. '" tests="' .. counts.tests .. '" failures="' ..
            counts.failed .. '" skipped="' .. counts.pending .. '">')
      for _, line in ipairs(cases) do print(line) end
      print("</testsuite>")
    end
    return counts
  end
end
