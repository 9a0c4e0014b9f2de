-- Prints calls/s for each way of running the same trivial code in a fresh process; the best
-- of `rounds` rounds of n calls each.
local function best(rounds, n, f)
  local top = 0
  for _ = 1, rounds do
    local t0 = time.now()
    f(n)
    local rate = n / (time.now() - t0)
    if rate > top then top = rate end
  end
  return top
end

local function calls(n)
  for i = 1, n do assert(funcs.call("add_fn", i, 1) == i + 1) end
end

local function spawn_wait(n)
  local events = process.events()
  for i = 1, n do
    local pid = assert(process.spawn_monitored("add_proc", nil, i, 1))
    local ev = events:receive()
    assert(ev.from == pid and ev.result.value == i + 1)
  end
end

local function async_batch(n)
  local chans = {}
  for i = 1, n do chans[i] = funcs.async("add_fn", i, 1) end
  for i = 1, n do assert(chans[i]:receive().values[1] == i + 1) end
end

local function spawn_batch(n)
  local events = process.events()
  for i = 1, n do assert(process.spawn_monitored("add_proc", nil, i, 1)) end
  for _ = 1, n do assert(events:receive().kind == "exit") end
end

return function(n, rounds)
  n, rounds = tonumber(n) or 2000, tonumber(rounds) or 5
  print(("sequential (n=%d, best of %d)"):format(n, rounds))
  local base = best(rounds, n, spawn_wait)
  local fc = best(rounds, n, calls)
  print(("  spawn_monitored + EXIT  %9.0f calls/s  (baseline)"):format(base))
  print(("  funcs.call              %9.0f calls/s  (%.2fx)"):format(fc, fc / base))
  print(("batch of %d in flight"):format(n))
  local sb = best(rounds, n, spawn_batch)
  local ab = best(rounds, n, async_batch)
  print(("  spawn_monitored batch   %9.0f calls/s  (baseline)"):format(sb))
  print(("  funcs.async batch       %9.0f calls/s  (%.2fx)"):format(ab, ab / sb))
end
