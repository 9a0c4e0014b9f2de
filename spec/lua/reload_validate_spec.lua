-- Reload with validation end to end (docs/supervision.md "Validation", lifecycle.validate in
-- docs/registry.md): a copy of spec/apps/service/validate runs with its own control socket; each
-- spec edits the services' config, reloads (`steward reload` or SIGHUP) and asserts from the
-- client's exit code and output, `steward status` and the JSON event log that a rejected reload
-- changed nothing and an accepted one applied.
local h = require("spec.lua.steward_helper")
local C = require("spec.lua.control_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"

-- A copy of the app, edited by the spec, removed after.
local function with_host(fn)
  local dir = C.tmp(".app")
  os.execute(("mkdir -p %s && cp -r %s/. %s"):format(h.quote(dir), h.quote(SPEC .. "/apps/service/validate"), h.quote(dir)))
  local host = C.launch({ dir = dir })
  finally(function()
    host:cleanup()
    os.execute("rm -rf " .. h.quote(dir))
  end)
  host:wait_status("every service running", function(by)
    for _, id in ipairs({ "app:srv", "app:other", "app:plain" }) do
      if not (by[id] and by[id].state == "running") then return false end
    end
    return true
  end)
  return fn(host, dir)
end

-- Rewrites app.yaml with each {from, to} substitution made exactly once.
local function edit(dir, ...)
  local path = dir .. "/app.yaml"
  local yaml = h.read(path)
  for _, sub in ipairs({ ... }) do
    local n
    yaml, n = yaml:gsub(sub[1]:gsub("%p", "%%%0"), (sub[2]:gsub("%%", "%%%%")))
    assert.are.equal(1, n, sub[1])
  end
  local f = assert(io.open(path, "w"))
  f:write(yaml)
  f:close()
end

local function pids(host)
  local out = {}
  for _, s in ipairs(host:status().services) do out[s.id] = s.pid end
  return out
end

-- The "run" events of a service (each run logs its config).
local function runs(events, id)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == "run" and e.service == id then out[#out + 1] = e end
  end
  return out
end

local function find(events, msg, service)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == msg and (not service or e.service == service) then out[#out + 1] = e end
  end
  return out
end

-- srv to `mode` (port 2), other's and plain's config changed too: the whole reload is judged.
local function change_all(dir, mode)
  edit(dir, { "config: { mode: start, port: 1 }", ("config: { mode: %s, port: 2 }"):format(mode) },
            { "config: { port: 10 }", "config: { port: 11 }" },
            { "config: { port: 100 }", "config: { port: 101 }" })
end

-- Nothing changed: same pids, all running, and srv restarted by hand still runs the old config.
local function assert_unchanged(host, before)
  local by = {}
  for _, s in ipairs(host:status().services) do by[s.id] = s end
  for id, pid in pairs(before) do
    assert.are.equal(pid, by[id].pid, id)
    assert.are.equal("running", by[id].state, id)
  end
  local r = host:ctl("restart", "app:srv")
  assert.are.equal(0, r.code, r.stderr)
  local ev = host:wait("srv's second run", function(ev) return #runs(ev, "app:srv") >= 2 and ev end)
  local again = runs(ev, "app:srv")[2]
  assert.are.same({ mode = "start", port = 1 }, again.config, host:log_text())
  assert.are.equal(1, #runs(ev, "app:other"), "other restarted")
  assert.are.equal(1, #runs(ev, "app:plain"), "plain restarted")
end

describe("reload with validation", function()
  it("a validator returning nil, err rejects the whole reload: nothing changes, the reason is printed and logged", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "reject")
      local r = host:ctl("reload")
      assert.are.equal(1, r.code, r.stdout)
      assert.truthy(r.stderr:find("reload failed: nothing changed", 1, true), r.stderr)
      assert.truthy(r.stderr:find("app:srv: validator app:check: mode reject is refused", 1, true), r.stderr)
      local ev = host:poll()
      local failed = find(ev, "reload validation failed", "app:srv")
      assert.are.equal(1, #failed, host:log_text())
      assert.are.equal("app:check", failed[1].validator)
      assert.are.equal("mode reject is refused", failed[1].error)
      assert.are.equal(1, #find(ev, "reload rejected: nothing changed"), host:log_text())
      assert.are.equal(0, #find(ev, "reloaded"), host:log_text())
      -- each validator saw (new_config, old_config); other's accepted, which does not save it
      local seen = find(ev, "validating")
      assert.are.equal(1, #seen, host:log_text())
      assert.are.same({ mode = "reject", port = 2 }, seen[1].new)
      assert.are.same({ mode = "start", port = 1 }, seen[1].old)
      assert.are.same({ port = 11 }, find(ev, "accepting")[1].new)
      assert_unchanged(host, before)
      host:stop()
    end)
  end)

  it("a raised error rejects it too, with the message and without the traceback", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "raise")
      local r = host:ctl("reload")
      assert.are.equal(1, r.code, r.stdout)
      assert.truthy(r.stderr:find("raised by the validator", 1, true), r.stderr)
      assert.falsy(r.stderr:find("stack traceback", 1, true), r.stderr)
      assert_unchanged(host, before)
      host:stop()
    end)
  end)

  it("accepting validators let it apply: the changed services restart with the new config", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "ok")
      local r = host:ctl("reload")
      assert.are.equal(0, r.code, r.stderr)
      assert.truthy(r.stdout:find("reloaded", 1, true), r.stdout)
      local ev = host:wait("every service's second run", function(ev)
        return #runs(ev, "app:srv") >= 2 and #runs(ev, "app:other") >= 2 and #runs(ev, "app:plain") >= 2 and ev
      end)
      assert.are.same({ mode = "ok", port = 2 }, runs(ev, "app:srv")[2].config)
      assert.are.same({ port = 11 }, runs(ev, "app:other")[2].config)
      assert.are.same({ port = 101 }, runs(ev, "app:plain")[2].config)
      assert.are.equal(1, #find(ev, "reload validated"), host:log_text())
      -- validated before anything stopped
      local validated = find(ev, "reload validated")[1].i
      for _, e in ipairs(ev) do
        if e.msg == "service state" and e.state == "stopping" then assert.truthy(e.i > validated, host:log_text()) end
      end
      local after = pids(host)
      for id, pid in pairs(before) do assert.are_not.equal(pid, after[id], id) end
      host:stop()
    end)
  end)

  it("a validator that hangs past start_timeout is killed and rejects the reload", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "hang")
      local r = host:ctl("reload")
      assert.are.equal(1, r.code, r.stdout)
      assert.truthy(r.stderr:find("app:srv: validator app:check: not done within start_timeout (1s)", 1, true), r.stderr)
      assert_unchanged(host, before)
      host:stop()
    end)
  end)

  it("SIGHUP logs each reason; a second reload while one is validated is refused", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "hang")
      host:signal("HUP")
      host:wait("the validator", function(ev) return #find(ev, "validating") == 1 end)
      local r = host:ctl("reload")
      assert.are.equal(1, r.code, r.stdout)
      assert.truthy(r.stderr:find("a reload is being validated", 1, true), r.stderr)
      local ev = host:wait("the rejection", function(ev) return #find(ev, "reload rejected: nothing changed") == 1 and ev end)
      local failed = find(ev, "reload validation failed", "app:srv")
      assert.are.equal(1, #failed, host:log_text())
      assert.truthy(failed[1].error:find("start_timeout", 1, true), host:log_text())
      assert_unchanged(host, before)
      host:stop()
    end)
  end)

  it("a validator that cannot start (its new code does not compile) rejects the reload", function()
    with_host(function(host, dir)
      local before = pids(host)
      change_all(dir, "ok")
      edit(dir, { "if new.mode == \"reject\" then", "if new.mode == \"reject\" the" })
      local r = host:ctl("reload")
      assert.are.equal(1, r.code, r.stdout)
      assert.truthy(r.stderr:find("app:srv: validator app:check: ", 1, true), r.stderr)
      assert.truthy(r.stderr:find("'then' expected", 1, true), r.stderr)
      assert_unchanged(host, before)
      host:stop()
    end)
  end)

  it("a shutdown during validation kills the validators and rejects the reload", function()
    with_host(function(host, dir)
      change_all(dir, "hang")
      host:signal("HUP")
      host:wait("the validator", function(ev) return #find(ev, "validating") == 1 end)
      host:stop()
      local ev = host:poll()
      local failed = find(ev, "reload validation failed", "app:srv")
      assert.are.equal(1, #failed, host:log_text())
      assert.are.equal("the host is shutting down", failed[1].error)
      assert.are.equal(0, #find(ev, "reloaded"), host:log_text())
      assert.are.equal(1, #runs(ev, "app:srv"), host:log_text())
    end)
  end)

  it("a service the reload adds is not validated: it has no old config", function()
    with_host(function(host, dir)
      local f = assert(io.open(dir .. "/app.yaml", "a"))
      f:write("\n  - name: added\n    kind: process.service\n    process: run_process\n" ..
              "    config: { mode: reject }\n    lifecycle: { auto_start: true, validate: check }\n")
      f:close()
      local r = host:ctl("reload")
      assert.are.equal(0, r.code, r.stderr)
      local ev = host:wait("added running", function(ev) return #runs(ev, "app:added") == 1 and ev end)
      assert.are.equal(0, #find(ev, "reload validating"), host:log_text())
      host:stop()
    end)
  end)
end)
