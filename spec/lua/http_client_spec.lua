-- The http module end to end against a tiny responder written with the net module: GET, POST
-- and other methods with bodies and headers, response headers lower-cased, a 404, redirects,
-- errors (refused, timeout, too large, bad arguments), the limit of requests in flight, 50
-- requests at once from tasks of one process, transfers removed however their process ends
-- (with the host's open fds back at their baseline after a kill), and the guard.
-- Cases run `steward run spec/apps/http_client/cases -x http:run CASE`, which prints what it saw.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local host = require("spec.lua.host_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
local CASES = "../http_client/cases" -- runtime_helper runs apps under spec/apps/runtime

local function run(case, ...)
  return rt.ok(rt.run(CASES, "http:run", { case, ... }, { limit = 30 * SLOW })).stdout
end

local function lines(...)
  return table.concat({ ... }, "\n") .. "\n"
end

describe("http", function()
  it("GET, POST, PUT, DELETE, HEAD with bodies and headers; response headers lower-cased; a 404 is a response", function()
    assert.are.equal(lines(
      "get\t200\thello\ttext/plain\tone, two\t5",
      "header keys\tconnection,content-length,content-type,x-twice",
      "post\t200\tPOST\t/echo\ta=1&b=2\tapplication/x-www-form-urlencoded\tt0k\t7",
      "put\t200\tPUT\t/echo?q=1\tput body\t",
      "request default\tGET\t\tnil",
      "delete\tDELETE",
      "post without body\tPOST\t0",
      "404\t404\tnot found",
      "head\t200\ttrue\t5"), run("basic"))
  end)

  it("follows redirects only when asked, and only to http or https", function()
    assert.are.equal(lines(
      "not followed\t302\t/hello",
      "followed\t200\thello\tnil",
      "to file\tnil\tUnsupported protocol"), run("redirects"))
  end)

  it("errors are nil, err: refused, timeout, response too large; bad arguments raise", function()
    assert.are.equal(lines(
      "refused\tnil\tCouldn't connect to server",
      "timeout\tnil\ttimeout",
      "waited\ttrue\ttrue",
      "big with length\tnil\tresponse too large",
      "big streamed\tnil\tresponse too large",
      "under the bound\t200\t300000",
      "at the bound\t1000",
      "file url\tnil\tbad url \"file:///etc/passwd\": expected http:// or https://",
      "ftp url\tnil\tbad url \"ftp://127.0.0.1/x\": expected http:// or https://",
      "bad host\tnil\tURL using bad/illegal format or missing URL",
      "bad timeout\tfalse\thttp: timeout: expected a duration (\"250ms\", \"1.5s\", \"2m\" or seconds)",
      "bad method\tfalse\thttp: method: expected a method name such as \"GET\"",
      "bad header\tfalse\thttp: headers: the value of x-a may not hold CR, LF or NUL",
      "bad max_body\tfalse\thttp: max_body: expected a byte count of at least 1",
      "no url\tfalse\thttp: url: expected a string",
      "in sort\tfalse\tcannot block here: inside a C call (sort comparator, gsub callback, error handler) or outside a task"),
      run("errors"))
  end)

  it("50 requests at once from tasks of one process overlap", function()
    local out = run("concurrent", 50, 200)
    assert.matches("^ok\t50\noverlapped\ttrue\t", out)
  end)

  it("at most 64 requests in flight per process", function()
    assert.are.equal(lines(
      "65th\tnil\ttoo many requests (at most 64 per process)",
      "the 64\t64",
      "after\thello"), run("limit"))
  end)

  it("a process's transfers go however it ends: return, error, kill", function()
    assert.are.equal(lines(
      "return\tasked\tgone",
      "error\tasked\tgone",
      "kill\tasked\tgone"), run("ends"))
  end)

  it("a process killed mid-request leaves no transfer and no fd behind", function()
    rt.with_driven(SPEC .. "/apps/http_client/cases", "http:kill", function(d)
      assert.are.equal("warm 200\n", d.ask("warm"))
      local baseline = d.fds()
      assert.are.equal("asked\n", d.ask("open"))
      local open = d.fds()
      assert.is_true(open >= baseline + 2, ("fds: %d at baseline, %d with a request"):format(baseline, open))
      assert.are.equal("gone\n", d.ask("kill"))
      rt.wait_fds(d, baseline)
    end)
  end)

  it("http.request is guarded on the URL as given: a denied call says so and does nothing", function()
    host.with_app("http_client", function(hst)
      local probes = hst:wait_each("probe", { "app:guarded", "app:open" })
      local g = probes["app:guarded"]
      assert.are.equal("Couldn't connect to server", g.allowed)
      assert.are.equal("permission denied: http.request on http://127.0.0.1:1/secret", g.denied)
      assert.are.equal("permission denied: http.request on http://127.0.0.1:1/allowed/secret", g.denied_by_policy)
      assert.are.equal("permission denied: http.request on http://10.255.255.1:1/allowed/x", g.other_host)
      local o = probes["app:open"]
      assert.are.equal("Couldn't connect to server", o.allowed)
      assert.are.equal("Couldn't connect to server", o.denied)
      hst:stop()
    end, SPEC .. "/apps/http_client/guarded")
  end)
end)
