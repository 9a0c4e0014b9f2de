local t = require("t")
-- link/unlink errors, unlink before a failure, a failing A taking its linked B along.
return function()
  local me = process.pid()
  -- link to ourselves, to a dead pid, to a name nobody holds
  print(process.link(me))
  local gone = process.spawn_monitored("child", nil, me, "ret")
  t.event()
  print(process.link(gone))
  print(process.link("nobody"))
  t.barrier()
  print(t.poll(process.events()))
  -- unlink before B fails: we live
  local b = process.spawn_linked_monitored("child", nil, me, "wait")
  t.expect("up")
  print(process.unlink(b))
  process.send(b, "fail", "B broke")
  print(t.event_text(t.event(), { [b] = "B" }))
  t.barrier()
  print("alive after unlinked failure")
  -- unlink of something not linked is fine
  print(process.unlink(b), process.unlink("nobody"))
  -- the link works both ways: A fails, its linked B dies with a reason naming A
  local a = process.spawn_monitored("child", nil, me, "link_pair")
  local pa, pb = t.expect("pair"):data()
  t.expect("up")
  process.monitor(pb)
  process.send(pa, "fail", "A broke")
  local names = { [pa] = "A", [pb] = "B" }
  local lines = {}
  for _ = 1, 2 do
    local ev = t.event()
    local err = t.line(ev.result.error):gsub(pa, "A")
    lines[#lines + 1] = names[ev.from] .. ": " .. err
  end
  table.sort(lines)
  for _, l in ipairs(lines) do print(l) end
  -- set_options wants a table
  local ok, e = pcall(function() local r = process.set_options("trap") return r end)
  print(ok, (e:gsub("^.-: ", "")))
end
