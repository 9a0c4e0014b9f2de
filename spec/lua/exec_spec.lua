-- The exec module (docs/lua-api.md "exec") on the real binary: each case runs `steward run
-- --config C -x exec:run CASE` on a fresh copy of spec/apps/exec (C allows exec), and compares
-- what the case printed; processes left behind are looked for in /proc by process group.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local host = require("spec.lua.host_helper")

local SPEC = os.getenv("SPEC_DIR") or "spec"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function fresh_app()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute(("mkdir -p %s && cp -r %s/apps/exec/. %s && mkdir %s/work"):format(
    h.quote(dir), h.quote(SPEC), h.quote(dir), h.quote(dir))))
  return dir
end

local function remove(path) os.execute("rm -rf " .. h.quote(path)) end

-- A host config allowing exec, plus `more` (YAML lines).
local function config(more)
  local path = os.tmpname()
  write(path, "exec: { allow: true }\n" .. (more or ""))
  return path
end

local function run(case, opts)
  opts = opts or {}
  local dir, conf = fresh_app(), opts.config ~= false and config(opts.more) or nil
  local r = rt.run(nil, "exec:run", { case }, { dir = dir, limit = 30 * SLOW,
                                               options = conf and { "--config", conf } or nil })
  if conf then os.remove(conf) end
  remove(dir)
  rt.ok(r)
  local got = {}
  for _, line in ipairs(rt.lines(r.stdout)) do
    local label, rest = line:match("^([^\t]*)\t?(.*)$")
    got[label] = rest
  end
  return got, r
end

-- Processes (not zombies) in process group pgid.
local function group_members(pgid)
  local p = io.popen("cat /proc/[0-9]*/stat 2>/dev/null | sed 's/.*) //' | awk '$1 != \"Z\" {print $3}'")
  local n = 0
  for line in p:lines() do
    if tonumber(line) == pgid then n = n + 1 end
  end
  p:close()
  return n
end

-- Waits (a little) until group pgid has no live member; returns how many are left.
local function group_gone(pgid)
  local deadline = rt.now() + 5 * SLOW
  local n = group_members(pgid)
  while n > 0 and rt.now() < deadline do
    rt.sleep(0.02)
    n = group_members(pgid)
  end
  return n
end

describe("exec", function()
  it("runs argv without a shell: exit code, signal, output, stdin, env, cwd", function()
    local got = run("run")
    assert.are.equal("code=0 signal=nil stdout=hello world\\n stderr=", got.echo)
    assert.are.equal("code=0 signal=nil stdout=$HOME a;b *\\n stderr=", got["no shell"])
    assert.are.equal("code=3 signal=nil stdout=out\\n stderr=err\\n", got["exit code"])
    assert.are.equal("code=nil signal=15 stdout= stderr=", got.signal)
    assert.are.equal("code=0 signal=nil stdout=fed\\nin stderr=", got.stdin)
    assert.are.equal("code=0 signal=nil stdout= stderr=", got["no stdin"])
    -- the child's environment: PATH and what env gives, nothing of the host's (sh adds PWD)
    assert.are.equal("code=0 signal=nil stdout=bar\\nFOO PATH PWD  stderr=", got.env)
    assert.are.equal("code=0 signal=nil stdout=ok\\n stderr=\ttrue", got.cwd)
    assert.are.equal("code=0 signal=nil stdout=abs\\n stderr=", got.absolute)
    assert.are.equal("nil\tprogram not found: no-such-program-here", got["not found"])
    assert.are.equal("nil\tprogram not found: ./x", got.relative)
    assert.are.equal("nil\tno such volume: exec:nope", got["bad cwd"])
    assert.are.equal("nil\tcannot start /bin/sh in exec:work:nodir: no such file or directory", got["missing cwd"])
    assert.are.equal("nil\tcannot start /etc/passwd: permission denied", got["not executable"])
    assert.matches("^false\t.*exec: cmd: expected 1 to 4096 strings", got["empty cmd"])
    assert.matches("^false\t.*exec: cmd%[2%]: expected a string without NUL bytes", got["bad arg"])
    assert.matches('^false\t.*exec: env: expected string names %(no "="%) and string values', got["bad env"])
    -- what the command leaves running in its group is killed when it exits: no wait for EOF
    assert.are.equal("code=0 signal=nil stdout=started\\n stderr=", got.leftover)
  end)

  it("a command past its timeout is killed with its whole process group", function()
    local got, r = run("timeout")
    assert.are.equal("nil\ttimeout", got.timeout)
    assert.are.equal("true", got["took less than 5s"])
    local pgid = tonumber(got.pgid)
    assert.is_true(pgid and pgid > 1, r.stdout)
    assert.are.equal(0, group_gone(pgid))
  end)

  it("caps what exec.run keeps of each stream (limits.exec_output)", function()
    local got = run("output", { more = "limits: { exec_output: 1KB }\n" })
    assert.are.equal("nil\toutput too large (at most 1024 bytes of each stream)", got.cap)
    assert.are.equal("1024", got["at the cap"])
  end)

  it("the output exec.run gathers counts in the host's memory cap", function()
    local got = run("budget", { more = "limits: { memory: 4MB }\n" })
    assert.are.equal("nil\thost memory limit reached", got.run)
    assert.are.equal("1000", got.small)
  end)

  it("spawn: write, close_stdin, read_stdout, read_stderr, wait, kill", function()
    local got = run("spawn")
    assert.are.equal("true\ttrue", got.tostring)
    assert.are.equal("true\ttrue", got.write)
    assert.are.equal("one\\ntwo\\n", got.read)
    assert.are.equal("true\tnil\tstdin closed", got["close stdin"])
    assert.are.equal("bye\\n\tnil\teof", got.stderr)
    assert.are.equal("nil\teof", got["stdout end"])
    assert.are.equal("7\tnil\t7", got.wait)
    assert.are.equal("nil\texited", got["kill after exit"])
    assert.are.equal("true\t9", got.kill)
    assert.are.equal("nil\ttimeout", got["spawn timeout"])
    assert.are.equal("1000000\t0", got.big)
    assert.are.equal("0\tnil\tbusy: another task waits on this", got.busy)
    assert.matches("^false\t.*expected a signal", got["bad signal"])
  end)

  it("at most 64 commands per process; close kills one and frees its place", function()
    local got = run("limit")
    assert.are.equal("64\ttoo many commands (at most 64 per process)", got.commands)
    assert.are.equal("true\ttrue\tnil\tclosed", got.close)
    assert.are.equal("true", got["after one closed"])
    assert.are.equal("nil\tclosed", got.waiter) -- a task waiting on it is told
  end)

  it("a process killed while its command runs leaves no process of it behind", function()
    local got, r = run("kill")
    assert.are.equal("true", got.terminate)
    local pgid = tonumber(got.pgid)
    assert.is_true(pgid and pgid > 1, r.stdout)
    assert.are.equal(0, group_gone(pgid))
  end)

  it("a run that ends while a process holds commands and files shuts down cleanly", function()
    -- -x waits for what its process left: the leaver ignores its CANCEL and is killed,
    -- commands, files and all, after shutdown.timeout (300ms here; docs/lua-api.md "steward run -x")
    local got, r = run("leave", { more = "shutdown: { timeout: 300ms }\n" })
    assert.is_true(r.elapsed < 5 * SLOW, "took " .. r.elapsed .. " s")
    for _, which in ipairs { "spawned", "ran" } do
      local pgid = tonumber(got[which])
      assert.is_true(pgid and pgid > 1, r.stdout)
      assert.are.equal(0, group_gone(pgid), which)
    end
  end)

  it("is off unless the host config allows it", function()
    local got = run("disabled", { config = false })
    assert.are.equal("nil\texec is disabled on this host (host config exec.allow)", got.run)
    assert.are.equal("nil\texec is disabled on this host (host config exec.allow)", got.spawn)
  end)

  it("exec.run is guarded on the program's absolute path", function()
    local dir, conf = fresh_app(), config()
    host.with_app("exec", function(hst)
      local ev = hst:wait("the probe", function(events)
        for _, e in ipairs(events) do if e.msg == "probe" then return e end end
      end)
      assert.are.equal("hi\n", ev.echo)
      assert.matches("^permission denied: exec.run on /[%w/]*/ls$", ev.ls)
      assert.matches("^permission denied: exec.run on /[%w/]*/ls$", ev.spawn)
      hst:stop()
    end, dir, "--config " .. h.quote(conf))
    os.remove(conf)
    remove(dir)
  end)
end)
