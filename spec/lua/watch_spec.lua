-- `steward run --watch` end to end (docs/supervision.md "Watch mode"): a copy of
-- spec/apps/liveness/watch in a temp directory, edited while it runs; what the host did is read
-- from its JSON event log.
local h = require("spec.lua.steward_helper")
local hh = require("spec.lua.host_helper")
local rt = require("spec.lua.runtime_helper")
local states, count, logs = hh.states, hh.count, hh.logs

local SPEC = os.getenv("SPEC_DIR") or "spec"
local TEMPLATE = SPEC .. "/apps/liveness/watch"

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function worker(body)
  return "return function()\n  " .. body .. "\n  local events = process.events()\n" ..
         "  repeat local e = events:receive() until e.kind == process.event.CANCEL\nend\n"
end

-- Host events (no service) with this msg.
local function host_events(ev, msg, from)
  local out = {}
  for _, e in ipairs(ev) do
    if e.msg == msg and not e.service and e.i > (from or 0) then out[#out + 1] = e end
  end
  return out
end

local function versions(ev)
  local out = {}
  for _, e in ipairs(logs(ev, "worker", "version")) do out[#out + 1] = e.v end
  return out
end

describe("run --watch", function()
  teardown(hh.cleanup_all)

  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("cp -r " .. h.quote(TEMPLATE) .. " " .. h.quote(dir)))
  end)
  after_each(function() os.execute("rm -rf " .. h.quote(dir)) end)

  it("applies an edit within a second, ignores broken edits and dot files, holds a crash until the next change", function()
    hh.with_app("watch", function(host)
      local ev = host:wait("version 1", function(e) return #logs(e, "worker", "version") == 1 and e end)
      local app_yaml = h.read(dir .. "/app.yaml")

      -- an edit of a Lua file: applied within a second
      local t0 = rt.now()
      write(dir .. "/src/worker.lua", worker('logger.info("version", { v = 2 })'))
      host:wait("version 2", function(e) return #logs(e, "worker", "version") == 2 end)
      assert.truthy(rt.now() - t0 < 1.0 * hh.SLOW, ("took %.3f s"):format(rt.now() - t0))

      -- dot files and other files: nothing
      ev = host:poll()
      local mark = #ev
      write(dir .. "/.scratch.yaml", "not: [ valid")
      write(dir .. "/notes.txt", "hello")
      host:hold(0.6)
      assert.are.equal(0, #host_events(host:poll(), "files changed", mark), host:log_text())

      -- a broken edit: its error logged, nothing changes
      write(dir .. "/app.yaml", app_yaml .. "\nbroken: [\n")
      ev = host:wait("rejected", function(e) return #host_events(e, "reload rejected: nothing changed", mark) == 1 and e end)
      assert.are.equal(1, #host_events(ev, "reload error", mark), host:log_text())
      write(dir .. "/app.yaml", app_yaml)
      ev = host:wait("reloaded", function(e) return #host_events(e, "reloaded", mark) == 1 and e end)
      assert.are.equal(0, host_events(ev, "reloaded", mark)[1].changed, host:log_text())
      assert.are.equal(2, count(ev, "worker", "running"), host:log_text()) -- untouched

      -- a Lua edit that crashes the service: failed once, then it waits for the next change
      write(dir .. "/src/worker.lua", worker('error("broken by an edit")'))
      ev = host:wait("waiting for a change", function(e) return #logs(e, "worker", "waiting for a change") == 1 and e end)
      host:hold(1.0)
      ev = host:poll()
      assert.are.equal(1, count(ev, "worker", "failed"), host:log_text())
      assert.are.equal(3, count(ev, "worker", "starting"), host:log_text())
      local failed = hh.find_state(ev, "worker", "failed")
      assert.truthy(failed.reason:find("broken by an edit", 1, true), host:log_text())
      assert.is_nil(failed.next_attempt, host:log_text())

      -- the fix starts it again
      write(dir .. "/src/worker.lua", worker('logger.info("version", { v = 3 })'))
      ev = host:wait("version 3", function(e) return #logs(e, "worker", "version") == 3 and e end)
      assert.are.same({ 1, 2, 3 }, versions(ev), host:log_text())

      -- a new directory is watched: a second edit in it is seen too
      mark = #ev
      os.execute("mkdir " .. h.quote(dir .. "/sub"))
      write(dir .. "/sub/extra.lua", "return 1\n")
      host:wait("sub changed", function(e) return #host_events(e, "files changed", mark) >= 1 end)
      host:hold(0.4)
      mark = #host:poll()
      write(dir .. "/sub/extra.lua", "return 2\n")
      ev = host:wait("sub/extra.lua", function(e)
        local c = host_events(e, "files changed", mark)
        return #c == 1 and c[1].file == "sub/extra.lua" and e
      end)

      ev = host:stop()
      local text = host:log_text()
      assert.are.same({ "starting", "running", "stopping", "stopped" }, hh.state_names(ev, "steady"), text)
      assert.are.equal(1, #host_events(ev, "watching"), text)
    end, dir, "--watch")
  end)

  it("--watch is a run option only, and not with -x", function()
    local r = h.run("check", dir, "--watch")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("option --watch does not apply to check", 1, true), r.stderr)
    r = h.run("run", dir, "--watch", "-x", "app:worker_main")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("--watch reloads an app: it does not apply to -x", 1, true), r.stderr)
  end)
end)
