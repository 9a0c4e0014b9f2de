-- A process killed with files open, step by step so the spec can count the host's open fds
-- between steps. Each request is one line over the unix socket at ctl_path, answered by one:
--   open: spawn a holder with 20 open files; answer "opened <n>"
--   kill: terminate it; answer "killed"
--   quit: answer "bye" and return
return function(ctl_path)
  local ctl = assert(net.listen("unix://" .. ctl_path))
  assert(fs.mkdir("fs:data:held", { parents = true }))
  print("ready")
  local holder
  while true do
    local c = assert(ctl:accept())
    local cmd = c:read_line()
    if cmd == "open" then
      holder = process.spawn("holder", nil, 20, process.pid())
      c:write("opened " .. process.inbox():receive():data() .. "\n")
    elseif cmd == "kill" then
      process.terminate(holder)
      c:write("killed\n")
    else
      c:write("bye\n")
      c:close()
      return
    end
    c:close()
  end
end
