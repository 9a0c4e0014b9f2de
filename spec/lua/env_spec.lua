-- The env module and ${env:NAME} substitution end to end (docs/lua-api.md "env",
-- docs/registry.md "Environment variables in values"): spec/apps/env run with -x (not guarded)
-- and as a guarded service, each with the host variables the spec sets; and `steward check`
-- without a variable that has no default.
local h = require("spec.lua.steward_helper")

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/env"
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
local ENV = "env -u SPEC_ENV_UNSET -u SPEC_ENV_HOST SPEC_ENV_PORT=8080 SPEC_ENV_SECRET=s3cret SHARED=from-host "

-- Runs `steward ARGS...` under ENV; {code, stdout, stderr}.
local function steward(env, ...)
  local words = { env .. h.quote(h.steward) }
  for _, a in ipairs({ ... }) do words[#words + 1] = h.quote(a) end
  local out, err = os.tmpname(), os.tmpname()
  local ok, how, code = os.execute(table.concat(words, " ") .. " >" .. out .. " 2>" .. err .. " </dev/null")
  if type(ok) == "number" then code = ok >= 256 and math.floor(ok / 256) or ok end
  local r = { code = code, stdout = h.read(out), stderr = h.read(err) }
  os.remove(out)
  os.remove(err)
  return r
end

local function tab(...) return table.concat({ ... }, "\t") end

describe("env", function()
  it("reads what env.variables exposes: defaults, the host's value for from_process, nil, err otherwise", function()
    local r = steward(ENV, "run", APP, "-x", "env:show")
    assert.are.equal("", r.stderr)
    assert.are.equal(table.concat({
      tab("plain", "APP_MODE", "string", "dev", "nil"),
      tab("plain", "NUMBER", "string", "42", "nil"),
      -- in vars and from_process: the host's value wins when it is set
      tab("plain", "SHARED", "string", "from-host", "nil"),
      tab("plain", "SPEC_ENV_SECRET", "string", "s3cret", "nil"),
      tab("plain", "SPEC_ENV_UNSET", "nil", "nil",
          "env.get: SPEC_ENV_UNSET is not set in the host environment and has no default"),
      tab("plain", "NOT_EXPOSED", "nil", "nil", "env.get: NOT_EXPOSED is not exposed (no env.variables entry lists it)"),
      -- set on every host, but no entry exposes it
      tab("plain", "HOME", "nil", "nil", "env.get: HOME is not exposed (no env.variables entry lists it)"),
      tab("raises", "false", "bad argument #1 to '?' (string expected, got no value)"),
      tab("settings", "http://localhost:8080/x", "number", "8080", "${env:SPEC_ENV_PORT}"),
      "plain done",
    }, "\n") .. "\n", r.stdout)
    assert.are.equal(0, r.code)
  end)

  it("falls back to the default of a from_process variable the host does not set", function()
    local r = steward("env -u SHARED SPEC_ENV_PORT=1 ", "run", APP, "-x", "env:show")
    assert.truthy(r.stdout:find(tab("plain", "SHARED", "string", "from-default", "nil"), 1, true), r.stdout)
    assert.truthy(r.stdout:find(tab("plain", "SPEC_ENV_SECRET", "nil", "nil"), 1, true), r.stdout)
  end)

  it("is guarded by env.get on the name, before the lookup", function()
    local out, err, pidf = os.tmpname(), os.tmpname(), os.tmpname()
    os.execute(("(%s%s run %s >%s 2>%s </dev/null & echo $! >%s) >/dev/null 2>&1"):format(
      ENV, h.quote(h.steward), h.quote(APP), out, err, pidf))
    local pid = tonumber(h.read(pidf))
    local deadline = os.time() + 15 * SLOW
    while not h.read(out):find("guarded done", 1, true) and os.time() < deadline do os.execute("sleep 0.05") end
    os.execute("kill -TERM " .. pid .. " 2>/dev/null")
    deadline = os.time() + 15 * SLOW
    while not h.read(err):find("stopped", 1, true) and os.time() < deadline do os.execute("sleep 0.05") end
    local stdout = h.read(out)
    for _, p in ipairs({ out, err, pidf }) do os.remove(p) end
    local denied = function(name) return "permission denied: env.get on " .. name end
    assert.are.equal(table.concat({
      tab("guarded", "APP_MODE", "string", "dev", "nil"),
      tab("guarded", "NUMBER", "nil", "nil", denied("NUMBER")),
      tab("guarded", "SHARED", "nil", "nil", denied("SHARED")),
      tab("guarded", "SPEC_ENV_SECRET", "nil", "nil", denied("SPEC_ENV_SECRET")),
      tab("guarded", "SPEC_ENV_UNSET", "nil", "nil", denied("SPEC_ENV_UNSET")),
      -- allowed, but exposed by nothing
      tab("guarded", "NOT_EXPOSED", "nil", "nil", "env.get: NOT_EXPOSED is not exposed (no env.variables entry lists it)"),
      tab("guarded", "HOME", "nil", "nil", denied("HOME")),
      "guarded done",
    }, "\n") .. "\n", stdout)
  end)

  it("substitutes ${env:NAME} at load; a missing one with no default fails steward check at its line", function()
    local ok = steward(ENV, "check", APP)
    assert.are.equal(0, ok.code, ok.stderr)
    local r = steward("env -u SPEC_ENV_PORT ", "check", APP)
    assert.are.equal(table.concat({
      APP .. "/app.yaml:14:10: environment variable SPEC_ENV_PORT is not set (${env:SPEC_ENV_PORT} has no default)",
      APP .. "/app.yaml:15:11: environment variable SPEC_ENV_PORT is not set (${env:SPEC_ENV_PORT} has no default)",
      "2 errors",
    }, "\n") .. "\n", r.stderr)
    assert.are_not.equal(0, r.code)
    -- and nothing runs
    local run = steward("env -u SPEC_ENV_PORT ", "run", APP, "-x", "env:show")
    assert.are.equal("", run.stdout)
    assert.truthy(run.stderr:find("SPEC_ENV_PORT is not set", 1, true), run.stderr)
  end)

  it("uses ${env:NAME:-default} when the variable is unset or empty", function()
    local r = steward(ENV:gsub("%-u SPEC_ENV_HOST ", "SPEC_ENV_HOST=example.org "), "run", APP, "-x", "env:show")
    assert.truthy(r.stdout:find("http://example.org:8080/x", 1, true), r.stdout)
    r = steward(ENV:gsub("%-u SPEC_ENV_HOST ", "SPEC_ENV_HOST= "), "run", APP, "-x", "env:show")
    assert.truthy(r.stdout:find("http://localhost:8080/x", 1, true), r.stdout)
  end)
end)
