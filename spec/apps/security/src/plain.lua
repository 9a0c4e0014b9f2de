-- A service with no actor: every check follows strict mode (rows 35/36).
return function(tag)
  tag = tag or "plain"
  local a = security.actor()
  local pid, err = process.spawn("other")
  local e = registry.get("app:secret_settings")
  print(("%s can=%s check=%s actor=%s spawn=%s get_secret=%s"):format(tag,
    tostring(security.can("anything.at.all", "thing:1")), security.check("anything.at.all", "thing:1"),
    tostring(a), pid and "ok" or tostring(err), e and "ok" or "nil"))
  print(tag .. " done")
end
