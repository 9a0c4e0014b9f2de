-- POST /login {"user": "alice"} -> {token, user, role}: a token of shop:sessions for a user of
-- the demo list. There is no password: a real app checks credentials here (its user database,
-- an identity provider) before minting anything.
local USERS = { alice = "admins", bob = "customers" }

return function(req)
  local body = req:json()
  local name = type(body) == "table" and body.user or nil
  local role = USERS[name]
  if not role then return { status = 401, body = { error = "unknown user (try alice or bob)" } } end
  -- Each of these is guarded: this router's identity may mint user:* actors, hand out the two
  -- role groups and create tokens; nothing else may.
  local actor = assert(security.new_actor("user:" .. name, { role = role }))
  local scope = assert(security.named_scope(role))
  local token = assert(assert(security.token_store("sessions")):create(actor, scope))
  return { body = { token = token, user = actor:id(), role = role } }
end
