-- Runs as user:bob (spawned by the gateway with process.with_context) and gets, in one
-- message, an actor and a scope the gateway minted and a table made to look like an actor.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

return function()
  local msg = process.inbox():receive()
  local actor, scope, forged = msg:data()
  result("recv.actor", actor)                          -- "actor: user:alice": a real actor again
  result("recv.actor_id", actor:id())
  result("recv.actor_role", actor:meta().role)
  result("recv.scope_policies", table.concat(scope:policies(), ","))
  result("recv.evaluate", scope:evaluate(actor, "delete", "orders"))
  result("recv.can_as", security.can("delete", "orders", nil, { actor = actor, scope = scope }))
  result("recv.own", security.actor():id())
  result("recv.own_delete", security.can("delete", "orders"))
  -- the forged table is a table: nothing takes it for an actor
  result("recv.forged_type", type(forged))
  local ok, err = pcall(process.with_context, { actor = forged, scope = scope })
  result("recv.forged_with_context", not ok and err)
  ok, err = pcall(security.can, "delete", "orders", nil, { actor = forged })
  result("recv.forged_can", not ok and err)
  ok, err = pcall(scope.evaluate, scope, forged, "delete", "orders")
  result("recv.forged_evaluate", not ok and err)
  -- a real actor received does not let it act as that actor: it may not impersonate
  result("recv.with_context", select(2, process.with_context { actor = actor, scope = scope }))
  result("recv.mint", select(2, security.new_actor("user:mallory")))
  result("recv.scope", select(2, security.new_scope { "orders_read" }))
end
