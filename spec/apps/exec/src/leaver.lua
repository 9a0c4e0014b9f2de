-- Holds a spawned command, a command exec.run waits for, an open file and one being read,
-- then tells its parent and waits, ignoring its CANCEL, until the host kills it.
return function(parent)
  local h = assert(exec.spawn { cmd = { "sh", "-c", "echo $$ >spawned; exec sleep 60" }, cwd = "exec:work:" })
  coroutine.spawn(function()
    exec.run { cmd = { "sh", "-c", "echo $$ >ran; exec sleep 60" }, cwd = "exec:work:" }
  end)
  local f = assert(fs.open("exec:work:held", "w"))
  coroutine.spawn(function() fs.read("exec:work:held") end)
  while not (fs.stat("exec:work:spawned") and fs.stat("exec:work:ran")) do time.sleep("10ms") end
  time.sleep("20ms")
  process.send(parent, "ready", h:pid())
  process.inbox():receive() -- never comes
end
