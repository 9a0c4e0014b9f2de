describe("broken", function()
  it("does not compile", function() local x = = 1 end)
end)
