-- Only policy: deny * on *. Tries each call that acts on another process or on a name, on the
-- victim's name and on every guessable pid but its own, and prints what each returned.
local function out(...) print(table.concat({ "thief", ... }, " ")) end

local function try(what, target, ...)
  local ok, err = ...
  out(what .. " " .. target .. " " .. tostring(ok) .. " " .. tostring(err))
end

return function()
  local me = process.pid()
  local reg = process.registry
  try("lookup", "victim_box", reg.lookup("victim_box"))
  try("unregister", "victim_box", reg.unregister("victim_box"))
  try("register", "victim_box", reg.register("victim_box"))
  try("register", "thief_box", reg.register("thief_box")) -- on itself: checked too
  for i = 1, 12 do
    local pid = ("host|0x%04x"):format(i)
    if pid ~= me then
      try("monitor", pid, process.monitor(pid))
      try("link", pid, process.link(pid))
      try("cancel", pid, process.cancel(pid, "stolen"))
      try("terminate", pid, process.terminate(pid))
    end
  end
  try("terminate", "victim_box", process.terminate("victim_box"))
  try("cancel", "victim_box", process.cancel("victim_box"))
  try("monitor", "victim_box", process.monitor("victim_box"))
  try("link", "victim_box", process.link("victim_box"))
  out("done")
end
