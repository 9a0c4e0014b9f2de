-- Logs under pressure (docs/operating.md, Logs): a stderr that nobody reads never blocks the
-- host (status answers, SIGTERM exits), lost lines are told once the reader is back, and a
-- crash loop of identical failures logs a bounded number of lines with a summary of the rest.
-- The host's stderr here is a FIFO whose reader is a process of the spec's own: `sleep` (which
-- never reads) or `cat` (stopped with SIGSTOP, then let go).
local assert = require("luassert")
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local C = require("spec.lua.control_helper")

local SLOW = C.SLOW
local APPS = (os.getenv("SPEC_DIR") or "spec") .. "/apps/logs"
local read = h.read_if

local function sh(cmd)
  return rt.exit_code(os.execute(cmd))
end

-- Seconds fn() takes, and what it returns.
local function timed(fn)
  local t0 = rt.now()
  local r = fn()
  return rt.now() - t0, r
end

---------------------------------------------------------------------------------------------
-- A host whose stderr is a FIFO (or a file), with its own control socket
---------------------------------------------------------------------------------------------

local Host = {}
Host.__index = Host
local live = {}

-- opts: app (a folder under spec/apps/logs), reader (a shell command reading the FIFO on its
-- stdin, or nil: stderr is a plain file), args (more words after the app).
local function launch(opts)
  local self = setmetatable({ socket = C.tmp(".sock"), config = C.tmp(".yaml"), pidfile = C.tmp(".pid"),
                              rcfile = C.tmp(".rc"), readerpid = C.tmp(".rpid"), err = C.tmp(".log") }, Host)
  live[#live + 1] = self
  local f = assert(io.open(self.config, "w"))
  f:write(("control:\n  socket: %q\n"):format(self.socket))
  f:close()
  local stderr = self.err
  if opts.reader then
    self.fifo = C.tmp(".fifo")
    assert.are.equal(0, sh("mkfifo " .. h.quote(self.fifo)))
    -- the reader opens the FIFO first (its open waits for the host's)
    sh(("(%s <%s & echo $! >%s) >/dev/null 2>&1 </dev/null"):format(opts.reader, h.quote(self.fifo), self.readerpid))
    stderr = self.fifo
  end
  local words = { h.quote(h.steward), "run", h.quote(APPS .. "/" .. opts.app), "--config", h.quote(self.config) }
  for _, a in ipairs(opts.args or {}) do words[#words + 1] = h.quote(a) end
  sh(("(%s >/dev/null 2>%s </dev/null & echo $! >%s; wait $!; echo $? >%s) >/dev/null 2>&1 </dev/null &")
    :format(table.concat(words, " "), h.quote(stderr), self.pidfile, self.rcfile))
  local deadline = rt.now() + C.DEADLINE
  while not (self.pid and (not opts.reader or self.reader)) do
    self.pid = tonumber(read(self.pidfile) or "")
    self.reader = tonumber(read(self.readerpid) or "")
    assert(rt.now() < deadline, "steward or its reader did not start")
    rt.sleep(0.005)
  end
  return self
end

function Host:exited() return tonumber(read(self.rcfile) or "") end

-- `steward status --json`, killed after 10 s: {code, doc, seconds}.
function Host:status()
  local out = C.tmp(".out")
  local seconds, code = timed(function()
    return sh(("timeout -k 1 10 %s status --json --control %s >%s 2>&1 </dev/null")
      :format(h.quote(h.steward), h.quote(self.socket), out))
  end)
  local text = read(out) or ""
  os.remove(out)
  local ok, doc = pcall(C.decode, text)
  return { code = code, doc = ok and doc or nil, seconds = seconds, text = text }
end

-- Polls status until it answers (the host listens) and fn(doc) holds.
function Host:wait_status(what, fn)
  local deadline = rt.now() + C.DEADLINE
  while true do
    local s = self:status()
    if s.code == 0 and s.doc and (not fn or fn(s.doc)) then return s.doc end
    assert(not self:exited(), "steward exited before " .. what)
    assert(rt.now() < deadline, "timed out waiting for " .. what .. ": " .. s.text)
    rt.sleep(0.02)
  end
end

-- Whether one of the host's threads sleeps in a pipe write (the reader is not reading).
function Host:blocked_in_pipe()
  local p = io.popen("cat /proc/" .. self.pid .. "/task/*/wchan 2>/dev/null; echo")
  local text = p:read("*a")
  p:close()
  return text:find("pipe_write", 1, true) ~= nil
end

function Host:wait_blocked()
  local deadline = rt.now() + C.DEADLINE
  while not self:blocked_in_pipe() do
    assert(rt.now() < deadline, "the host never blocked on its stderr pipe")
    rt.sleep(0.02)
  end
end

-- SIGTERM; returns the exit code (nil if none within `seconds`) and how long it took.
function Host:terminate(seconds)
  sh("kill -TERM " .. self.pid)
  local t0 = rt.now()
  while not self:exited() and rt.now() - t0 < seconds do rt.sleep(0.01) end
  return self:exited(), rt.now() - t0
end

function Host:cleanup()
  if self.cleaned then return end
  self.cleaned = true
  if self.pid and not self:exited() then sh("kill -KILL " .. self.pid .. " 2>/dev/null") end
  if self.reader then sh("kill -CONT " .. self.reader .. " 2>/dev/null; kill -KILL " .. self.reader .. " 2>/dev/null") end
  for _, p in ipairs({ self.config, self.pidfile, self.rcfile, self.readerpid, self.err, self.fifo, self.socket }) do
    os.remove(p)
  end
end

local function with_host(opts, fn)
  local host = launch(opts)
  local ok, err = pcall(fn, host)
  host:cleanup()
  if not ok then error(err, 0) end
end

local function lines_of(text)
  local t = {}
  for line in text:gmatch("([^\n]*)\n") do t[#t + 1] = line end
  return t
end

---------------------------------------------------------------------------------------------

describe("a stderr nobody reads", function()
  it("never blocks the host: status answers within 1 s, SIGTERM exits within seconds", function()
    with_host({ app = "stuck", reader = "sleep 300", args = { "--log-format", "json", "--log-level", "debug" } },
      function(host)
        host:wait_status("the host to listen")
        host:wait_blocked() -- the pipe is full: every write to it would wait
        rt.sleep(0.5)       -- chatty and flapper keep logging meanwhile
        for _ = 1, 5 do
          local s = host:status()
          assert.are.equal(0, s.code, s.text)
          assert.is_true(s.seconds < 1 * SLOW, ("status took %.2f s"):format(s.seconds))
          assert.is_nil(host:exited(), "the host died")
        end
        -- at most the 2 s flush timeout, chatty's 500 ms stop_timeout and some slack
        local code, took = host:terminate(6 * SLOW)
        assert(code, ("no exit %.1f s after SIGTERM"):format(took))
        assert.are.equal(0, code)
      end)
  end)

  it("drops lines while its reader is stopped, and says how many once it reads again", function()
    local out = C.tmp(".out")
    with_host({ app = "stuck", reader = "cat >" .. h.quote(out), args = { "--log-format", "json" } }, function(host)
      host:wait_status("the host to listen")
      sh("kill -STOP " .. host.reader)
      host:wait_blocked()
      -- chatty writes about 2.5 MB/s: the 1 MiB buffer fills within a second
      rt.sleep(2)
      local s = host:status()
      assert.are.equal(0, s.code, s.text)
      sh("kill -CONT " .. host.reader)
      local deadline, notice = rt.now() + C.DEADLINE, nil
      while not notice do
        for _, line in ipairs(lines_of(read(out) or "")) do
          if line:find("log lines dropped", 1, true) then notice = C.decode(line) break end
        end
        assert(rt.now() < deadline, "no notice of dropped lines")
        if not notice then rt.sleep(0.05) end
      end
      assert.are.equal("warn", notice.level)
      assert.is_nil(notice.service)
      assert.is_true(notice.dropped > 0)
      assert.are.equal(notice.dropped .. " log lines dropped", notice.msg)
      local code = host:terminate(6 * SLOW)
      assert.are.equal(0, code)
      -- every line whole and JSON, chatty's numbers in order with the gap the notice told
      local last, gaps = 0, 0
      for _, line in ipairs(lines_of(read(out))) do
        local e = C.decode(line)
        if e.msg == "chatter" then
          assert.is_true(e.n > last, line)
          if e.n > last + 1 then gaps = gaps + 1 end
          last = e.n
        end
      end
      assert.is_true(gaps >= 1)
    end)
    os.remove(out)
  end)
end)

describe("a crash loop of identical failures", function()
  it("logs a bounded number of lines, with a summary of the rest", function()
    with_host({ app = "crash_loop" }, function(host)
      local t0 = rt.now()
      -- at least 2 s of crashing with no backoff, and at least 200 runs (a few every ms on an
      -- idle machine; slower under load or sanitizers)
      host:wait_status("200 runs", function(doc)
        for _, s in ipairs(doc.services) do
          if s.id == "app:looper" then return s.attempt >= 200 and rt.now() - t0 >= 2 end
        end
      end)
      local code = host:terminate(C.DEADLINE)
      local text = read(host.err)
      assert.are.equal(0, code, text:sub(-3000))
      local lines = lines_of(text)
      assert.is_true(#lines < 200, #lines .. " lines:\n" .. text:sub(1, 3000))
      -- the summaries: the state changes, the failures with their reason, the logger line
      local function summary(level, message)
        for _, line in ipairs(lines) do
          local n = line:match("^%S+ " .. level .. " +app:looper  (%d+) similar records suppressed  suppressed=%d+ ")
          if n and line:find("message=" .. message, 1, true) then return tonumber(n), line end
        end
      end
      local failed, line = summary("WARN", '"service state" reason="app:looper_process:2: cannot reach the database"')
      assert(failed and failed > 0, text)
      assert.truthy(line:find('reason="app:looper_process:2: cannot reach the database"', 1, true))
      assert(summary("ERROR", '"process failed" error="app:looper_process:2: cannot reach the database"'), text)
      assert(summary("INFO", '"service state"'), text)
      assert(summary("INFO", "connecting"), text)
      -- the first failures are all there, each with its traceback
      local tracebacks = 0
      for _, l in ipairs(lines) do
        if l:find("ERROR app:looper  process failed  ", 1, true) and l:find("traceback=", 1, true) then
          tracebacks = tracebacks + 1
        end
      end
      assert.is_true(tracebacks >= 10, text)
    end)
  end)
end)

teardown(function()
  for _, host in ipairs(live) do host:cleanup() end
end)
