-- `steward test` (docs/operating.md "steward test", docs/registry.md "test.lua"): test.lua
-- entries run in processes with their services and identity; virtual time; failures with
-- file:line and luassert's diff in TAP, JUnit and text; exit codes; --filter.
local h = require("spec.lua.steward_helper")

local APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/test_cmd"
local have_luassert = h.exists("/usr/share/lua/5.1/luassert/init.lua") and h.exists("/usr/share/lua/5.1/say/init.lua")

local function test(app, ...)
  return h.run("test", APPS .. "/" .. app, ...)
end

describe("steward test", function()
  before_each(function()
    if not have_luassert then pending("lua-luassert and lua-say are not installed") end
  end)

  it("runs a service's test with its dependency running, a policy test under its actor, and virtual time (TAP)", function()
    local r = test("pass", "--format", "tap")
    assert.are.equal(0, r.code, r.stdout .. r.stderr)
    assert.are.equal(table.concat({
      "ok 1 - app:kv_test: kv stores and returns values",
      "ok 2 - app:kv_test: kv tells audit about each put (its dependency is running)",
      "ok 3 - app:policy_test: a test under its actor runs as the identity of lifecycle.security",
      "ok 4 - app:policy_test: a test under its actor is allowed what its policies allow, and nothing else",
      "ok 5 - app:backoff_test: backoff with virtual time waits 0.1, 0.2 and 0.4 s of virtual time between attempts, without sleeping",
      "ok 6 - app:backoff_test: backoff with virtual time ticks a ticker once per period crossed",
      "ok 7 - app:backoff_test: backoff with virtual time jitter # SKIP pending",
      "1..7", "" }, "\n"), r.stdout)
    assert.are.equal("", r.stderr)
  end)

  it("summarises in text and selects tests with --filter (a Lua pattern)", function()
    local r = test("pass")
    assert.are.equal(0, r.code, r.stderr)
    assert.matches("3 test files, 7 tests: 6 passed, 0 failed, 1 pending\n$", r.stdout)
    r = test("pass", "--filter", "virtual time w", "--format", "tap")
    assert.are.equal(0, r.code, r.stderr)
    assert.are.equal("ok 1 - app:backoff_test: backoff with virtual time waits 0.1, 0.2 and 0.4 s of " ..
                     "virtual time between attempts, without sleeping\n1..1\n", r.stdout)
  end)

  it("reports failures with file:line and the diff, and exits 1 (TAP)", function()
    local r = test("fail", "--format", "tap")
    assert.are.equal(1, r.code)
    local file = APPS .. "/fail/tests/failing_test.lua"
    assert.matches("ok 1 - app:failing_test: failures passes\n", r.stdout, 1, true)
    assert.matches("not ok 2 - app:failing_test: failures compares tables\n# " .. file .. ":5\n" ..
                   "# Expected objects to be the same.\n# Passed in:\n", r.stdout, 1, true)
    assert.matches("*[name] = 'bob'", r.stdout, 1, true)
    assert.matches("*[name] = 'ann'", r.stdout, 1, true)
    assert.matches("not ok 3 - app:failing_test: failures raises\n# " .. file .. ":8\n# boom\n1..3\n",
                   r.stdout, 1, true)
  end)

  it("writes JUnit XML with a failure per failed test naming file:line", function()
    local r = test("fail", "--format", "junit")
    assert.are.equal(1, r.code)
    local file = APPS .. "/fail/tests/failing_test.lua"
    assert.matches('^<%?xml version="1.0" encoding="UTF%-8"%?>\n<testsuites>\n', r.stdout)
    assert.matches('<testsuite name="app:failing_test" tests="3" failures="2" skipped="0">', r.stdout, 1, true)
    assert.matches('<testcase classname="app:failing_test" name="failures passes"/>', r.stdout, 1, true)
    assert.matches('<failure message="' .. file .. ':8">' .. file .. ':8: boom</failure>', r.stdout, 1, true)
    local _, failures = r.stdout:gsub("<failure ", "")
    assert.are.equal(2, failures)
    assert.matches("</testsuites>\n$", r.stdout)
  end)

  it("counts a file whose service fails to start, or that does not compile, as one failed test", function()
    local r = test("broken", "--format", "tap")
    assert.are.equal(1, r.code)
    -- LuaJIT's compile errors name the file by its last 60 bytes at most
    assert.matches("^not ok 1 %- app:a_needs_crash_test: %(not run%)\n# service app:crash failed to start\n" ..
                   "not ok 2 %- app:b_syntax_test: %(not run%)\n# [^\n]*syntax_test%.lua:2: unexpected symbol " ..
                   "near '='\n1%.%.2\n$", r.stdout)
    assert.matches("app:a_needs_crash_test: service app:crash failed to start", r.stderr, 1, true)
    r = test("broken", "--format", "junit")
    assert.matches('<testsuite name="app:a_needs_crash_test" tests="1" failures="1" skipped="0">', r.stdout, 1, true)
  end)

  it("refuses an unknown format", function()
    local r = test("pass", "--format", "xml")
    assert.are.equal(2, r.code)
    assert.matches('unknown test format "xml" (tap, junit or text)', r.stderr, 1, true)
  end)
end)
