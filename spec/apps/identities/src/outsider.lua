-- A service with a context but no right to mint or to use the token store.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

return function()
  result("outsider.new_actor", select(2, security.new_actor("user:alice")))
  result("outsider.named_scope", select(2, security.named_scope("order_roles")))
  local ts = assert(security.token_store("app:tokens"))
  result("outsider.validate", select(2, ts:validate(("A"):rep(32))))
  result("outsider.revoke", select(2, ts:revoke(("A"):rep(32))))
  -- entries registry.find leaves out were not refused calls: no audit event for them
  result("outsider.find", #registry.find({ kind = "registry.entry" }))
  result("done", true)
end
