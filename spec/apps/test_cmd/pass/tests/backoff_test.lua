local backoff = require("backoff")

describe("backoff with virtual time", function()
  local started

  before_each(function()
    started = time.freeze()
  end)

  it("waits 0.1, 0.2 and 0.4 s of virtual time between attempts, without sleeping", function()
    local real0 = os.clock()
    local result, attempts
    coroutine.spawn(function()
      result, attempts = backoff.retry(function(n)
        if n < 4 then error("not yet") end
        return "done"
      end, { initial = 0.1, factor = 2 })
    end)
    time.advance("0.29s")
    assert.is_nil(result) -- 0.1 + 0.2 = 0.3 s not reached yet
    time.advance("0.41s")
    assert.are.equal("done", result)
    assert.are.equal(4, attempts)
    assert.is_true(math.abs(time.now() - started - 0.7) < 1e-9)
    assert.is_true(os.clock() - real0 < 0.5)
  end)

  it("ticks a ticker once per period crossed", function()
    local ticker = time.ticker("1s")
    local ticks = 0
    coroutine.spawn(function()
      while ticker:channel():receive() do ticks = ticks + 1 end
    end)
    for _ = 1, 3 do time.advance("1s") end
    ticker:stop()
    assert.are.equal(3, ticks)
  end)

  pending("jitter")
end)
