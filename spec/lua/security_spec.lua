-- The `security` module and the host's guarded calls end to end (docs/security.md, and its
-- "Sandbox escapes tried" S10, S12; inheritance through two levels of spawn;
-- spawn, send and registry reads allowed and denied). Runs `steward run spec/apps/security`
-- (strict mode, then relaxed with a host config): each service prints its results once and
-- returns; the run is stopped with SIGTERM as soon as every expected report is in (or a
-- generous deadline passes), and the lines are compared whole.
local h = require("spec.lua.steward_helper")

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/security"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
local DEADLINE = 15 * SLOW

-- The reports that end a run: one "done" per service and the grandchild's line.
local FINAL = { "^admin done$", "^worker done$", "^plain done$", "^noactor done$", "^grandchild%-worker " }

local function complete(text)
  for _, pat in ipairs(FINAL) do
    local seen = false
    for line in text:gmatch("[^\n]+") do seen = seen or line:find(pat) ~= nil end
    if not seen then return false end
  end
  return true
end

-- Starts the app, waits for every final report, stops it; returns {lines = set, stdout, stderr}.
local function run_app(config_text, app, done)
  local out, err, rc = os.tmpname(), os.tmpname(), os.tmpname()
  local opts = ""
  local cfg
  if config_text then
    cfg = os.tmpname()
    local f = assert(io.open(cfg, "w"))
    f:write(config_text)
    f:close()
    opts = "--config " .. h.quote(cfg)
  end
  local cmd = ("%s run %s %s --log-format json >%s 2>%s </dev/null & echo $! >%s"):format(
    h.quote(h.steward), h.quote(app or APP), opts, out, err, rc)
  os.execute("(" .. cmd .. ") >/dev/null 2>&1")
  local pid = tonumber(h.read(rc))
  local deadline = os.time() + DEADLINE
  done = done or function() return complete(h.read(out)) end
  while not done(out, err) and os.time() < deadline do os.execute("sleep 0.05") end
  -- Stopped once the log says so (the exited process may linger a while as a zombie here).
  os.execute("kill -TERM " .. pid .. " 2>/dev/null")
  deadline = os.time() + DEADLINE
  while not h.read(err):find('"msg":"stopped"', 1, true) and os.time() < deadline do os.execute("sleep 0.05") end
  local r = { stdout = h.read(out), stderr = h.read(err), lines = {} }
  for line in r.stdout:gmatch("[^\n]+") do r.lines[line] = true end
  for _, p in ipairs({ out, err, rc, cfg }) do os.remove(p) end
  return r
end

local function has(r, line)
  assert(r.lines[line], "missing line: " .. line .. "\nstdout:\n" .. r.stdout .. "\nstderr:\n" .. r.stderr)
end

-- A file name as LuaJIT shows it in messages: paths of 60 bytes or more keep their last 56,
-- after "..." (the checkout may live anywhere).
local function shown(path)
  if #path >= 60 then return "..." .. path:sub(#path - 55) end
  return path
end

describe("security", function()
  local strict, relaxed

  setup(function()
    strict = run_app(nil)
    relaxed = run_app("security:\n  strict_mode: false\n")
  end)

  it("passes steward check", function()
    local r = h.run("check", APP)
    assert.are.equal(0, r.code, r.stderr)
  end)

  describe("can, check and actor", function()
    it("allows an admin anything (row 9) and lets a deny win (row 30)", function()
      has(strict, "admin row9=true")
      has(strict, "admin row30=false")
      has(strict, "admin check_delete=deny check_other=allow")
      has(strict, "worker can_any=false")
    end)

    it("raises bad argument for a nil action, a number resource or a string meta (row 39)", function()
      has(strict, "admin row39=false err=bad argument #1 to '?' (string expected, got nil)")
      has(strict, "admin number_resource=false err=bad argument #2 to '?' (string expected, got number)")
      has(strict, "admin string_meta=false err=bad argument #3 to '?' (table or nil expected, got string)")
    end)

    it("reads the call's meta in place, with value_from the actor id", function()
      has(strict, "worker doc_own=true doc_other=false doc_nometa=false")
      has(strict, "worker contains_list=true contains_miss=false contains_str=true contains_num=false")
      has(strict, "worker nested=true nested_low=false nested_str=false nested_flat=false nested_fn=false")
    end)

    it("gives the actor's id and a copy of its meta", function()
      has(strict, "admin actor=svc:admin role=admin")
      has(strict, "worker team=ops")
    end)

    it("is read-only, and the host's own checks still deny (S10)", function()
      has(strict, "worker s10_write=false err=" .. shown(APP .. "/src/worker.lua") .. ":20: attempt to modify a read-only host module (field 'can')")
      has(strict, "worker s10_can=false")
      has(strict, "worker s10_spawn_other=permission denied: process.spawn on app:other")
    end)

    it("keeps the decision when the meta copy is changed (S12)", function()
      has(strict, "worker s12_can=false s12_role=worker")
    end)
  end)

  describe("strict mode", function()
    it("denies every check of a process with no actor (row 35); the no-context service is not guarded", function()
      has(strict, "plain can=false check=deny actor=nil spawn=ok get_secret=ok")
      has(strict, "noactor can=false check=deny actor=nil spawn=permission denied: process.spawn on app:other get_secret=nil")
    end)

    it("relaxed by security.strict_mode: false allows them (row 36)", function()
      has(relaxed, "plain can=true check=allow actor=nil spawn=ok get_secret=ok")
      has(relaxed, "noactor can=true check=allow actor=nil spawn=ok get_secret=ok")
      -- an actor's decisions do not change
      has(relaxed, "worker can_any=false")
      has(relaxed, "admin row30=false")
    end)
  end)

  describe("guarded host calls", function()
    it("process.spawn: allowed by policy, else permission denied naming the entry", function()
      has(strict, "admin spawn_other=string nil")
      has(strict, "worker spawn_child=string nil")
      -- checked before the lookup: a denied process cannot probe which ids exist
      has(strict, "worker spawn_missing=permission denied: process.spawn on app:no_such_process")
    end)

    it("process.send: the target as given (a name allowed, a pid denied)", function()
      has(strict, "admin send_self=true")
      has(strict, "worker send_box=true")
      local pid_line
      for line in pairs(strict.lines) do
        if line:find("^worker send_pid=") then pid_line = line end
      end
      assert.is_truthy(pid_line and pid_line:find("^worker send_pid=nil permission denied: process%.send on host|0x%x+$"), pid_line)
    end)

    it("registry.get checks before the lookup; find leaves out what may not be read", function()
      has(strict, "admin get_secret=hunter2 nil")
      has(strict, "admin find=3")
      has(strict, "worker get_public=blue nil")
      has(strict, "worker get_secret=nil permission denied: registry.read on app:secret_settings")
      has(strict, "worker get_missing=nil permission denied: registry.read on app:no_such_entry")
      has(strict, "worker find=app:public_settings,app:public_limits")
    end)
  end)

  describe("inheritance", function()
    it("passes the service's context through two levels of spawn", function()
      has(strict, "child-worker actor=svc:worker can_any=false")
      has(strict, "child-worker spawn_grandchild=string nil")
      has(strict, "grandchild-worker actor=svc:worker can_any=false doc_own=true " ..
        "spawn_other=permission denied: process.spawn on app:other " ..
        "get_secret=permission denied: registry.read on app:secret_settings")
    end)
  end)

  it("graph --why shows each service's actor and policies with where they come from", function()
    local r = h.run("graph", APP, "--why")
    assert.are.equal(0, r.code, r.stderr)
    assert.are.equal(table.concat({
      "level 0:",
      "  app:admin",
      "    actor svc:admin",
      "    policy allow app:everything_for_admins  (lifecycle.security.policies)",
      "    policy deny app:never_delete  (lifecycle.security.policies)",
      "  app:worker",
      "    actor svc:worker",
      "    policy allow app:everything_for_admins  (lifecycle.security.policies)",
      "    policy allow app:spawn_child  (lifecycle.security.groups app:workers)",
      "    policy allow app:read_public  (lifecycle.security.groups app:workers)",
      "    policy allow app:send_own_box  (lifecycle.security.groups app:workers)",
      "    policy allow app:docs_by_owner  (lifecycle.security.groups app:workers)",
      "    policy allow app:tagged  (lifecycle.security.groups app:workers)",
      "    policy allow app:nested  (lifecycle.security.groups app:workers)",
      "  app:plain",
      "  app:noactor",
      "    no actor (strict mode denies every check)",
      "    policy allow app:everything_for_admins  (lifecycle.security.policies)",
    }, "\n") .. "\n", r.stdout)
  end)

  it("examples/security passes check; its log shows the worker denied what the admin may do", function()
    local EX = "examples/security"
    assert.are.equal(0, h.run("check", EX).code)
    local r = run_app(nil, EX, function(_, err)
      local _, n = h.read(err):gsub('"msg":"tasks done"', "")
      return n >= 2
    end)
    local seen = {}
    for line in r.stderr:gmatch("[^\n]+") do
      local level, msg, svc = line:match('"level":"(%a+)","msg":"([^"]+)".-"service":"demo:(%a+)"')
      if svc then seen[msg .. " " .. level .. " " .. svc] = line end
    end
    for _, want in ipairs({
      "read demo:credentials info admin", "read demo:credentials warn worker",
      "spawn demo:cleanup info admin", "spawn demo:cleanup warn worker",
      "doc.write doc:2 info admin", "doc.write doc:2 warn worker",
    }) do
      assert.is_truthy(seen[want], "no log line: " .. want .. "\n" .. r.stderr)
    end
    assert.is_truthy(r.stderr:find('permission denied: process.spawn on demo:cleanup', 1, true))
  end)

  it("logs no error", function()
    assert.is_nil(strict.stderr:find('"level":"error"'), strict.stderr)
  end)
end)
