-- Line echo: listens on addr, sends {addr} to parent as "addr", then serves each connection
-- in its own task until the peer closes. The line "stats" is answered with the number of
-- connections open now and at most so far; "quit" ends the server.
return function(addr, parent)
  local l, err = net.listen(addr)
  if not l then
    process.send(parent, "addr", nil, err)
    return
  end
  process.send(parent, "addr", l:addr())
  local active, most = 0, 0
  local done = channel.new()
  local function serve(c)
    active = active + 1
    if active > most then most = active end
    while true do
      local line, rerr = c:read_line()
      if not line then break end
      if line == "stats" then line = "active=" .. active .. " most=" .. most end
      if line == "quit" then done:send(true) end
      local ok = c:write(line .. "\n")
      if not ok then break end
    end
    active = active - 1
    c:close()
  end
  coroutine.spawn(function()
    while true do
      local c = l:accept()
      if not c then return end
      coroutine.spawn(serve, c)
    end
  end)
  done:receive()
  l:close()
end
