-- Logs (docs/operating.md): text by default, colour only on a terminal and never with NO_COLOR, JSON
-- lines with --log-format json, --log-level (or the config's log.level) filters, every Lua
-- `logger` line carries its service id and pid, and every failure comes with a Lua traceback.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")

local APP = C.APPS .. "/app"
local ESC = "\27["

-- `steward ARGS` with stdout and stderr on a pseudo-terminal (script(1)); the output, or nil
-- when script is not there.
local function on_tty(env, ...)
  if not (os.execute("command -v script >/dev/null 2>&1") == true or os.execute("command -v script >/dev/null 2>&1") == 0) then
    return nil
  end
  local words = { h.quote(h.steward) }
  for _, a in ipairs({ ... }) do words[#words + 1] = h.quote(a) end
  local out = C.tmp(".tty")
  os.execute(("%s script -qec %s /dev/null >%s 2>&1 </dev/null"):format(env, h.quote(table.concat(words, " ")), out))
  local text = h.read(out)
  os.remove(out)
  return text
end

describe("text logs", function()
  it("have colour on a terminal only, and never with NO_COLOR", function()
    local plain = h.run("run", APP, "-x", "app:hello")
    assert.are.equal(0, plain.code, plain.stderr)
    assert.truthy(plain.stderr:find("INFO  -  info line  k=v pid=host|0x", 1, true), plain.stderr)
    assert.is_nil(plain.stderr:find(ESC, 1, true))
    local tty = on_tty("", "run", APP, "-x", "app:hello")
    if not tty then
      pending("script(1) is needed for a terminal")
      return
    end
    assert.truthy(tty:find(ESC .. "32mINFO" .. ESC .. "0m", 1, true), tty)
    assert.truthy(tty:find(ESC .. "1;31mERROR" .. ESC .. "0m", 1, true), tty)
    local no_color = on_tty("NO_COLOR=1", "run", APP, "-x", "app:hello")
    assert.truthy(no_color:find("INFO  -  info line", 1, true), no_color)
    assert.is_nil(no_color:find(ESC, 1, true), no_color)
    -- JSON never has colour, even on a terminal
    local json_tty = on_tty("", "run", APP, "--log-format", "json", "-x", "app:hello")
    assert.is_nil(json_tty:find(ESC, 1, true), json_tty)
  end)
end)

describe("--log-level", function()
  it("filters by level, from the command line or the host config", function()
    local r = h.run("run", APP, "--log-level", "warn", "-x", "app:hello")
    assert.is_nil(r.stderr:find("info line", 1, true))
    assert.is_nil(r.stderr:find("debug line", 1, true))
    assert.truthy(r.stderr:find("warn line", 1, true))
    assert.truthy(r.stderr:find("error line", 1, true))
    r = h.run("run", APP, "--log-level", "debug", "-x", "app:hello")
    assert.truthy(r.stderr:find("DEBUG -  debug line", 1, true), r.stderr)
    local cfg = C.tmp(".yaml")
    local f = assert(io.open(cfg, "w"))
    f:write("log:\n  level: error\n  format: json\n")
    f:close()
    r = h.run("run", APP, "--config", cfg, "-x", "app:hello")
    os.remove(cfg)
    local lines = rt.lines(r.stderr)
    assert.are.equal(1, #lines, r.stderr)
    local e = C.decode(lines[1])
    assert.are.equal("error", e.level)
    assert.are.equal("error line", e.msg)
    r = h.run("run", APP, "--log-level", "loud", "-x", "app:hello")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find('unknown log level "loud"', 1, true))
  end)
end)

describe("service logs", function()
  it("carry the service id and pid on every logger line; every failure has a traceback", function()
    local host = C.launch({ dir = APP })
    finally(function() host:cleanup() end)
    host:wait_status("db running", function(by) return by["app:db"].state == "running" end)
    local pids = {}
    for _, s in ipairs(host:status().services) do pids[s.id] = s.pid end
    local failed = host:wait_event({ msg = "process failed", service = "app:crash" })
    host:stop()
    local ev = host:poll()
    local seen = 0
    for _, e in ipairs(ev) do
      assert.are_not.equal("(text)", e.msg, e.text) -- every line is JSON
      if e.msg == "serving" then
        seen = seen + 1
        assert.are.equal(42, e.answer)
        assert.is_string(e.service)
        assert.is_string(e.pid)
        if e.service == "app:db" then assert.are.equal(pids["app:db"], e.pid) end
      end
    end
    assert.are.equal(3, seen) -- db, api, web
    local f = ev[failed]
    assert.are.equal("error", f.level)
    assert.truthy(f.error:find("crash.lua:3: boom: crashed on purpose", 1, true), f.error)
    assert.truthy(f.traceback:find("^stack traceback:"), f.traceback)
    assert.truthy(f.traceback:find("crash.lua:3: in function 'connect'", 1, true), f.traceback)
    -- every failure: each crash has its traceback
    local crashes, traces = 0, 0
    for _, e in ipairs(ev) do
      if e.msg == "service state" and e.service == "app:crash" and e.state == "failed" then crashes = crashes + 1 end
      if e.msg == "process failed" and e.service == "app:crash" then traces = traces + 1 end
    end
    assert.are.equal(crashes, traces)
  end)

  it("a failed -x process prints its error with a traceback", function()
    local r = h.run("run", APP, "-x", "app:crash_process")
    assert.are.equal(1, r.code)
    assert.truthy(r.stderr:find("app:crash_process: .*crash.lua:3: boom: crashed on purpose\nstack traceback:"), r.stderr)
    assert.truthy(r.stderr:find("in function 'connect'", 1, true), r.stderr)
  end)
end)
