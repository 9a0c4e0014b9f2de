-- `steward logs` end to end (docs/operating.md, "logs"; issue 19): real hosts keep each
-- service's records in a ring and, with log.dir, in rotated files; the client reads them
-- through the control socket. Waits poll until a condition holds or a deadline; the ring's
-- bound is asserted by counting what it returns, not by timing.
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")
local json = C.json

local APP = (os.getenv("SPEC_DIR") or "spec") .. "/apps/logs_cmd/app"
local DATED_TEXT = "^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d%.%d%d%d "
local UTC_TS = "^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%dZ$"

-- busted keeps one `finally` per test, the last one given: every cleanup of a test goes on one
-- list, run last to first.
local deferred = {}
local function defer(fn)
  deferred[#deferred + 1] = fn
  finally(function()
    local list = deferred
    deferred = {}
    for i = #list, 1, -1 do pcall(list[i]) end
  end)
end

local function with_host(opts, fn)
  opts.dir = opts.dir or APP
  local host = C.launch(opts)
  defer(function() host:cleanup() end)
  return fn(host)
end

-- A fresh directory for log.dir.
local function log_dir()
  local d = C.tmp(".logs")
  defer(function() os.execute("rm -rf " .. h.quote(d)) end)
  return d
end

-- `steward logs ARGS... --json` -> the records (decoded), and the result.
local function records(host, ...)
  local r = host:ctl("logs", "--json", ...)
  assert.are.equal(0, r.code, r.stderr)
  local out = {}
  for _, line in ipairs(rt.lines(r.stdout)) do out[#out + 1] = C.decode(line) end
  return out, r
end

local function msgs(recs)
  local out = {}
  for i, e in ipairs(recs) do out[i] = e.msg end
  return out
end

local function listening(host)
  host:wait("the host listening", function() return host:status(true) end)
end

local function wait_done(host, id)
  host:wait_event({ msg = id:match(":(.*)$") .. " done", service = id })
end

describe("steward logs", function()
  it("shows the last N lines of one service, its process tree's included", function()
    with_host({}, function(host)
      wait_done(host, "app:x")
      local r = host:ctl("logs", "app:x", "-n", "3")
      assert.are.equal(0, r.code, r.stderr)
      local lines = rt.lines(r.stdout)
      assert.are.equal(3, #lines, r.stdout)
      for _, l in ipairs(lines) do
        assert.truthy(l:match(DATED_TEXT .. "INFO  app:x  "), l)
      end
      assert.truthy(lines[1]:find("x line  n=10 ", 1, true), lines[1])
      assert.truthy(lines[2]:find("child line  of=x ", 1, true), lines[2])
      assert.truthy(lines[3]:find("x done  pid=", 1, true), lines[3])
      -- the same as JSON records, each one parsable, dated in UTC
      local recs = records(host, "app:x", "-n", "3")
      assert.are.same({ "x line", "child line", "x done" }, msgs(recs))
      for _, e in ipairs(recs) do
        assert.are.equal("app:x", e.service)
        assert.are.equal("info", e.level)
        assert.truthy(e.ts:match(UTC_TS), e.ts)
      end
      assert.are.equal(10, recs[1].n)
      assert.are_not.equal(recs[1].pid, recs[2].pid) -- the child logs under its service
      -- the default is the last 50: all of x's records (states, 10 lines, the child, done)
      local all = records(host, "app:x")
      assert.truthy(#all >= 13 and #all < 50, #all)
      for _, e in ipairs(all) do assert.are.equal("app:x", e.service) end
    end)
  end)

  it("without an id shows every service and the host, interleaved in time order", function()
    with_host({}, function(host)
      wait_done(host, "app:x")
      wait_done(host, "app:y")
      local recs = records(host, "-n", "100000")
      local seen, xs, last_ts = {}, {}, ""
      for _, e in ipairs(recs) do
        seen[e.service or "host"] = true
        assert.truthy(e.ts >= last_ts, "out of order: " .. e.ts .. " after " .. last_ts)
        last_ts = e.ts
        if e.msg == "x line" then xs[#xs + 1] = e.n end
      end
      assert.is_true(seen["app:x"] and seen["app:y"] and seen["app:ticker"] and seen.host)
      assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, xs)
      -- -n counts over all of them: the newest N
      local last = records(host, "-n", "2")
      assert.are.equal(2, #last)
    end)
  end)

  it("--since keeps only the lines of that last stretch of time", function()
    with_host({}, function(host)
      wait_done(host, "app:x")
      local recent = records(host, "app:x", "--since", "1h")
      assert.are.equal("x done", recent[#recent].msg)
      rt.sleep(1.5) -- x logs nothing more; the ticker goes on
      assert.are.same({}, records(host, "app:x", "--since", "1s"))
      local ticks = records(host, "app:ticker", "--since", "1s")
      assert.truthy(#ticks >= 1 and #ticks <= 20 * C.SLOW, #ticks)
      assert.are.equal("tick", ticks[#ticks].msg)
    end)
  end)

  it("-f receives lines logged after it started, until it is killed", function()
    with_host({}, function(host)
      listening(host)
      local out, pidfile = C.tmp(".out"), C.tmp(".pid")
      defer(function() os.remove(out) os.remove(pidfile) end)
      os.execute(("%s logs app:ticker -f -n 0 --json --control %s >%s 2>&1 </dev/null & echo $! >%s")
        :format(h.quote(h.steward), h.quote(host.socket), out, pidfile))
      local pid
      host:wait("the follower's pid", function() pid = tonumber(h.read_if(pidfile) or "") return pid end)
      defer(function() os.execute("kill " .. pid .. " 2>/dev/null") end)
      local got = host:wait("a tick from the follower", function()
        local lines = rt.lines(h.read_if(out) or "")
        return #lines >= 2 and lines
      end)
      for _, l in ipairs(got) do
        local e = C.decode(l)
        assert.are.equal("app:ticker", e.service, l)
        assert.are.equal("tick", e.msg)
      end
      assert.are.equal(C.decode(got[1]).n + 1, C.decode(got[2]).n) -- consecutive: none lost
      assert.are.equal(0, os.execute("kill " .. pid) and 0 or 1)
      -- the host goes on, and answers the next request
      assert.is_true(host:alive())
      assert.truthy(#records(host, "app:ticker", "-n", "1") == 1)
    end)
  end)

  it("a follower that does not keep up loses lines, and is told how many", function()
    with_host({ stderr = "/dev/null" }, function(host)
      listening(host)
      local out, pidfile = C.tmp(".out"), C.tmp(".pid")
      defer(function() os.remove(out) os.remove(pidfile) end)
      -- the follower's stdout is a pipe nobody reads for 2 s: it stops reading the socket
      os.execute(("((%s logs app:flood -f -n 0 --json --control %s & echo $! >%s; wait) | (sleep %g; cat) >%s) >/dev/null 2>&1 </dev/null &")
        :format(h.quote(h.steward), h.quote(host.socket), pidfile, 2 * C.SLOW, out))
      local pid
      host:wait("the follower's pid", function() pid = tonumber(h.read_if(pidfile) or "") return pid end)
      defer(function() os.execute("kill " .. pid .. " 2>/dev/null") end)
      rt.sleep(0.5 * C.SLOW) -- it connects
      assert.are.equal(0, host:ctl("start", "app:flood").code)
      local marker = host:wait("the drop marker", function()
        for _, l in ipairs(rt.lines(h.read_if(out) or "")) do
          local e = C.decode(l)
          if e.msg and e.msg:match("^%d+ lines dropped$") then return e end
        end
      end, 120 * C.SLOW)
      assert.are.equal("warn", marker.level)
      assert.is_nil(marker.service)
      assert.truthy(marker.dropped > 0)
      assert.are.equal(marker.msg, marker.dropped .. " lines dropped")
      assert.is_true(host:alive())
    end)
  end)

  it("writes per-service files, rotating them at log.max_size and keeping log.max_files", function()
    local dir = log_dir()
    with_host({ config = ("log:\n  dir: %q\n  max_size: 64KB\n  max_files: 3\n"):format(dir) }, function(host)
      listening(host)
      local r = host:ctl("start", "app:rot")
      assert.are.equal(0, r.code, r.stderr)
      wait_done(host, "app:x")
      host:wait_event({ msg = "flood done", service = "app:rot" })
      local current = dir .. "/app@rot.log"
      host:wait("the last line in the file", function()
        return (h.read_if(current) or ""):find('"msg":"flood done"', 1, true)
      end)
      local names = h.list(dir)
      local rot = {}
      for _, n in ipairs(names) do if n:match("^app@rot%.log") then rot[#rot + 1] = n end end
      assert.are.same({ "app@rot.log", "app@rot.log.1", "app@rot.log.2" }, rot)
      local firsts = {}
      for i, n in ipairs(rot) do
        local text = h.read(dir .. "/" .. n)
        assert.truthy(#text <= 64 * 1024, n .. ": " .. #text)
        local lines = rt.lines(text)
        for _, l in ipairs(lines) do
          local e = C.decode(l)
          assert.are.equal("app:rot", e.service)
          assert.truthy(e.ts:match(UTC_TS), e.ts)
        end
        firsts[i] = C.decode(lines[1]).n or math.huge
      end
      -- newest in app@rot.log, older in .1, oldest in .2; the first lines are gone
      assert.truthy(firsts[1] > firsts[2] and firsts[2] > firsts[3] and firsts[3] > 1, table.concat(firsts, " "))
      assert.truthy(h.read(dir .. "/host.log"):find('"msg":"control socket"', 1, true))
      assert.truthy(h.read(dir .. "/app@x.log"):find('"msg":"x done"', 1, true))
    end)
  end)

  it("keeps a bounded ring per service: a flood of 100,000 lines keeps the newest, and RSS flat", function()
    with_host({ stderr = "/dev/null" }, function(host)
      listening(host)
      local before = h.proc_sample(host.pid).rss
      assert.are.equal(0, host:ctl("start", "app:flood").code)
      host:wait("the flood done", function()
        local last = records(host, "app:flood", "-n", "1")[1]
        return last and last.msg == "flood done"
      end, 120 * C.SLOW)
      local recs, r = records(host, "app:flood", "-n", "1000000")
      -- what the ring holds: the newest records, at most 1,000 and 256 KB of them (as kept in
      -- memory: their JSON lines are a few bytes longer)
      assert.truthy(#recs > 100 and #recs <= 1000, #recs)
      assert.truthy(#r.stdout <= 1.05 * 256 * 1024, #r.stdout)
      assert.are.equal("flood done", recs[#recs].msg)
      for i = #recs - 1, 1, -1 do assert.are.equal(100000 - (#recs - 1 - i), recs[i].n) end
      -- the flood pushed out only its own lines
      assert.are.equal("x done", records(host, "app:x", "-n", "1")[1].msg)
      -- 100,000 records of 1 KB would be over 100 MB; sanitizers keep freed memory a while
      if C.SLOW == 1 then
        local grown = h.proc_sample(host.pid).rss - before
        assert.truthy(grown < 64 * 1024, "RSS grew by " .. grown .. " kB")
      end
    end)
  end)

  it("answers the protocol request, and refuses logs fields elsewhere", function()
    with_host({}, function(host)
      wait_done(host, "app:y")
      local lines = C.raw(host.socket, '{"cmd":"logs","id":"app:y","lines":2}\n{"cmd":"status","lines":2}\n')
      assert.are.same({ ok = true, lines = 2 }, json.decode(lines[1]))
      assert.are.equal("child line", json.decode(lines[2]).msg)
      assert.are.equal("y done", json.decode(lines[3]).msg)
      assert.are.same({ ok = false, error = '"lines" does not apply to status' }, json.decode(lines[4]))
    end)
  end)

  it("exits 4 for an unknown service and 1 when no host answers", function()
    with_host({}, function(host)
      listening(host)
      local r = host:ctl("logs", "app:nope")
      assert.are.equal(4, r.code)
      assert.are.equal('steward logs: no service "app:nope"\n', r.stderr)
    end)
    local r = h.run("logs", "--control", C.tmp(".sock"))
    assert.are.equal(1, r.code)
    assert.truthy(r.stderr:find("no host is listening on", 1, true), r.stderr)
  end)

  it("refuses its options elsewhere and bad values", function()
    local r = h.run("status", "-n", "3")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("option -n does not apply to status", 1, true), r.stderr)
    r = h.run("stop", "app:x", "-f")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find("option -f does not apply to stop", 1, true), r.stderr)
    r = h.run("logs", "-n", "many")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find('-n needs a whole number of lines (0 to 1000000), not "many"', 1, true), r.stderr)
    r = h.run("logs", "--since", "yesterday")
    assert.are.equal(2, r.code)
    assert.truthy(r.stderr:find('--since needs a duration (5m, 1h, 30s), not "yesterday"', 1, true), r.stderr)
  end)
end)
