-- examples/secured-api end to end: a copy of the example listening on port 0 (its own listens
-- on 8080, which may be taken), checked, run, and driven with real HTTP requests
-- (spec/apps/http_server/client, case "secured"): tokens from /login for an admin and a
-- customer, the endpoint each may use, 401 without a token, a logout that revokes it.
local hh = require("spec.lua.host_helper")
local rt = require("spec.lua.runtime_helper")
local h = require("spec.lua.steward_helper")


local function lines(...) return table.concat({ ... }, "\n") .. "\n" end

-- A copy of the example listening on port 0.
local function copy()
  return h.copy_example("secured-api", 'listen: "127%.0%.0%.1:8080"', 'listen: "127.0.0.1:0"')
end

describe("examples/secured-api", function()
  after_each(hh.cleanup_all)

  it("logs in an admin and a customer; each may use its endpoints; no token is a 401", function()
    local dir = copy()
    local ok, err = pcall(function()
      assert.are.equal(0, h.run("check", dir).code)
      local graph = h.run("graph", dir, "--why").stdout
      assert.matches("route GET /api/orders -> shop:list_orders  (shop:get_orders via router shop:api, auth shop:sessions)",
                     graph, 1, true)
      assert.matches("route POST /login -> shop:login  (shop:post_login via router shop:public)\n", graph, 1, true)
      hh.with_app("secured-api", function(host)
        local addr = host:address()
        local out = rt.ok(rt.run("../http_server/client", "client:run", { "secured", addr },
                                 { limit = 30 * hh.SLOW })).stdout
        assert.are.equal(lines(
          "login\tuser:alice\tadmins\tuser:bob\tcustomers\t32",
          "unknown\t401\tunknown user (try alice or bob)",
          "list bob\t200\tuser:bob\t2",
          "delete alice\t200\tuser:alice\t1",
          "delete bob\t403\tuser:bob may not delete orders\tnil",
          "no token\t401\tBearer\tnil",
          "logout bob\t200\tuser:bob\ttrue",
          'after logout\t401\tBearer error="invalid_token"\tnil',
          "alice still\t200\tuser:alice\t2"), out)
        local minted = 0
        for _, e in ipairs(host:poll()) do
          if e.msg == "identity minted" and e.action == "security.token.create" then minted = minted + 1 end
        end
        assert.are.equal(2, minted)
        host:stop()
      end, dir)
    end)
    os.execute("rm -rf " .. h.quote(dir))
    if not ok then error(err, 0) end
  end)
end)
