-- A running `steward run APP --log-format json` for end-to-end specs, and readers of its JSON
-- event log: launch it in the background, wait on its log for what must happen (polling,
-- never sleep-and-hope), send signals, and assert order and counts. Shared by the supervisor,
-- group and reload specs.
local assert = require("luassert")
local h = require("spec.lua.steward_helper")
local rt = require("spec.lua.runtime_helper")
local ok_cjson, cjson = pcall(require, "cjson")
local json = ok_cjson and cjson or require("dkjson")

local SPEC = os.getenv("SPEC_DIR") or "spec"
-- Under sanitizers (STEWARD_SLOW > 1) everything runs several times slower: upper timing
-- bounds and deadlines widen by that factor, and RSS is not compared (ASan keeps freed memory).
local SLOW = tonumber(os.getenv("STEWARD_SLOW") or "") or 1
local DEADLINE = 15 * SLOW -- seconds for any one wait; the machine may be loaded

local read = h.read_if

-- "2026-01-02T03:04:05.678Z" -> seconds since midnight (ms resolution).
local function ts_seconds(ts)
  local hh, mm, ss = ts:match("T(%d+):(%d+):([%d.]+)Z$")
  return tonumber(hh) * 3600 + tonumber(mm) * 60 + tonumber(ss)
end

---------------------------------------------------------------------------------------------
-- A running host
---------------------------------------------------------------------------------------------

local Host = {}
Host.__index = Host

local live = {} -- hosts to kill if a spec fails before they exit

-- Starts `steward run APP --log-format json` in the background.
-- `args`: more words for the command line (already quoted).
local function launch(app, dir, args)
  local self = setmetatable({
    app = app, err = os.tmpname(), pidfile = os.tmpname(), rcfile = os.tmpname(),
    events = {}, offset = 0, partial = "", t0 = nil,
  }, Host)
  os.remove(self.rcfile)
  local cmd = ("(%s run %s --log-format json" .. (args and " " .. args or "") .. " >/dev/null 2>%s </dev/null & echo $! >%s; wait $!; echo $? >%s) " ..
               ">/dev/null 2>&1 </dev/null &"):format(h.quote(h.steward), h.quote(dir or (SPEC .. "/apps/supervisor/" .. app)),
                                                      self.err, self.pidfile, self.rcfile)
  os.execute(cmd)
  local deadline = rt.now() + DEADLINE
  while not self.pid and rt.now() < deadline do
    self.pid = tonumber(read(self.pidfile) or "")
    if not self.pid then rt.sleep(0.005) end
  end
  assert(self.pid, "steward did not start")
  live[#live + 1] = self
  return self
end

function Host:alive()
  return read("/proc/" .. self.pid .. "/status") ~= nil and not read(self.rcfile)
end

-- Parses the log lines written since the last call; returns the list of all events so far.
-- Each event is the decoded JSON object plus `t` (seconds since the first event) and `i`.
function Host:poll()
  local f = io.open(self.err, "rb")
  if not f then return self.events end
  f:seek("set", self.offset)
  local chunk = f:read("*a") or ""
  f:close()
  self.offset = self.offset + #chunk
  local text = self.partial .. chunk
  local last = 0
  for line, stop in text:gmatch("([^\n]*)\n()") do
    last = stop - 1
    if line:sub(1, 1) == "{" then
      local ok, e = pcall(json.decode, line)
      assert(ok and type(e) == "table", "not a JSON line: " .. line)
      local s = ts_seconds(e.ts)
      self.t0 = self.t0 or s
      local t = s - self.t0
      if t < -43200 then t = t + 86400 end -- past midnight
      e.t = t
      e.i = #self.events + 1
      self.events[#self.events + 1] = e
    else
      self.events[#self.events + 1] = { msg = "(text)", text = line, i = #self.events + 1, t = 0 }
    end
  end
  self.partial = text:sub(last + 1)
  return self.events
end

function Host:log_text()
  return read(self.err) or ""
end

-- Polls until fn(events) returns a truthy value, which it returns; fails with the log after
-- the deadline or when the host exits first.
function Host:wait(what, fn, seconds)
  local deadline = rt.now() + (seconds or DEADLINE)
  while true do
    local r = fn(self:poll())
    if r then return r end
    if not self:alive() then
      r = fn(self:poll())
      if r then return r end
      error(("%s: steward exited before %s\n%s"):format(self.app, what, self:log_text()), 2)
    end
    if rt.now() > deadline then
      error(("%s: timed out waiting for %s\n%s"):format(self.app, what, self:log_text()), 2)
    end
    rt.sleep(0.005)
  end
end

-- Waits until each of the services has logged msg; returns {service id = its last such event}.
function Host:wait_each(msg, services)
  return self:wait(msg .. " from " .. table.concat(services, ", "), function(events)
    local got = {}
    for _, ev in ipairs(events) do
      if ev.msg == msg and ev.service then got[ev.service] = ev end
    end
    for _, id in ipairs(services) do
      if not got[id] then return nil end
    end
    return got
  end)
end

-- The address a server logged ("listening": the HTTP server, net listeners), of service if
-- given, once it did.
function Host:address(service)
  return self:wait((service or "a server") .. " listening", function(events)
    for _, e in ipairs(events) do
      if e.msg == "listening" and (not service or e.service == service) then return e.address end
    end
  end)
end

-- Lets the host run for a while (to see that nothing more happens); it must stay alive.
function Host:hold(seconds)
  local t_end = rt.now() + seconds
  self:wait(("%g s more"):format(seconds), function() return rt.now() >= t_end end)
end

function Host:signal(sig)
  os.execute("kill -" .. sig .. " " .. self.pid .. " 2>/dev/null")
  self.signalled = self.signalled or rt.now()
end

-- Waits for the host to exit; returns its exit code and the seconds since the first signal.
function Host:wait_exit(seconds)
  local deadline = rt.now() + (seconds or DEADLINE)
  local code
  while true do
    code = tonumber(read(self.rcfile) or "")
    if code then break end
    if rt.now() > deadline then
      error(("%s: steward did not exit\n%s"):format(self.app, self:log_text()), 2)
    end
    rt.sleep(0.005)
  end
  local took = self.signalled and rt.now() - self.signalled
  self:poll()
  self.code = code
  return code, took
end

function Host:cleanup()
  if self.cleaned then return end
  self.cleaned = true
  if self:alive() then os.execute("kill -KILL " .. self.pid .. " 2>/dev/null") end
  os.remove(self.err)
  os.remove(self.pidfile)
  os.remove(self.rcfile)
end

-- SIGTERM, then the host must exit 0 with a final "stopped" line.
function Host:stop()
  self:signal("TERM")
  local code = self:wait_exit()
  assert.are.equal(0, code, self:log_text())
  local last = self.events[#self.events]
  assert.are.equal("stopped", last.msg, self:log_text())
  return self.events
end

-- Runs fn(host) with a freshly launched app; the host is killed and its files removed after.
local function with_app(app, fn, dir, args)
  local host = launch(app, dir, args)
  local ok, err = pcall(fn, host)
  host:cleanup()
  if not ok then error(err, 0) end
  return err
end

---------------------------------------------------------------------------------------------
-- Reading the event log
---------------------------------------------------------------------------------------------

local function id(name) return name:find(":", 1, true) and name or "app:" .. name end

-- The "service state" events of a service, in order.
local function states(events, name)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == "service state" and e.service == id(name) then out[#out + 1] = e end
  end
  return out
end

-- The list of state names of a service, in order.
local function state_names(events, name)
  local out = {}
  for _, e in ipairs(states(events, name)) do out[#out + 1] = e.state end
  return out
end

local function count(events, name, state)
  local n = 0
  for _, e in ipairs(states(events, name)) do
    if e.state == state then n = n + 1 end
  end
  return n
end

-- The nth (default 1st; -1 the last) state event of a service in this state, or nil.
local function find_state(events, name, state, nth)
  local list = {}
  for _, e in ipairs(states(events, name)) do
    if e.state == state then list[#list + 1] = e end
  end
  nth = nth or 1
  if nth < 0 then nth = #list + 1 + nth end
  return list[nth]
end

-- Logger lines (msg) of a service, in order.
local function logs(events, name, msg)
  local out = {}
  for _, e in ipairs(events) do
    if e.msg == msg and e.service == id(name) then out[#out + 1] = e end
  end
  return out
end

local function last_state(events, name)
  local s = states(events, name)
  return s[#s]
end

-- The first host-level event with this msg (no service).
local function host_event(events, msg)
  for _, e in ipairs(events) do
    if e.msg == msg and not e.service then return e end
  end
end

-- Asserts that event a comes before event b in the log.
local function before(a, b, text)
  assert(a, "missing event\n" .. (text or ""))
  assert(b, "missing event\n" .. (text or ""))
  assert(a.i < b.i, ("expected %s %s (line %d) before %s %s (line %d)\n%s"):format(
    a.service or a.msg, a.state or "", a.i, b.service or b.msg, b.state or "", b.i, text or ""))
end

local function near(expected, actual, lo, hi, what)
  hi = hi * SLOW
  assert(actual >= expected - lo and actual <= expected + hi,
    ("%s: %.3f s, expected %.3f s (-%.3f/+%.3f)"):format(what, actual, expected, lo, hi))
end

local sample = h.proc_sample

local function cleanup_all()
  for _, host in ipairs(live) do host:cleanup() end
end

return {
  SLOW = SLOW, DEADLINE = DEADLINE, launch = launch, with_app = with_app, cleanup_all = cleanup_all,
  id = id, states = states, state_names = state_names, count = count, find_state = find_state,
  logs = logs, last_state = last_state, host_event = host_event, before = before, near = near,
}
