-- Hardening of the sandbox's builtins, end to end on spec/apps/runtime/builtins: out of
-- memory inside a builtin.
local rt = require("spec.lua.runtime_helper")

local APP = "builtins"

local function case(name, limit)
  return rt.ok(rt.run(APP, "bi:run", { name }, { limit = limit or 10 })).stdout
end

describe("builtins", function()
  it("out of memory inside tostring, string.sub/upper/lower/reverse/char fails the process, not the host", function()
    -- 50 processes per builtin at limits.memory 1MB, each running out inside the builtin in
    -- a different code shape (LuaJIT's fast functions crashed the host on some of them)
    local r = rt.run(APP, "bi:oom", { 50 }, { limit = 60 })
    assert.is_false(r.hung)
    assert.are.equal(0, r.code, "host exit code " .. tostring(r.code) .. "\n" .. r.stderr)
    assert.are.equal("tostring\t50\nsub\t50\nupper\t50\nlower\t50\nreverse\t50\nchar\t50\n", r.stdout)
  end)
end)
