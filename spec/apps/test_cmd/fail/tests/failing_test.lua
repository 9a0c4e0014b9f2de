describe("failures", function()
  it("passes", function() assert.are.equal(1, 1) end)

  it("compares tables", function()
    assert.are.same({ name = "ann", tags = { "a" } }, { name = "bob", tags = { "a" } })
  end)

  it("raises", function() error("boom") end)
end)
