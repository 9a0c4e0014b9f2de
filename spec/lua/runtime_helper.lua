-- Shared by the runtime specs (channel, time, modules, sandbox, soak): run `steward run DIR -x ID
-- ARGS...` on an app under spec/apps/runtime/ with a hard time limit, and measure wall time.
-- A run that hits the limit ends with code 124 (timeout(1)); `hung` says so.
local h = require("spec.lua.steward_helper")
local assert = require("luassert")
local ok_system, system = pcall(require, "system") -- luasystem ships with busted

local M = {}

M.APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/runtime"

-- Wall-clock seconds (monotonic when luasystem is there).
function M.now()
  if ok_system and system.monotime then return system.monotime() end
  if ok_system and system.gettime then return system.gettime() end
  return os.time()
end

function M.sleep(s)
  if ok_system and system.sleep then system.sleep(s) else os.execute("sleep " .. s) end
end

-- The exit code os.execute reports, under Lua 5.1 or 5.2.
function M.exit_code(a, b, c)
  if type(a) == "number" then return a >= 256 and math.floor(a / 256) or a end
  if b == "exit" then return c end
  return 128 + (c or 0)
end

-- opts: {limit = seconds (20), options = {...} (words before DIR), dir = the app's directory
-- (instead of APPS/app)}. Returns
-- {code, stdout, stderr, elapsed, hung}.
function M.run(app, id, args, opts)
  opts = opts or {}
  local words = { "timeout", "-k", "2", tostring(opts.limit or 20), h.quote(h.steward), "run" }
  for _, o in ipairs(opts.options or {}) do words[#words + 1] = h.quote(o) end
  words[#words + 1] = h.quote(opts.dir or (M.APPS .. "/" .. app))
  words[#words + 1] = "-x"
  words[#words + 1] = h.quote(id)
  for _, a in ipairs(args or {}) do words[#words + 1] = h.quote(tostring(a)) end
  local out, err = os.tmpname(), os.tmpname()
  local t0 = M.now()
  local code = M.exit_code(os.execute(table.concat(words, " ") .. " >" .. out .. " 2>" .. err .. " </dev/null"))
  local r = { code = code, elapsed = M.now() - t0, stdout = h.read(out), stderr = h.read(err) }
  r.hung = code == 124 or code == 137
  os.remove(out)
  os.remove(err)
  return r
end

-- A run that must succeed (exit 0, nothing on stderr unless allowed): shows stderr when not.
function M.ok(r, allow_stderr)
  assert(not r.hung, "steward hung (killed by timeout)\n" .. r.stderr)
  assert.are.equal(0, r.code, "exit code " .. tostring(r.code) .. "; stderr:\n" .. r.stderr)
  if not allow_stderr then assert.are.equal("", r.stderr) end
  return r
end

-- The stdout lines as a list.
function M.lines(s)
  local t = {}
  for line in s:gmatch("([^\n]*)\n") do t[#t + 1] = line end
  return t
end

-- "key=value" words of stdout lines as a table (the apps print results that way).
function M.fields(s)
  local t = {}
  for k, v in s:gmatch("([%w_]+)=([^\n]*)") do t[k] = v end
  return t
end

-- A process driven line by line (the net and http kill specs): runs `steward run APP_DIR -x ID
-- CTL`, whose process answers lines sent to the unix socket CTL (through spec_sock), waits
-- until it prints "ready", then calls fn(d) with d.ask(line) (the reply), d.fds() (the host's
-- open fds) and d.deadline. Afterwards it asks "quit", waits for the host to end and checks it
-- wrote nothing on stderr (no error, and no leak under sanitizers). Cleans up whatever happens.
function M.with_driven(app_dir, id, fn)
  local slow = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
  local spec_sock = (h.steward:match("^(.*)/[^/]*$") or ".") .. "/spec_sock"
  local ctl, out, err, pidfile = os.tmpname(), os.tmpname(), os.tmpname(), os.tmpname()
  os.remove(ctl)
  ctl = ctl .. ".sock"
  os.execute(("(%s run %s -x %s %s >%s 2>%s </dev/null & echo $! >%s) >/dev/null 2>&1"):format(
    h.quote(h.steward), h.quote(app_dir), h.quote(id), h.quote(ctl), out, err, pidfile))
  local pid = tonumber(h.read(pidfile))
  local d = { deadline = M.now() + 15 * slow }
  function d.ask(line)
    local p = assert(io.popen(("printf '%%s\\n' %s | %s send %s"):format(line, h.quote(spec_sock), h.quote(ctl))))
    local reply = p:read("*a")
    p:close()
    return reply
  end
  function d.fds() return h.proc_sample(pid).fds end
  local ok, e = pcall(function()
    while not (h.read(out)):find("ready\n") and M.now() < d.deadline do M.sleep(0.01) end
    assert.are.equal("ready\n", h.read(out), h.read(err))
    fn(d)
    assert.are.equal("bye\n", d.ask("quit"))
    local function running()
      local status = h.read_if("/proc/" .. pid .. "/status")
      return status and not status:find("State:%s*Z")
    end
    while running() and M.now() < d.deadline do M.sleep(0.01) end
    assert.are.equal("", h.read(err)) -- nothing on stderr: no error, and no leak under sanitizers
    assert.are.equal("ready\n", h.read(out))
  end)
  os.execute("kill -KILL " .. pid .. " 2>/dev/null")
  for _, p in ipairs { out, err, pidfile, ctl } do os.remove(p) end
  assert(ok, e)
end

-- Waits until fds() gives baseline again (or the deadline), and asserts it did.
function M.wait_fds(d, baseline)
  local now = d.fds()
  while now ~= baseline and M.now() < d.deadline do
    M.sleep(0.01)
    now = d.fds()
  end
  assert.are.equal(baseline, now, "open fds after the kill")
end

return M
