-- Prints fs.read calls/s of bench:tmp:<file> (4 KB): sequential, then `batch` tasks at once;
-- the best of `rounds` rounds of n reads each.
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

return function(file, n, rounds, batch)
  n, rounds, batch = tonumber(n) or 20000, tonumber(rounds) or 5, tonumber(batch) or 64
  local path = "bench:tmp:" .. file
  local seq = best(rounds, n, function(k)
    for _ = 1, k do assert(#fs.read(path) == 4096) end
  end)
  local par = best(rounds, n, function(k)
    local done = channel.new(batch)
    for t = 1, batch do
      coroutine.spawn(function()
        for _ = t, k, batch do assert(#fs.read(path) == 4096) end
        done:send(true)
      end)
    end
    for _ = 1, batch do done:receive() end
  end)
  print(("fs.read  sequential        %9.0f reads/s"):format(seq))
  print(("fs.read  %3d tasks at once %9.0f reads/s"):format(batch, par))
end
