-- Conformance with plain LuaJIT (docs/lua-api.md "The sandbox"): spec/apps/runtime/conformance
-- runs a Lua 5.1 test-suite subset (strings, patterns, tables, calls, metatables, errors with
-- their file:line, coroutines, streaming load) and 1,800 generated pattern cases inside a
-- process; the same file under plain luajit must print the same, section by section.
local rt = require("spec.lua.runtime_helper")
local h = require("spec.lua.steward_helper")

local APP = rt.APPS .. "/conformance"
local SCRIPT = APP .. "/src/suite.lua"

local function sections(s)
  local t, order, cur = {}, {}, nil
  for line in (s .. "\n"):gmatch("(.-)\n") do
    local name = line:match("^== (.+)$")
    if name then cur = name; t[cur] = {}; order[#order + 1] = name elseif cur then table.insert(t[cur], line) end
  end
  return t, order
end

-- The first differing line of two sections, for a readable failure.
local function first_difference(a, b)
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      return ("line %d:\n  luajit:  %s\n  process: %s"):format(i, tostring(a[i]), tostring(b[i]))
    end
  end
end

describe("conformance with plain luajit", function()
  local plain, inside, order

  setup(function()
    local r = rt.ok(rt.run("conformance", "conf:suite", {}, { limit = 60 }))
    inside = sections(r.stdout)
    local out = os.tmpname()
    os.execute("luajit -e " .. h.quote("dofile('" .. SCRIPT .. "')()") .. " >" .. out .. " 2>&1")
    plain, order = sections(h.read(out))
    os.remove(out)
  end)

  it("prints every section", function()
    assert.are.same({ "strings", "patterns", "tables", "calls", "metatables", "errors", "coroutines", "load",
                      "generated patterns" }, order)
  end)

  for _, name in ipairs({ "strings", "patterns", "tables", "calls", "metatables", "errors", "coroutines", "load",
                          "generated patterns" }) do
    it(name .. " match", function()
      assert.is_truthy(inside[name], "no section " .. name)
      local diff = first_difference(plain[name], inside[name])
      assert.is_nil(diff, name .. " differs at " .. tostring(diff))
    end)
  end

  it("runs enough generated pattern cases to mean something", function()
    local n = 0
    for _, line in ipairs(inside["generated patterns"]) do n = n + (line:match("^%d+%.%d ") and 1 or 0) end
    assert.are.equal(1800, n)
  end)
end)
