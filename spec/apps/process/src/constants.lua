local t = require("t")
return function()
  local e = process.event
  print(type(e.EXIT), type(e.LINK_DOWN), type(e.CANCEL))
  print(e.EXIT ~= e.LINK_DOWN, e.EXIT ~= e.CANCEL, e.LINK_DOWN ~= e.CANCEL)
  print(e.EXIT, e.LINK_DOWN, e.CANCEL)
  print(e.NOPE)
  -- require returns the same table
  print(require("process") == process, require("process").event == e)
  -- every function of the module is there
  local names = {}
  for _, n in ipairs { "pid", "spawn", "spawn_monitored", "spawn_linked", "spawn_linked_monitored", "send",
                       "inbox", "events", "cancel", "terminate", "monitor", "unmonitor", "link", "unlink",
                       "set_options", "ready" } do
    if type(process[n]) ~= "function" then names[#names + 1] = n end
  end
  for _, n in ipairs { "register", "lookup", "unregister" } do
    if type(process.registry[n]) ~= "function" then names[#names + 1] = "registry." .. n end
  end
  print("missing: " .. table.concat(names, ","))
  -- ready() outside a service does nothing, and says so with true
  print(process.ready(), process.ready())
end
