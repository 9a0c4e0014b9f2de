-- Two levels below a service: the same context, the same guards.
return function(tag)
  local a = security.actor()
  local _, err = process.spawn("other")
  local e, gerr = registry.get("app:secret_settings")
  print(("grandchild-%s actor=%s can_any=%s doc_own=%s spawn_other=%s get_secret=%s"):format(tag,
    a and a:id() or "nil", tostring(security.can("anything.at.all", "thing:1")),
    tostring(security.can("doc.read", "doc:9", { owner = a and a:id() })), tostring(err), tostring(e and "entry" or gerr)))
end
