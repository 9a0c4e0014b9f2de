-- Many calls: 1,000 one after the other, then 100 at once; every one counted.
return function(sequential, concurrent)
  sequential, concurrent = tonumber(sequential) or 1000, tonumber(concurrent) or 100
  local sum, ok = 0, 0
  for i = 1, sequential do
    local v = funcs.call("add", i, 1)
    if v == i + 1 then ok = ok + 1 end
    sum = sum + v
  end
  print("sequential", ok, sum)
  local chans = {}
  for i = 1, concurrent do chans[i] = funcs.async("add", i, 0) end
  local got, total = 0, 0
  for i = 1, concurrent do
    local r = chans[i]:receive()
    if r.error == nil and r.values[1] == i then got = got + 1 end
    total = total + r.values[1]
  end
  print("concurrent", got, total)
  -- and from tasks: each blocks only itself
  local done = channel.new(concurrent)
  for i = 1, concurrent do
    coroutine.spawn(function() done:send(funcs.call("add", i, 0)) end)
  end
  local tsum = 0
  for _ = 1, concurrent do tsum = tsum + done:receive() end
  print("tasks", tsum)
end
