-- The gateway: mints identities and runs work as them (see app.yaml). Each step logs its
-- result; the spec compares them.
local function result(case, got) logger.info("result", { case = case, got = tostring(got) }) end

-- Waits for the EXIT of a process spawned monitored (the handler's reports come before it).
local function wait_exit(pid)
  if pid then channel.select { process.events():case_receive(), time.after(10):case_receive() } end
end

local function run_as(actor, scope, tag, mode)
  local pid, err = process.with_context({ actor = actor, scope = scope }):spawn_monitored("handler", nil, tag, mode)
  result(tag .. ".spawned", err or "ok")
  wait_exit(pid)
end

return function()
  -- minting: actors and scopes it may hand out
  local alice = assert(security.new_actor("user:alice", { role = "admin", teams = { "ops", "billing" } }))
  local bob = assert(security.new_actor("user:bob", { role = "user" }))
  local roles = assert(security.named_scope("order_roles"))
  result("mint.alice", alice)
  result("mint.alice_id", alice:id())
  result("mint.alice_teams", table.concat(alice:meta().teams, ","))
  result("mint.roles", table.concat(roles:policies(), ","))
  local m = alice:meta()
  m.role = "user" -- a copy: the actor is unchanged
  result("mint.meta_copy", roles:evaluate(alice, "delete", "orders"))

  -- evaluate and can as someone else
  result("eval.admin_delete", roles:evaluate(alice, "delete", "orders"))
  result("eval.user_delete", roles:evaluate(bob, "delete", "orders"))
  result("eval.user_read", roles:evaluate(bob, "read", "orders"))
  result("can.admin_delete", security.can("delete", "orders", nil, { actor = alice, scope = roles }))
  result("can.user_delete", security.can("delete", "orders", nil, { actor = bob, scope = roles }))
  result("can.own_delete", security.can("delete", "orders"))

  -- refused: an actor it may not impersonate (a deny policy decides), a policy it may not
  -- hand out, ids that name nothing, bad arguments
  result("refuse.root", select(2, security.new_actor("root:admin")))
  result("refuse.other", select(2, security.new_actor("svc:other")))
  result("refuse.scope", select(2, security.new_scope { "orders_read", "root_everything" }))
  result("refuse.ghost", select(2, security.new_scope { "ghost" }))
  result("refuse.ghosts", select(2, security.named_scope("ghosts")))
  result("refuse.meta", select(2, pcall(security.new_actor, "user:x", { f = print })))
  result("refuse.id", select(2, pcall(security.new_actor, 42)))

  -- acting as someone: the handler checks security.can("delete", "orders") for its user
  local user_scope = assert(security.new_scope { "orders_read", "orders_admin", "spawn_handler" })
  run_as(alice, roles, "admin")
  run_as(bob, roles, "user")
  run_as(bob, user_scope, "inherit", "parent")
  local fn = process.with_context { actor = alice, scope = roles }
  local who, can_delete = fn:call("whoami")
  result("call.whoami", who)
  result("call.delete", can_delete)

  -- actors and scopes in messages
  local pid = assert(process.with_context({ actor = bob, scope = assert(security.new_scope { "orders_read" }) })
    :spawn_monitored("receiver"))
  local forged = setmetatable({ id = "user:root" }, { __index = { id = function() return "user:root" end } })
  result("send.values", process.send(pid, "values", alice, roles, forged))
  wait_exit(pid)

  -- tokens
  local ts = assert(security.token_store("tokens"))
  local admin_tok = assert(ts:create(alice, roles))
  local user_tok = assert(ts:create(bob, roles))
  result("token.length", #admin_tok)
  result("token.distinct", admin_tok ~= user_tok)
  local a, s = ts:validate(admin_tok)
  result("token.admin_actor", a and a:id())
  result("token.admin_delete", s and s:evaluate(a, "delete", "orders"))
  run_as(a, s, "token_admin")
  a, s = ts:validate(user_tok)
  run_as(a, s, "token_user")
  result("token.revoke", ts:revoke(user_tok))
  result("token.revoked", select(2, ts:validate(user_tok)))
  result("token.revoke_again", ts:revoke(user_tok))
  result("token.unknown", select(2, ts:validate(("A"):rep(32))))
  result("token.garbage", select(2, ts:validate("not a token")))
  result("token.still_admin", (ts:validate(admin_tok)) ~= nil)
  result("token.no_store", select(2, security.token_store("nope")))
  result("token.bad_ttl", select(2, pcall(ts.create, ts, alice, roles, { ttl = -1 })))
  result("token.not_actor", select(2, pcall(ts.create, ts, { id = "user:root" }, roles)))
  -- expiry: the short store's own ttl, and a ttl given to create
  local short = assert(security.token_store("short"))
  local t1 = assert(short:create(alice, roles))
  local t2 = assert(ts:create(alice, roles, { ttl = "300ms" }))
  result("expiry.fresh", (short:validate(t1)) ~= nil and (ts:validate(t2)) ~= nil)
  result("expiry.full_or_not", select(2, short:create(alice, roles)) or "ok")
  result("expiry.full", select(2, short:create(alice, roles)))
  time.sleep("700ms")
  result("expiry.short", select(2, short:validate(t1)))
  result("expiry.ttl", select(2, ts:validate(t2)))
  result("expiry.room_again", (short:create(alice, roles)) ~= nil)

  result("done", true)
end
