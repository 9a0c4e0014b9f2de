describe("never runs", function() it("needs crash", function() end) end)
