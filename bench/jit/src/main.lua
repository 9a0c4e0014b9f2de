-- Runs one workload (args: name, size) and prints its time in seconds (bench/jit.sh runs the
-- same files in plain luajit).
return function(name, size)
  local work = require(name)
  local t0 = time.now()
  work(tonumber(size))
  print(time.now() - t0)
end
