-- Holds the name victim_box and reports whatever reaches it: a lost name, an event (a cancel,
-- a link's failure, a monitor), a message. A kill ends it (the supervisor restarts it and logs
-- that); a cancel ends it. It registers its name twice: the second time is a no-op that returns true.
local function out(...) print(table.concat({ "victim", ... }, " ")) end

return function()
  local me = process.pid()
  out("register=" .. tostring(process.registry.register("victim_box")))
  out("reregister=" .. tostring(process.registry.register("victim_box")), "pid=" .. me)
  process.ready()
  process.set_options({ trap_links = true })
  local events, inbox = process.events(), process.inbox()
  while true do
    local r = channel.select({ events:case_receive(), inbox:case_receive(), default = true })
    if r.channel == events then
      out("event=" .. tostring(r.value.kind), "from=" .. tostring(r.value.from))
      if r.value.kind == process.event.CANCEL then return end -- the shutdown's, or a stolen one
    end
    if r.channel == inbox then out("message=" .. r.value:topic()) end
    if process.registry.lookup("victim_box") ~= me then out("lost name") return end
    time.sleep("10ms")
  end
end
