-- How runs end (docs/supervision.md, docs/lua-api.md "How a process runs"): one return
-- convention for services, spawned processes and `-x`; `-x` waits for the processes its
-- process spawned; stop_timeout 0 (no CANCEL) and infinity; a stop order that is transitive
-- through stopped services; group shutdown waits for trees. Apps in spec/apps/returns; the
-- services' order is read from the JSON event log, `-x` from its stdout, stderr and code.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local hh = require("spec.lua.host_helper")
local with_app, states, state_names, logs, before = hh.with_app, hh.states, hh.state_names, hh.logs, hh.before
local last_state, host_event, SLOW = hh.last_state, hh.host_event, hh.SLOW

local SPEC = os.getenv("SPEC_DIR") or "spec"
local APPS = SPEC .. "/apps/returns"
local SHORT = APPS .. "/short_shutdown.host.yaml" -- shutdown.timeout: 300ms

local function app(name) return APPS .. "/" .. name end

-- `steward run APPS/exec [--config FILE] -x app:ID ARGS...`, with the seconds it took.
local function exec(config, id, ...)
  local t0 = rt.now()
  local r = config and h.run("run", app("exec"), "--config", config, "-x", "app:" .. id, ...)
    or h.run("run", app("exec"), "-x", "app:" .. id, ...)
  r.took = rt.now() - t0
  return r
end

local function lines(s)
  local out, at = {}, {}
  for l in s:gmatch("[^\n]+") do
    out[#out + 1] = l
    at[l] = #out
  end
  return out, at
end

-- The logger lines of a service whose field `key` is `value`.
local function logs_with(ev, name, msg, key, value)
  local out = {}
  for _, e in ipairs(logs(ev, name, msg)) do
    if e[key] == value then out[#out + 1] = e end
  end
  return out
end

describe("steward run -x", function()
  it("exits once the processes it spawned are gone: they get CANCEL when it returns", function()
    local r = exec(nil, "leaves")
    assert.are.equal(0, r.code, r.stderr)
    assert.are.equal("", r.stderr)
    local l, at = lines(r.stdout)
    assert.are.equal(5, #l, r.stdout)
    assert.are.equal("main returns", l[1], r.stdout)
    for _, who in ipairs { "worker", "grandchild" } do -- both levels of the tree
      assert.truthy(at[who .. " cancelled"] and at[who .. " done"], r.stdout)
      assert.truthy(at[who .. " cancelled"] < at[who .. " done"], r.stdout)
    end
    assert.truthy(r.took >= 0.19, r.took) -- each waits 200ms after its CANCEL
  end)

  it("with `return false, err` exits 1 printing err, after its tree is gone", function()
    local r = exec(nil, "leaves", "fail")
    assert.are.equal(1, r.code, r.stderr)
    assert.are.equal("app:leaves: why\n", r.stderr)
    local _, at = lines(r.stdout)
    assert.truthy(at["worker done"] and at["grandchild done"], r.stdout)
  end)

  it("kills what ignores its CANCEL after the host's shutdown.timeout", function()
    local r = exec(SHORT, "leaves_deaf")
    assert.are.equal(0, r.code, r.stderr)
    assert.are.equal("main returns\ndeaf ignored cancel\n", r.stdout)
    assert.truthy(r.took >= 0.28, r.took)
    assert.truthy(r.took < 3 * SLOW, r.took)
  end)

  it("exits with a returned number, and prints an error object's message", function()
    local r = exec(nil, "child", "code")
    assert.are.same({ 3, "", "app:child: exited with code 3\n" }, { r.code, r.stdout, r.stderr })
    r = exec(nil, "child", "zero")
    assert.are.same({ 0, "", "" }, { r.code, r.stdout, r.stderr })
    r = exec(nil, "returns_error_obj")
    assert.are.same({ 1, "", "app:returns_error_obj: bad config\n" }, { r.code, r.stdout, r.stderr })
  end)
end)

describe("the return convention", function()
  it("gives monitors and links the reason: EXIT and LINK_DOWN for each failure, EXIT only for a success", function()
    local r = exec(nil, "watch")
    assert.are.equal(0, r.code, r.stderr)
    local function row(how, err, value, down)
      return table.concat({ how, "exit", err, value, "link_down", down, "nil" }, "\t")
    end
    local cfg = "{message=bad config kind=config retryable=false}"
    assert.are.equal(table.concat({
      row("value", "nil", "fine", "nil"),
      row("zero", "nil", "0", "nil"),
      row("code", "exited with code 3", "3", "exited with code 3"),
      row("false_err", "why", "nil", "why"),
      row("nil_err", "nil why", "nil", "nil why"),
      row("error_obj", cfg, "nil", cfg),
      row("raise", "raised why", "nil", "raised why"),
    }, "\n") .. "\n", r.stdout)
  end)

  describe("for services", function()
    teardown(hh.cleanup_all)

    it("a returned number fails and restarts (on_failure); false, err fails and holds back what waits for it", function()
      with_app("codes", function(host)
        host:wait("every service settled", function(ev)
          local c = last_state(ev, "coded")
          return c and c.reason and c.reason:find("^gave up")
            and last_state(ev, "final") and last_state(ev, "final").state == "failed"
            and last_state(ev, "zero") and last_state(ev, "zero").state == "stopped"
            and last_state(ev, "after") and last_state(ev, "after").state == "inactive"
            and last_state(ev, "next") and last_state(ev, "next").state == "inactive"
        end)
        local ev = host:stop()
        local text = host:log_text()
        -- `return 3`: failed with "exited with code 3", restarted, then given up on
        assert.are.same({ "starting", "running", "failed", "starting", "running", "failed" },
                        state_names(ev, "coded"), text)
        local c = states(ev, "coded")
        assert.are.equal("exited with code 3", c[3].reason, text)
        assert.are.equal(0.01, c[3].next_attempt, text)
        assert.are.equal("gave up after 2 attempts: exited with code 3", c[6].reason, text)
        local failed = logs(ev, "coded", "process failed")
        assert.are.equal(2, #failed, text)
        assert.are.equal("exited with code 3", failed[1].error, text)
        assert.are.equal("error", failed[1].level, text)
        -- an errors.new{retryable = false} returned: final, its message the reason
        assert.are.same({ "starting", "running", "failed" }, state_names(ev, "final"), text)
        assert.are.equal("bad config", states(ev, "final")[3].reason, text)
        assert.is_nil(states(ev, "final")[3].next_attempt, text)
        -- `return 0` is a success: stopped, not restarted under on_failure
        assert.are.same({ "starting", "running", "stopped" }, state_names(ev, "zero"), text)
        assert.are.equal("returned", states(ev, "zero")[3].reason, text)
        -- `return false, "why"` before it was ready: failed; its dependent and its next sibling wait
        assert.are.equal("why", states(ev, "falsy")[2].reason, text)
        assert.are.equal("why", logs(ev, "falsy", "process failed")[1].error, text)
        assert.are.same({ "inactive" }, state_names(ev, "after"), text)
        assert.are.equal("dependency app:falsy failed", states(ev, "after")[1].reason, text)
        assert.are.same({ "starting", "failed" }, state_names(ev, "oneshot"), text)
        assert.are.same({ "inactive" }, state_names(ev, "next"), text)
        assert.are.equal("earlier sibling app:oneshot failed", states(ev, "next")[1].reason, text)
      end, app("codes"))
    end)
  end)
end)

describe("stop_timeout", function()
  teardown(hh.cleanup_all)

  it("0 kills at once without CANCEL: neither the service's process nor what it left sees one", function()
    with_app("brutal", function(host)
      host:wait("all up, leaver down", function(ev)
        return #logs(ev, "brutal", "up") == 1 and #logs(ev, "gentle", "up") == 1
          and last_state(ev, "leaver") and last_state(ev, "leaver").state == "stopped"
      end)
      local ev = host:stop()
      local text = host:log_text()
      assert.are.equal(0, #logs(ev, "brutal", "got cancel"), text)
      assert.are.equal(0, #logs(ev, "leaver", "got cancel"), text)
      assert.are.equal(1, #logs(ev, "gentle", "got cancel"), text) -- the default still sends one
      assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "brutal"), text)
      assert.are.equal("shutdown", states(ev, "brutal")[3].reason, text)
      assert.are.equal("killed at once (stop_timeout: 0)", last_state(ev, "brutal").reason, text)
      assert.are.equal("stopped", last_state(ev, "gentle").reason, text)
      -- the worker it left is killed at once; the run's own end is kept
      assert.are.same({ "starting", "running", "stopping", "stopped" }, state_names(ev, "leaver"), text)
      assert.are.equal("returned", last_state(ev, "leaver").reason, text)
      assert.is_nil(host_event(ev, "shutdown timeout: killing what is left"), text)
    end, app("brutal"))
  end)

  it("infinity waits for a cancel handler longer than the default stop_timeout (10s)", function()
    with_app("patient", function(host)
      host:wait("running", function(ev) return last_state(ev, "patient") and last_state(ev, "patient").state == "running" end)
      host:signal("TERM")
      local code, took = host:wait_exit(40)
      local ev, text = host.events, host:log_text()
      assert.are.equal(0, code, text)
      assert.truthy(took >= 10.4, took)
      assert.are.equal(1, #logs(ev, "patient", "cancel handler done"), text)
      assert.are.equal("stopped", last_state(ev, "patient").reason, text)
      assert.is_nil(host_event(ev, "shutdown timeout: killing what is left"), text)
    end, app("patient"))
  end)

  it("infinity is still bounded by shutdown.timeout, which kills what the service left at once", function()
    with_app("bounded", function(host)
      host:wait("both up", function(ev) return #logs(ev, "stuck", "up") == 2 end)
      host:signal("TERM")
      local code, took = host:wait_exit()
      local ev, text = host.events, host:log_text()
      assert.are.equal(0, code, text)
      assert.truthy(took < 3 * SLOW, took)
      assert.truthy(host_event(ev, "shutdown timeout: killing what is left"), text)
      assert.are.equal("killed after shutdown.timeout", last_state(ev, "stuck").reason, text)
    end, app("bounded"), "--config " .. h.quote(SHORT))
  end)
end)

describe("stopping", function()
  teardown(hh.cleanup_all)

  it("is transitive through a stopped service: db <- mid (stopped) <- top, top's tree gone before db's CANCEL", function()
    with_app("order", function(host)
      host:wait("mid returned, top's worker up", function(ev)
        return last_state(ev, "mid") and last_state(ev, "mid").state == "stopped"
          and #logs_with(ev, "top", "up", "name", "top's worker") == 1
      end)
      local ev = host:stop()
      local text = host:log_text()
      local db_stopping = hh.find_state(ev, "db", "stopping")
      before(last_state(ev, "top"), db_stopping, text)
      before(logs_with(ev, "top", "gone", "name", "top's worker")[1], db_stopping, text)
      before(db_stopping, logs_with(ev, "db", "got cancel", "name", "db")[1], text)
      assert.are.equal("stopped", last_state(ev, "top").reason, text)
      assert.are.same({ "starting", "running", "stopped" }, state_names(ev, "mid"), text)
    end, app("order"))
  end)

  it("a group's shutdown waits for a member's tree before the member before it stops", function()
    with_app("group", function(host)
      host:wait("both up", function(ev) return #logs(ev, "first", "up") == 1 and #logs(ev, "second", "up") == 1 end)
      local ev = host:stop()
      local text = host:log_text()
      local first_stopping = hh.find_state(ev, "first", "stopping")
      before(logs(ev, "second", "worker gone")[1], last_state(ev, "second"), text)
      before(last_state(ev, "second"), first_stopping, text)
      before(last_state(ev, "first"), last_state(ev, "pair"), text)
    end, app("group"))
  end)
end)
