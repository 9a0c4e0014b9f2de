local function out(...) print(table.concat({ "worker", ... }, " ")) end

return function()
  out("can_any=" .. tostring(security.can("anything.at.all", "thing:1")))
  out("doc_own=" .. tostring(security.can("doc.write", "doc:1", { owner = "svc:worker" })),
      "doc_other=" .. tostring(security.can("doc.write", "doc:1", { owner = "svc:admin" })),
      "doc_nometa=" .. tostring(security.can("doc.write", "doc:1")))
  -- the call's meta, read in place: lists, strings and nested tables
  local function can(action, meta) return tostring(security.can(action, "x", meta)) end
  out("contains_list=" .. can("job.tagged", { tags = { "low", "urgent" } }),
      "contains_miss=" .. can("job.tagged", { tags = { "low" } }),
      "contains_str=" .. can("job.tagged", { tags = "urgently" }),
      "contains_num=" .. can("job.tagged", { tags = 5 }))
  out("nested=" .. can("job.nested", { req = { level = 3 } }),
      "nested_low=" .. can("job.nested", { req = { level = 1 } }),
      "nested_str=" .. can("job.nested", { req = { level = "3" } }),
      "nested_flat=" .. can("job.nested", { req = 3 }),
      "nested_fn=" .. can("job.nested", { req = { level = print } }))
  -- S10: the module is read-only, and the host's own checks still deny
  local ok, err = pcall(function() security.can = function() return true end end)
  out("s10_write=" .. tostring(ok), "err=" .. tostring(err))
  out("s10_can=" .. tostring(security.can("anything.at.all", "thing:1")))
  local _, serr = process.spawn("other")
  out("s10_spawn_other=" .. tostring(serr))
  -- S12: the actor's meta is a copy
  local m = security.actor():meta()
  m.role = "admin"
  out("s12_can=" .. tostring(security.can("anything.at.all", "thing:1")), "s12_role=" .. security.actor():meta().role)
  out("team=" .. security.actor():meta().team.name)
  -- guarded calls: allowed and denied
  local e, gerr = registry.get("app:public_settings")
  out("get_public=" .. tostring(e and e.data.data.color), tostring(gerr))
  e, gerr = registry.get("app:secret_settings")
  out("get_secret=" .. tostring(e), tostring(gerr))
  e, gerr = registry.get("app:no_such_entry")
  out("get_missing=" .. tostring(e), tostring(gerr))
  local found = {}
  for _, x in ipairs(registry.find({ kind = "registry.entry" })) do found[#found + 1] = x.id end
  out("find=" .. table.concat(found, ","))
  process.registry.register("worker_box")
  out("send_box=" .. tostring(process.send("worker_box", "hi")))
  local sok, sendr = process.send(process.pid(), "hi")
  out("send_pid=" .. tostring(sok), tostring(sendr))
  out("spawn_missing=" .. tostring(select(2, process.spawn("no_such_process"))))
  local pid, cerr = process.spawn_monitored("child", nil, "worker")
  out("spawn_child=" .. type(pid), tostring(cerr))
  -- a service's run ends with its tree (docs/supervision.md): wait for the child's report
  if pid then channel.select { process.events():case_receive(), time.after(5):case_receive() } end
  out("done")
end
