-- `steward init DIR` (docs/operating.md "Starting an app"): the app it writes passes check,
-- runs (the client counts through the counter, under its policy) and stops cleanly; a DIR
-- that is not empty is refused and left as it was.
local hh = require("spec.lua.host_helper")
local h = require("spec.lua.steward_helper")

local function scratch()
  local p = assert(io.popen("mktemp -d"))
  local dir = p:read("*l")
  p:close()
  return dir
end

describe("steward init", function()
  teardown(hh.cleanup_all)

  it("writes an app that checks, runs and stops", function()
    local dir = scratch() .. "/myapp"
    local r = h.run("init", dir)
    assert.are.equal(0, r.code, r.stderr)
    assert.are.same({ ".luacheckrc", "README.md", "app.yaml", "src", "tests" }, h.list(dir))
    assert.are.equal(0, h.run("check", dir).code)
    local t = h.run("test", dir, "--format", "tap") -- its test, with the counter running
    assert.are.equal(0, t.code, t.stdout .. t.stderr)
    assert.are.equal("ok 1 - app:counter_test: counter answers each incr with the new count\n1..1\n", t.stdout)
    assert.truthy(h.read(dir .. "/.luacheckrc"):find('"process", "channel", "time"', 1, true))
    hh.with_app("init", function(host)
      host:wait("two counts", function(ev) return #hh.logs(ev, "app:client", "counted") >= 2 end)
      local ev = host:stop()
      assert.are.equal(2, hh.logs(ev, "app:client", "counted")[2].count)
      hh.before(hh.find_state(ev, "app:counter", "running"), hh.find_state(ev, "app:client", "starting"))
    end, dir)
    os.execute("rm -rf " .. h.quote(dir:match("^(.*)/")))
  end)

  it("refuses a directory that is not empty, and changes nothing", function()
    local dir = scratch()
    local f = assert(io.open(dir .. "/keep.txt", "w"))
    f:write("mine")
    f:close()
    local r = h.run("init", dir)
    assert.are.equal(2, r.code)
    assert.are.equal("steward init: " .. dir .. " exists and is not an empty directory\n", r.stderr)
    assert.are.same({ "keep.txt" }, h.list(dir))
    os.execute("rm -rf " .. h.quote(dir))
  end)
end)
