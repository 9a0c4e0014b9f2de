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

-- opts: {limit = seconds (20), options = {...} (words before DIR)}. Returns
-- {code, stdout, stderr, elapsed, hung}.
function M.run(app, id, args, opts)
  opts = opts or {}
  local words = { "timeout", "-k", "2", tostring(opts.limit or 20), h.quote(h.steward), "run" }
  for _, o in ipairs(opts.options or {}) do words[#words + 1] = h.quote(o) end
  words[#words + 1] = h.quote(M.APPS .. "/" .. app)
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

return M
