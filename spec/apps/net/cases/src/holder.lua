-- Opens a listener and a connection to `to`, reports {its listener's address} to parent as
-- "ready", then ends as `how` says, its sockets still open: "return", "error", "kill" (waits
-- to be terminated) or "link" (a linked process fails).
return function(how, to, parent)
  local l = assert(net.listen("tcp://127.0.0.1:0"))
  local c = assert(net.connect(to))
  if how == "link" then process.spawn_linked("crasher") end
  process.send(parent, "ready", l:addr())
  if how == "error" then error("holder fails") end
  if how == "kill" or how == "link" then c:read(1) end -- blocks: the peer writes nothing
  return true
end
