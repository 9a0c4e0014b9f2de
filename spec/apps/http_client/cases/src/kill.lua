-- A process killed mid-request, step by step so the spec can count the host's open fds between
-- steps. The spec talks over the unix socket at ctl_path; each request is one line, each answer
-- one line, then this side closes the request's connection.
--   warm: one request of our own (curl and the worker's multi are set up), answer "warm STATUS"
--   open: spawn a requester asking /never; answer "asked" once the responder has its request
--   kill: terminate the requester; answer "gone" once the responder saw its connection close
--   quit: answer "bye" and return
return function(ctl_path)
  local ctl = assert(net.listen("unix://" .. ctl_path))
  process.spawn("responder", nil, process.pid())
  local inbox = process.inbox()
  local base = inbox:receive():data()
  print("ready")
  local requester
  while true do
    local c = assert(ctl:accept())
    local cmd = c:read_line()
    if cmd == "warm" then
      local r = assert(http.get(base .. "/hello"))
      c:write("warm " .. r.status .. "\n")
    elseif cmd == "open" then
      requester = process.spawn("requester", nil, base .. "/never", process.pid())
      c:write(inbox:receive():topic() .. "\n")
    elseif cmd == "kill" then
      process.terminate(requester)
      local m = inbox:receive()
      c:write((m and m:topic() or "no word") .. "\n")
    else
      c:write("bye\n")
      c:close()
      return
    end
    c:close()
  end
end
