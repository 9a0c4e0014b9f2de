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
    local where
    for level = 2, 60 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == source and info.currentline > 0 then
        where = info.short_src .. ":" .. info.currentline
        break
      end
    end
    local message = type(err) == "table" and tostring(err.message or err) or tostring(err)
    if where and message:sub(1, #where + 2) == where .. ": " then message = message:sub(#where + 3) end
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
