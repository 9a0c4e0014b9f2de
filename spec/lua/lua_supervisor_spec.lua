-- Supervisors in Lua (docs/supervision.md "Supervisors in Lua", docs/lua-api.md "supervisor"):
-- the real steward runs spec/apps/lua_supervisor, where each service plays one scenario at the
-- same time; the JSON event log tells what happened and in which order, `steward status --json`
-- counts each service's processes, and `steward start app:poke_X` moves scenario X on.
local ch = require("spec.lua.control_helper")
local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = ch.SLOW

local function ts_seconds(ts)
  local hh, mm, ss = ts:match("T(%d+):(%d+):([%d.]+)Z$")
  return tonumber(hh) * 3600 + tonumber(mm) * 60 + tonumber(ss)
end

-- The events of service app:NAME with message msg (and every field of `with`), in order.
local function logs(events, name, msg, with)
  local out = {}
  for _, e in ipairs(events) do
    local hit = e.msg == msg and e.service == "app:" .. name
    for k, v in pairs(with or {}) do hit = hit and e[k] == v end
    if hit then out[#out + 1] = e end
  end
  return out
end

local function names(list, field)
  local out = {}
  for _, e in ipairs(list) do out[#out + 1] = e.msg .. " " .. tostring(e[field]) end
  return out
end

-- "running member#1", "restarting member#2", ...: the supervisor's "child state" events of
-- service app:NAME, in order (a child's own "up" lines may come in another order: children run
-- on any worker), and "down a", ...: the members' own lines on CANCEL (stops are one at a time).
local function lives(events, name)
  local states, downs = {}, {}
  for _, e in ipairs(events) do
    if e.service == "app:" .. name and e.msg == "child state" then
      states[#states + 1] = e.state .. " " .. e.child
    elseif e.service == "app:" .. name and e.msg == "member down" then
      downs[#downs + 1] = "down " .. e.name
    end
  end
  return states, downs
end

describe("supervisors in Lua", function()
  local host, text

  setup(function()
    host = ch.launch { dir = SPEC .. "/apps/lua_supervisor" }
  end)
  teardown(function() if host then host:cleanup() end end)

  local function wait_log(what, name, msg, n, with)
    return host:wait(what, function(ev)
      local l = logs(ev, name, msg, with)
      return #l >= n and l
    end)
  end

  local function processes(id)
    local s = host:service(id)
    return s and s.processes or 0
  end

  it("restarts a crashing child with backoff: 100ms, 200ms, 400ms", function()
    local ups = wait_log("four runs of the crasher", "backoff", "crasher up", 4)
    local ev = host:poll()
    text = host:log_text()
    local waits = logs(ev, "backoff", "child state", { state = "restarting" })
    assert.truthy(#waits >= 3, text)
    for i, d in ipairs { 0.1, 0.2, 0.4 } do
      assert.are.equal(d, waits[i].next_attempt, text)
      assert.truthy(waits[i].reason:find("crash", 1, true), text)
      assert.are.equal("warn", waits[i].level, text)
      -- the next run starts no sooner than the delay after the failure (log times: ms)
      local gap = ts_seconds(ups[i + 1].ts) - ts_seconds(waits[i].ts)
      assert.truthy(gap >= d - 0.002 and gap <= d + 0.25 * SLOW,
                    ("restart %d came %.3f s after the failure, expected %.1f s\n%s"):format(i, gap, d, text))
    end
  end)

  it("escalates past its intensity: stops its children, the caller gets LINK_DOWN when it traps links", function()
    local down = wait_log("the LINK_DOWN", "escalate_trap", "link down", 1)[1]
    local ev = host:poll()
    text = host:log_text()
    local want = "supervisor esc: more than 2 restarts in 10s (child crasher#2: "
    assert.are.equal(want, down.error:sub(1, #want), text)
    assert.are.equal(down.me, down.from, text) -- the supervisor lives in its caller's process
    assert.are.equal("esc", down.supervisor, text)
    assert.are.equal("nil supervisor is not running", down.after, text)
    -- three crashes (the first run and two restarts), then the sleeper is stopped before the end
    assert.are.equal(3, #logs(ev, "escalate_trap", "crasher up"), text)
    local cancelled = logs(ev, "escalate_trap", "sleeper cancelled")[1]
    local failed = logs(ev, "escalate_trap", "supervisor failed")[1]
    assert.truthy(cancelled and failed and cancelled.i < failed.i and failed.i < down.i, text)
    assert.are.same({ "starting", "running" }, ch.states(ev, "app:escalate_trap"), text)
  end)

  it("escalates past its intensity: a caller that does not trap links fails with the reason", function()
    host:wait("escalate_die failed", function(ev)
      local s = ch.states(ev, "app:escalate_die")
      return s[#s] == "failed"
    end)
    local ev = host:poll()
    text = host:log_text()
    local failed = logs(ev, "escalate_die", "service state", { state = "failed" })[1]
    assert.truthy(failed.reason:find("^supervisor esc: more than 2 restarts in 10s %(child crasher#2: "), text)
    local cancelled = logs(ev, "escalate_die", "sleeper cancelled")[1]
    assert.truthy(cancelled and cancelled.i < failed.i, text)
    assert.are.equal(0, processes("app:escalate_die"))
  end)

  it("decide: \"stop\" leaves the child failed, \"escalate\" fails the caller", function()
    local after = wait_log("the stop decision", "decide", "after stop", 1)[1]
    text = host:log_text()
    assert.are.equal("kinded#1=config", after.seen, text)
    assert.are.equal(1, after.failed, text)
    assert.are.equal("failed", after.state, text)
    local failed = host:wait("decide failed", function(ev)
      return logs(ev, "decide", "service state", { state = "failed" })[1]
    end)
    assert.are.equal("supervisor decider: child kinded#2 escalated: bad fatal", failed.reason, host:log_text())
    assert.are.equal(0, #logs(host:poll(), "decide", "not reached"))
  end)

  it("one_for_all: the siblings stop in reverse order and all start again in order", function()
    local done = wait_log("one_for_all settled", "one_for_all", "strategy done", 1)[1]
    local ev = host:poll()
    text = host:log_text()
    local states, downs = lives(ev, "one_for_all")
    assert.are.same({ "running member#1", "running member#2", "running member#3", "restarting member#2",
                      "restarting member#3", "restarting member#1",
                      "running member#1", "running member#2", "running member#3" }, states, text)
    assert.are.same({ "down c", "down a" }, downs, text)
    assert.are.equal("member#1:running:1:new member#2:running:1:new member#3:running:1:new", done.children, text)
  end)

  it("rest_for_one: only the children started after the failed one restart", function()
    local done = wait_log("rest_for_one settled", "rest_for_one", "strategy done", 1)[1]
    local ev = host:poll()
    text = host:log_text()
    local states, downs = lives(ev, "rest_for_one")
    assert.are.same({ "running member#1", "running member#2", "running member#3", "restarting member#2",
                      "restarting member#3", "running member#2", "running member#3" }, states, text)
    assert.are.same({ "down c" }, downs, text)
    assert.are.equal("member#1:running:0:same member#2:running:1:new member#3:running:1:new", done.children, text)
  end)

  it("one_for_all, all children crashing at once: one group restart, every old process gone first", function()
    local done = wait_log("the race settled", "race", "race done", 1)[1]
    local ev = host:poll()
    text = host:log_text()
    assert.are.equal("running:1 running:1 running:1 running:1 running:1 running:1", done.children, text)
    local failures = {}
    for _, e in ipairs(logs(ev, "race", "child state", { state = "restarting" })) do
      if e.next_attempt then failures[#failures + 1] = e end
    end
    assert.are.equal(1, #failures, text)
    assert.truthy(failures[1].reason:find("crashed", 1, true), text)
    host:wait_status("race's 7 processes", function(by) return by["app:race"].processes == 7 end)
  end)

  it("one_for_all, a sibling's start refused mid-group (the process limit): the group is stopped and restarted again", function()
    local done = wait_log("midgroup settled", "midgroup", "midgroup done", 1)[1]
    local ev = host:poll()
    text = host:log_text()
    local states = lives(ev, "midgroup")
    assert.are.same({ "running member#1", "running member#2", "restarting member#2", "restarting member#1",
                      "running member#1", "restarting member#2", "restarting member#1",
                      "running member#1", "running member#2" }, states, text)
    local refused = logs(ev, "midgroup", "child state", { child = "member#2", reason = "process limit reached" })
    assert.are.equal(1, #refused, text)
    assert.are.equal(0.4, refused[1].next_attempt, text) -- its second restart in a row
    assert.are.equal("running:2 running:2", done.children, text)
  end)

  it("terminate_child, restart_child, which_children, count_children, delete_child, stop and their errors", function()
    wait_log("manage ready", "manage", "ready to terminate", 1)
    host:wait_status("manage's 3 processes", function(by) return by["app:manage"].processes == 3 end)
    local r = host:ctl("start", "app:poke_manage")
    assert.are.equal(0, r.code, r.stdout .. r.stderr)
    wait_log("manage ready to stop", "manage", "ready to stop", 1)
    assert.are.equal(2, processes("app:manage")) -- sleeper 2 deleted, sleeper 1 restarted: 1 left
    r = host:ctl("start", "app:poke_manage")
    assert.are.equal(0, r.code, r.stdout .. r.stderr)
    wait_log("manage stopped all", "manage", "stopped all", 1)
    assert.are.equal(1, processes("app:manage"))
    local ev = host:poll()
    text = host:log_text()
    local checks = {}
    for _, e in ipairs(logs(ev, "manage", "check")) do checks[e.what] = { ok = e.ok, err = e.err } end
    assert.are.same({ ok = "sleeper#1" }, checks["start 1"], text)
    assert.are.same({ ok = "sleeper#2" }, checks["start 2"], text)
    assert.are.same({ err = "no process.lua app:nope" }, checks["start missing"], text)
    assert.are.same({ err = "permission denied: process.spawn on app:secret" }, checks["start denied"], text)
    assert.are.same({ err = "cannot send a function value (at payload)" }, checks["start bad args"], text)
    assert.are.same({ ok = true }, checks["terminate"], text)
    assert.are.same({ err = "no such child" }, checks["terminate unknown"], text)
    assert.truthy(checks["restart"].ok:find("^host|0x"), text)
    assert.are.same({ ok = true }, checks["delete"], text)
    -- a child that ignores its CANCEL is killed after stop_timeout (300ms)
    assert.are.same({ ok = "stubborn#3" }, checks["start stubborn"], text)
    assert.are.same({ ok = true }, checks["terminate stubborn"], text)
    assert.are.same({ ok = true }, checks["delete stubborn"], text)
    local ignored = logs(ev, "manage", "stubborn ignores cancel")
    local stopped = logs(ev, "manage", "child state", { child = "stubborn#3", state = "stopped" })
    assert.are.equal(1, #ignored, text)
    local waited = ts_seconds(stopped[1].ts) - ts_seconds(ignored[1].ts)
    assert.truthy(waited >= 0.28 and waited <= 0.3 + 0.5 * SLOW, ("killed %.3f s after its CANCEL\n%s"):format(waited, text))
    assert.are.same({ ok = 1 }, checks["count after delete"], text)
    assert.are.same({ ok = true }, checks["stop"], text)
    assert.are.same({ err = "supervisor is not running" }, checks["after stop"], text)
    assert.are.same({ ok = true }, checks["stop again"], text)
    local counts = logs(ev, "manage", "counts")[1]
    assert.are.same({ 2, 1, 1 }, { counts.total, counts.running, counts.stopped }, text)
    local which = logs(ev, "manage", "which")[1]
    assert.are.same({ "sleeper#1", "running", 1, true, "sleeper#2" },
                    { which.key, which.state, which.restarts, which.fresh, which.second }, text)
    -- sleeper 1 cancelled by terminate, 2 by delete, the restarted 1 by stop
    assert.are.same({ "sleeper cancelled 1", "sleeper cancelled 2", "sleeper cancelled 1" },
                    names(logs(ev, "manage", "sleeper cancelled"), "n"), text)
  end)

  it("nested: a supervised caller with its own supervisor dies; its children die with it, then it is restarted", function()
    wait_log("the caller ready", "owner", "caller ready", 1)
    host:wait_status("owner's 5 processes", function(by) return by["app:owner"].processes == 5 end)
    local r = host:ctl("start", "app:poke_owner")
    assert.are.equal(0, r.code, r.stdout .. r.stderr)
    wait_log("the caller restarted", "owner", "caller ready", 2)
    host:wait_status("owner's 5 processes again", function(by) return by["app:owner"].processes == 5 end)
    local ev = host:poll()
    text = host:log_text()
    -- the first caller's sleepers were killed, not cancelled: its state closed with them running
    assert.are.equal(0, #logs(ev, "owner", "sleeper cancelled"), text)
    assert.are.equal(6, #logs(ev, "owner", "sleeper up"), text)
    local failed = logs(ev, "owner", "child state", { supervisor = "outer", state = "restarting" })
    assert.are.equal(1, #failed, text)
    assert.truthy(failed[1].reason:find("caller gives up", 1, true), text)
    assert.are.same({ "starting", "running" }, ch.states(ev, "app:owner"), text)
  end)

  it("restart.policy always, on_failure and never; bad options raise", function()
    local p = wait_log("the policies", "policies", "policies", 1)[1]
    text = host:log_text()
    assert.truthy(p.always:find(":restarted$"), text)
    assert.are.equal("stopped:0", p.on_failure, text)
    assert.are.equal("failed:0", p.never, text)
    local want = {
      "bad argument #1 to 'start' (field 'strategy' must be one_for_one, one_for_all or rest_for_one)",
      "bad argument #1 to 'start' (field 'intensity' must be a number >= 0)",
      "bad argument #1 to 'start' (field 'period' must be a duration (\"250ms\", \"1.5s\" or seconds))",
      "bad argument #1 to 'start' (unknown field 'colour' (expected strategy, intensity, period, restart, decide, stop_timeout, max_children or name))",
      "bad argument #1 to 'start' (field 'restart.policy' must be on_failure, always or never)",
      "bad argument #1 to 'start' (field 'decide' must be a function)",
    }
    for i, w in ipairs(want) do
      assert.truthy(p.bad[i]:find("^false .*" .. w:gsub("%p", "%%%0") .. "$"), p.bad[i] .. "\n" .. text)
    end
  end)

  it("the host stops cleanly with supervisors running", function()
    host:stop()
  end)
end)
