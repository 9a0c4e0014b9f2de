-- Identities made at run time end to end (docs/security.md "Identities at run time", issue 14
-- items 1-5 and 7): minting actors and scopes and who may, scope:evaluate and security.can as
-- someone else, process.with_context for spawn and funcs.call (inheritance included), actors
-- and scopes in messages (a forged table is just a table), token stores (create, validate,
-- revoke, expiry, the store's bound), the guards of token operations, and the audit log with
-- its limiter. Runs `steward run spec/apps/identities --log-format json` once (strict mode):
-- every result is an event {msg = "result", case = ..., got = ...}; see app.yaml for the story.
local C = require("spec.lua.control_helper")
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/identities"
local SERVICES = { "app:gateway", "app:outsider", "app:nocontext", "app:storm" }

describe("identities at run time", function()
  local host, events, results

  setup(function()
    host = C.launch({ dir = APP }) -- its own control socket: runs in two build trees never meet
    events = host:wait("every service's done", function(ev)
      local done = 0
      for _, e in ipairs(ev) do
        if e.msg == "service state" and e.state == "stopped" then
          for _, s in ipairs(SERVICES) do done = done + (e.service == s and 1 or 0) end
        end
      end
      return done == #SERVICES and ev
    end)
    host:stop()
    results = {}
    for _, e in ipairs(events) do
      if e.msg == "result" then results[e.case] = e.got end
    end
  end)

  teardown(function() if host then host:cleanup() end end)

  local function got(case, want)
    assert(results[case] ~= nil, "no result " .. case .. "\n" .. host:log_text())
    assert.are.equal(want, results[case], case)
  end

  -- The events of msg (an audit message) matching every field of pattern.
  local function audits(msg, pattern)
    local out = {}
    for _, e in ipairs(events) do
      local hit = e.msg == msg
      for k, v in pairs(pattern) do hit = hit and e[k] == v end
      if hit then out[#out + 1] = e end
    end
    return out
  end

  it("mints actors and scopes the minter may hand out", function()
    got("mint.alice", "actor: user:alice")
    got("mint.alice_id", "user:alice")
    got("mint.alice_teams", "ops,billing")
    got("mint.roles", "app:orders_admin,app:orders_read")
    got("mint.meta_copy", "allow") -- changing :meta()'s copy changes nothing
  end)

  it("evaluates a scope for an actor, and security.can as someone else", function()
    got("eval.admin_delete", "allow")
    got("eval.user_delete", "undefined")
    got("eval.user_read", "allow")
    got("can.admin_delete", "true")
    got("can.user_delete", "false")
    got("can.own_delete", "false") -- the gateway itself may not delete orders
  end)

  it("refuses an actor or a policy the minter may not hand out, and unknown ids", function()
    got("refuse.root", "permission denied: security.impersonate on root:admin")
    got("refuse.other", "permission denied: security.impersonate on svc:other")
    got("refuse.scope", "permission denied: security.scope on app:root_everything")
    got("refuse.ghost", "unknown policy app:ghost")
    got("refuse.ghosts", "no policy joins group app:ghosts")
    assert.truthy(results["refuse.meta"]:find("(meta: values must be strings, numbers, booleans or tables)", 1, true))
    assert.truthy(results["refuse.id"]:find("string expected, got number", 1, true))
  end)

  it("denies minting without security.impersonate / security.scope, and in strict mode without a context", function()
    got("outsider.new_actor", "permission denied: security.impersonate on user:alice")
    got("outsider.named_scope", "permission denied: security.scope on app:order_roles")
    got("nocontext.new_actor", "permission denied: security.impersonate on user:alice")
  end)

  describe("process.with_context", function()
    it("runs a handler as an admin: security.can('delete', 'orders') is true", function()
      got("admin.spawned", "ok")
      got("admin.actor", "user:alice")
      got("admin.role", "admin")
      got("admin.delete", "true")
      got("admin.read", "true")
    end)

    it("runs a handler as a plain user: delete is refused, read allowed", function()
      got("user.actor", "user:bob")
      got("user.delete", "false")
      got("user.read", "true")
    end)

    it("guards the process's host calls with the identity, not the minter's rights", function()
      got("admin.registry", "permission denied: registry.read on app:public_settings")
      got("admin.mint", "permission denied: security.impersonate on user:eve")
    end)

    it("is inherited by what the process spawns", function()
      got("inherit.spawn", "ok")
      got("inherit.child.actor", "user:bob")
      got("inherit.child.delete", "false")
      got("inherit.child.read", "true")
    end)

    it("runs funcs.call as the identity", function()
      got("call.whoami", "user:alice")
      got("call.delete", "true")
    end)
  end)

  describe("actors and scopes in messages", function()
    it("arrive usable", function()
      got("send.values", "true")
      got("recv.actor", "actor: user:alice")
      got("recv.actor_id", "user:alice")
      got("recv.actor_role", "admin")
      got("recv.scope_policies", "app:orders_admin,app:orders_read")
      got("recv.evaluate", "allow")
      got("recv.can_as", "true")
      got("recv.own", "user:bob")
      got("recv.own_delete", "false")
    end)

    it("reject a forged actor table", function()
      got("recv.forged_type", "table")
      assert.truthy(results["recv.forged_with_context"]:find("needs actor (security.new_actor) and scope", 1, true))
      assert.truthy(results["recv.forged_can"]:find("actor must be an actor and scope a scope", 1, true))
      assert.truthy(results["recv.forged_evaluate"]:find("actor expected, got table", 1, true))
    end)

    it("grant nothing by themselves: the receiver may not act as what it received", function()
      got("recv.with_context", "permission denied: security.impersonate on user:alice")
      got("recv.mint", "permission denied: security.impersonate on user:mallory")
      got("recv.scope", "permission denied: security.scope on app:orders_read")
    end)
  end)

  describe("token stores", function()
    it("create opaque tokens that validate to their actor and scope", function()
      got("token.length", "32")
      got("token.distinct", "true")
      got("token.admin_actor", "user:alice")
      got("token.admin_delete", "allow")
      got("token_admin.delete", "true")
      got("token_user.actor", "user:bob")
      got("token_user.delete", "false")
      got("token.still_admin", "true")
    end)

    it("revoke, and give one answer for revoked, unknown and malformed tokens", function()
      got("token.revoke", "true")
      got("token.revoked", "invalid token")
      got("token.revoke_again", "false")
      got("token.unknown", "invalid token")
      got("token.garbage", "invalid token")
      got("token.no_store", "no security.token_store app:nope")
      assert.truthy(results["token.bad_ttl"]:find("ttl must be a positive duration", 1, true))
      assert.truthy(results["token.not_actor"]:find("actor expected, got table", 1, true))
    end)

    it("expire after the store's ttl or the one create gives, and hold at most max_tokens", function()
      got("expiry.fresh", "true")
      got("expiry.full_or_not", "ok")
      got("expiry.full", "token store full")
      got("expiry.short", "invalid token")
      got("expiry.ttl", "invalid token")
      got("expiry.room_again", "true") -- the expired ones made room
    end)

    it("guard create, validate and revoke on the store id", function()
      got("outsider.validate", "permission denied: security.token.validate on app:tokens")
      got("outsider.revoke", "permission denied: security.token.revoke on app:tokens")
    end)
  end)

  describe("audit", function()
    it("logs each identity minted with the minter, action, resource and deciding policy", function()
      assert.are.equal(1, #audits("identity minted", { actor = "svc:gateway", action = "security.impersonate",
        resource = "user:alice", policy = "app:gateway_mints", level = "info" }))
      assert.are.equal(1, #audits("identity minted", { action = "security.scope", resource = "app:order_roles",
        policy = "app:gateway_grants" }))
      assert.is_true(#audits("identity minted", { action = "process.with_context", resource = "user:bob",
        scope = "app:order_roles" }) >= 1)
      assert.is_true(#audits("identity minted", { action = "security.token.create", resource = "app:tokens",
        subject = "user:alice" }) >= 1)
    end)

    it("logs each denied call: minting, tokens and guarded host calls, with the deciding deny", function()
      assert.are.equal(1, #audits("security denied", { actor = "svc:gateway", action = "security.impersonate",
        resource = "root:admin", policy = "app:no_root", level = "info" }))
      assert.are.equal(1, #audits("security denied", { actor = "svc:outsider", action = "security.token.validate",
        resource = "app:tokens" }))
      -- a handler's guarded host call, denied for the identity it runs as
      assert.is_true(#audits("security denied", { actor = "user:alice", action = "registry.read",
        resource = "app:public_settings" }) >= 1)
      -- without an actor (strict mode): no actor field
      local e = audits("security denied", { service = "app:nocontext", action = "security.impersonate" })[1]
      assert.truthy(e)
      assert.is_nil(e.actor)
    end)

    it("does not audit what registry.find leaves out (nothing was refused)", function()
      got("outsider.find", "0")
      assert.are.equal(0, #audits("security denied", { actor = "svc:outsider", action = "registry.read" }))
    end)

    it("does not let a denial storm flood the log", function()
      got("storm.denied", "500")
      local storm = audits("security denied", { actor = "svc:storm", action = "registry.read" })
      assert.is_true(#storm <= 10, #storm .. " events for one repeated denial")
      local held = 0
      for _, x in ipairs(audits("security denied", {})) do held = held + (x.suppressed or 0) end
      for _, x in ipairs(audits("identity minted", {})) do held = held + (x.suppressed or 0) end
      assert.is_true(held >= 500 - #storm, "suppressed counts told: " .. held)
      got("storm.after", "permission denied: security.impersonate on user:storm")
    end)
  end)

  it("passes steward check", function()
    local r = h.run("check", APP)
    assert.are.equal(0, r.code, r.stderr)
  end)
end)

-- A process running as an identity sees a reload at its next check: its scope's policy ids are
-- taken from the new set (a changed policy applies; a removed one leaves the scope granting
-- nothing), without a restart.
describe("identities across a reload", function()
  local function app(readers)
    return [[
namespace: app
entries:
]] .. readers .. [[
  - name: mint
    kind: security.policy
    groups: [ front ]
    policy:
      actions: [ security.impersonate, security.scope, process.spawn ]
      resources: [ "user:*", app:readers, app:worker ]
      effect: allow
  - name: worker
    kind: process.lua
    source: |
      return function()
        local last
        while true do
          local now = tostring(security.can("read", "orders")) .. "/" .. security.check("read", "orders")
          if now ~= last then logger.info("can", { got = now }); last = now end
          time.sleep("20ms")
        end
      end
  - name: front_process
    kind: process.lua
    source: |
      return function()
        local scope = assert(security.new_scope { "readers" })
        process.with_context({ actor = assert(security.new_actor("user:bob")), scope = scope }):spawn("worker")
        local events = process.events()
        repeat local e = events:receive() until e.kind == process.event.CANCEL
      end
  - name: front
    kind: process.service
    process: front_process
    lifecycle: { auto_start: true, security: { actor: { id: "svc:front" }, groups: [ front ] } }
]]
  end
  local ALLOW = "  - { name: readers, kind: security.policy, policy: { actions: read, resources: orders, effect: allow } }\n"
  local DENY = "  - { name: readers, kind: security.policy, policy: { actions: read, resources: orders, effect: deny } }\n"

  it("re-resolves the scope by id: a changed policy applies, a removed one grants nothing", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local function write(text)
      local f = assert(io.open(dir .. "/app.yaml", "w"))
      f:write(text)
      f:close()
    end
    write(app(ALLOW))
    local ok, err = pcall(hh.with_app, "identities-reload", function(host)
      local function wait_can(got)
        return host:wait("can " .. got, function(ev)
          for _, e in ipairs(ev) do if e.msg == "can" and e.got == got then return e end end
        end)
      end
      local first = wait_can("true/allow")
      write(app(DENY))
      host:signal("HUP")
      local denied = wait_can("false/deny")
      write(app(""))
      host:signal("HUP")
      local broken = wait_can("false/undefined")
      -- the same process all along: no restart
      assert.are.equal(first.pid, denied.pid)
      assert.are.equal(first.pid, broken.pid)
    end, dir)
    os.execute("rm -rf " .. h.quote(dir))
    if not ok then error(err, 0) end
  end)
end)
