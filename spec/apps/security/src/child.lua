-- Spawned by a service: reports its inherited context and spawns the next level.
return function(tag)
  local a = security.actor()
  print(("child-%s actor=%s can_any=%s"):format(tag, a and a:id() or "nil", tostring(security.can("anything.at.all", "thing:1"))))
  local pid, err = process.spawn_monitored("grandchild", nil, tag)
  print(("child-%s spawn_grandchild=%s %s"):format(tag, type(pid), tostring(err)))
  if pid then channel.select { process.events():case_receive(), time.after(5):case_receive() } end
end
