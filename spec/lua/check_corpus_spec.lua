-- `steward check` over the registry corpus. Every directory under spec/corpus/bad is a malformed
-- app: check exits 2, prints nothing on stdout, and prints on stderr exactly its expected.txt
-- (every error, sorted, once, then the count). Every directory under spec/corpus/good loads:
-- check exits 0 and prints its expected.txt; where a graph.txt exists, `graph` prints it (the
-- order of services there is the load order: sorted paths, then order within a file).
local h = require("spec.lua.steward_helper")

local BAD, GOOD = "spec/corpus/bad", "spec/corpus/good"

describe("steward check on malformed registries", function()
  local cases = h.list(BAD)

  it("has a corpus of at least 45 cases", function()
    assert.is_true(#cases >= 45, "only " .. #cases .. " cases in " .. BAD)
  end)

  for _, name in ipairs(cases) do
    local dir = BAD .. "/" .. name
    it(name, function()
      assert.is_true(h.exists(dir .. "/expected.txt"), dir .. "/expected.txt is missing")
      local r = h.run("check", dir)
      assert.are.equal(h.read(dir .. "/expected.txt"), r.stderr)
      assert.are.equal("", r.stdout)
      assert.are.equal(2, r.code)
    end)
  end
end)

describe("steward check on valid registries", function()
  for _, name in ipairs(h.list(GOOD)) do
    local dir = GOOD .. "/" .. name
    it(name, function()
      local r = h.run("check", dir)
      assert.are.equal("", r.stderr)
      assert.are.equal(h.read(dir .. "/expected.txt"), r.stdout)
      assert.are.equal(0, r.code)
      if h.exists(dir .. "/graph.txt") then
        local g = h.run("graph", dir)
        assert.are.equal(h.read(dir .. "/graph.txt"), g.stdout)
        assert.are.equal(0, g.code)
      end
    end)
  end
end)
