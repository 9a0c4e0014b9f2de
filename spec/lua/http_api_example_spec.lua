-- examples/http-api end to end: a copy of the example listening on port 0 (its own listens on
-- 8080, which may be taken), checked, run, and driven with real HTTP requests
-- (spec/apps/http_server/client, case "example").
local hh = require("spec.lua.host_helper")
local rt = require("spec.lua.runtime_helper")
local h = require("spec.lua.steward_helper")


local function lines(...) return table.concat({ ... }, "\n") .. "\n" end

-- A copy of the example listening on port 0.
local function copy()
  return h.copy_example("http-api", 'listen: "127%.0%.0%.1:8080"', 'listen: "127.0.0.1:0"')
end

describe("examples/http-api", function()
  after_each(hh.cleanup_all)

  it("checks, shows its routes in the graph, and serves its JSON API over HTTP", function()
    local dir = copy()
    local ok, err = pcall(function()
      local r = h.run("graph", dir, "--why")
      assert.are.equal(0, r.code, r.stderr)
      assert.matches("api:http\n    -> api:store  (lifecycle.depends_on[0])", r.stdout, 1, true)
      assert.matches("route GET /v1/items/{id} -> api:get_item  (api:get_one via router api:v1)",
                     r.stdout, 1, true)
      hh.with_app("http-api", function(host)
        local addr = host:address()
        local out = rt.ok(rt.run("../http_server/client", "client:run", { "example", addr },
                                 { limit = 30 * hh.SLOW })).stdout
        assert.are.equal(lines(
          'health\t200\t{"status":"ok"}',
          "create\t201\t/v1/items/1\t1\tapple",
          "create\t201\t2",
          "invalid\t422\tan item needs a name",
          "not json\t400",
          "list\t200\t2\tapple\tpear",
          "get\t200\tpear",
          "miss\t404\tno item 9"), out)
        local events = host:stop()
        hh.before(hh.find_state(events, "api:http", "stopped", -1), hh.find_state(events, "api:store", "stopping", -1),
                  "the API stops before the store it depends on")
      end, dir)
    end)
    os.execute("rm -rf " .. h.quote(dir))
    if not ok then error(err, 0) end
  end)
end)
