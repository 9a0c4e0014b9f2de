-- A process killed with sockets open, step by step so the spec can count the host's open fds
-- between steps. The spec talks over the unix socket at ctl_path; each request is one line,
-- each answer one line, then this side closes the request's connection.
--   open: spawn a holder with a listener, 5 connections to it from here (accepted there) and 3
--         of its own to itself; answer "opened <sockets it holds>"
--   kill: terminate it; answer "eof" and what each of our 5 connections then reads
--   quit: answer "bye" and return
return function(ctl_path)
  local ctl = assert(net.listen("unix://" .. ctl_path))
  print("ready")
  local inbox = process.inbox()
  local holder, clients = nil, {}
  while true do
    local c = assert(ctl:accept())
    local cmd = c:read_line()
    if cmd == "open" then
      holder = process.spawn("holder_many", nil, process.pid())
      local msg = inbox:receive()
      local addr = msg:data()
      for i = 1, 5 do clients[i] = assert(net.connect(addr)) end
      local held = inbox:receive():data()
      c:write("opened " .. held .. "\n")
    elseif cmd == "kill" then
      process.terminate(holder)
      local seen = {}
      for i, conn in ipairs(clients) do
        local v, err = conn:read(1, "5s")
        seen[#seen + 1] = tostring(v) .. "," .. tostring(err)
        conn:close()
      end
      c:write("eof " .. table.concat(seen, " ") .. "\n")
    else
      c:write("bye\n")
      c:close()
      return
    end
    c:close()
  end
end
