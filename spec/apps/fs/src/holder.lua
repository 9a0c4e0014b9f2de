-- Opens n files (and one read in flight on each of two more tasks' files), tells its parent
-- how many it holds, then waits to be killed.
return function(n, parent)
  local files = {}
  for i = 1, n do files[i] = assert(fs.open(("fs:data:held/%d.txt"):format(i), "w+")) end
  assert(files[1]:write("some bytes"))
  process.send(parent, "held", n)
  process.inbox():receive() -- never comes
end
