-- Randomness (docs/lua-api.md): each process's math.random starts from a seed drawn from the
-- OS, so processes and runs never share a sequence; math.randomseed(n) makes one
-- deterministic. (Restart jitter uses the host's own OS-seeded generator: supervisor specs.)
local rt = require("spec.lua.runtime_helper")

local function draws(...)
  local out = rt.ok(rt.run("random", "rnd:run", { ... })).stdout
  local a, b = out:match("^([^\n]+)\n([^\n]+)\n$")
  assert(a and b, out)
  return a, b
end

describe("math.random", function()
  it("differs between two processes and between two runs", function()
    local a1, b1 = draws()
    local a2, b2 = draws()
    assert.are_not.equal(a1, b1)
    assert.are_not.equal(a1, a2)
    assert.are_not.equal(b1, b2)
  end)

  it("math.randomseed(n) makes a process deterministic", function()
    local a1, b1 = draws("42")
    local a2 = draws("42")
    assert.are.equal(a1, b1)
    assert.are.equal(a1, a2)
  end)
end)
