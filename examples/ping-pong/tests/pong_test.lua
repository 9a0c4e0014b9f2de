-- pong, tested with the real service running: `steward test examples/ping-pong`.
describe("pong", function()
  it("answers a ping with a pong carrying the same payload", function()
    assert.is_true(process.send("pong", "ping", { n = 7, tags = { "x" } }))
    local reply = process.inbox():receive()
    assert.are.equal("pong", reply:topic())
    assert.are.same({ n = 7, tags = { "x" } }, reply:data())
  end)

  it("answers pings in the order they were sent", function()
    for i = 1, 3 do process.send("pong", "ping", i) end
    for i = 1, 3 do assert.are.equal(i, process.inbox():receive():data()) end
  end)
end)
