-- Authenticated endpoints end to end (docs/security.md "Authenticated endpoints"): `steward
-- run` of spec/apps/http_auth/app and real requests from a second steward over TCP
-- (spec/apps/http_server/client, case "auth"). A token's handler runs as the token's actor and
-- scope (security.can for an admin and a user); no token, or an unknown, malformed, expired or
-- revoked one, is a 401 with a challenge before any Lua runs (no "handler ran" line for it, and
-- one "token rejected" audit event each); required: false runs a tokenless request as the
-- router; an endpoint's auth overrides its router's (or stands alone, with a raw token in its
-- own header). Mistakes in `auth` are spec/corpus/bad/80-http-auth (check_corpus_spec).
local hh = require("spec.lua.host_helper")
local rt = require("spec.lua.runtime_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = hh.SLOW
local APP = SPEC .. "/apps/http_auth/app"
local CLIENT = "../http_server/client" -- runtime_helper runs apps under spec/apps/runtime

local function lines(...) return table.concat({ ... }, "\n") .. "\n" end

local function events_of(host, msg)
  local found = {}
  for _, e in ipairs(host:poll()) do
    if e.msg == msg then found[#found + 1] = e end
  end
  return found
end

describe("http auth", function()
  after_each(hh.cleanup_all)

  it("runs a token's handler as its identity; refuses a missing or bad token with 401 before any Lua", function()
    hh.with_app("http_auth", function(host)
      local ttl_ms = tostring(math.floor(400 * SLOW))
      local out = rt.ok(rt.run(CLIENT, "client:run", { "auth", host:address(), ttl_ms },
                               { limit = 60 * SLOW })).stdout
      local challenge, invalid = "Bearer", 'Bearer error="invalid_token"'
      assert.are.equal(lines(
        "tokens\t32\t32\ttrue",
        -- security.can("delete", "orders") in the handler, for the token's user
        "admin\t200\tuser:alice\ttrue\t-",
        "user\t403\tuser:bob\tfalse\t-",
        "none\t401\tUnauthorized\tnil\t" .. challenge,
        -- invalid tokens, whatever is wrong with them
        "unknown\t401\tUnauthorized\tnil\t" .. invalid,
        "malformed\t401\tUnauthorized\tnil\t" .. invalid,
        "basic\t401\tUnauthorized\tnil\t" .. invalid,
        "bare\t401\tUnauthorized\tnil\t" .. invalid,
        "lower\t200\tuser:alice\ttrue\t-", -- the scheme in any case, blanks around the token
        "fresh\t200\tuser:carol\ttrue\t-",
        "expired\t401\tUnauthorized\tnil\t" .. invalid,
        "live\t200\tuser:dave\ttrue\t-",
        "revoke\ttrue",
        "revoked\t401\tUnauthorized\tnil\t" .. invalid,
        -- required: false on the endpoint: no token runs as the router, a bad one is still 401
        "opt_none\t403\tsvc:api\tfalse\t-",
        "opt_user\t403\tuser:bob\tfalse\t-",
        "opt_admin\t200\tuser:alice\ttrue\t-",
        "opt_bad\t401\tUnauthorized\tnil\t" .. invalid,
        -- a router without auth ignores the header; its endpoint with auth (X-Api-Key, raw) does not
        "open\t403\tsvc:open\tfalse\t-",
        "key_none\t401\tUnauthorized\tnil\t" .. challenge,
        "key_admin\t200\tuser:alice\ttrue\t-",
        "key_bearer\t401\tUnauthorized\tnil\t" .. invalid), out)

      -- Lua ran for exactly the requests that were let in: a 401 spawned no handler
      local ran = host:wait("10 handlers", function()
        local r = events_of(host, "handler ran")
        return #r >= 10 and r
      end)
      local tags = {}
      for _, e in ipairs(ran) do tags[#tags + 1] = e.tag end
      table.sort(tags)
      assert.are.same({ "admin", "fresh", "key_admin", "live", "lower", "open", "opt_admin",
                        "opt_none", "opt_user", "user" }, tags)

      -- one audit event per invalid token (a missing one is not audited)
      local rejected = host:wait("8 audit events", function()
        local r = events_of(host, "token rejected")
        return #r >= 8 and r
      end)
      assert.are.equal(8, #rejected)
      local by_endpoint = {}
      for _, e in ipairs(rejected) do
        assert.are.equal("info", e.level)
        assert.are.equal("app:web", e.service)
        assert.are.equal("security.token.validate", e.action)
        assert.are.equal("app:tokens", e.resource)
        assert.matches("^tcp://127%.0%.0%.1:%d+$", e.remote)
        by_endpoint[e.endpoint] = (by_endpoint[e.endpoint] or 0) + 1
      end
      assert.are.same({ ["app:orders"] = 6, ["app:optional"] = 1, ["app:keyed"] = 1 }, by_endpoint)
      host:hold(0.2)
      assert.are.equal(10, #events_of(host, "handler ran"))
      host:stop()
    end, APP)
  end)

  it("audits a storm of bad tokens through the audit limiter: 10 events alike, the rest held back", function()
    hh.with_app("http_auth", function(host)
      local out = rt.ok(rt.run(CLIENT, "client:run", { "auth_storm", host:address(), "40" },
                               { limit = 60 * SLOW })).stdout
      assert.are.equal("401\t40\n", out)
      host:wait("10 audit events", function() return #events_of(host, "token rejected") >= 10 end)
      host:hold(0.3)
      assert.are.equal(10, #events_of(host, "token rejected"))
      assert.are.equal(0, #events_of(host, "handler ran"))
      host:stop()
    end, APP)
  end)
end)
