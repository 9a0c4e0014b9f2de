-- Not guarded (no lifecycle.security): may look the victim's name up, but may neither take it
-- nor release it, since it does not hold it.
local function out(...) print(table.concat({ "greedy", ... }, " ")) end

return function()
  local pid = process.registry.lookup("victim_box")
  out("lookup=" .. tostring(pid))
  local ok, err = process.registry.unregister("victim_box")
  out("unregister=" .. tostring(ok), tostring(err))
  ok, err = process.registry.register("victim_box")
  out("register=" .. tostring(ok), tostring(err))
  out("still=" .. tostring(process.registry.lookup("victim_box") == pid))
  out("done")
  process.ready()
end
