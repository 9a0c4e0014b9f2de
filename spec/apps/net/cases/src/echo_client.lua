-- Makes `trips` round trips to the echo server at addr, then sends parent the count that came
-- back right.
return function(addr, trips, parent)
  local c = assert(net.connect(addr))
  local ok = 0
  for i = 1, trips do
    c:write(i .. "\n")
    if c:read_line("10s") == tostring(i) then ok = ok + 1 end
    if i % 50 == 0 then time.sleep(0) end
  end
  c:close()
  process.send(parent, "done", ok)
end
